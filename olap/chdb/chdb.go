// Package chdb binds libchdb.so (ClickHouse as a library) with purego, so the
// binary needs no cgo. It exposes the few calls insightd uses: connect,
// parameterised queries, streaming inserts and result access. It knows
// nothing of insightd's tables; olap builds the engine on top of it.
//
// The C API is chDB's chdb.h. A process loads the library once and may open
// several connections to the same data path; each connection runs one
// statement at a time, and different connections run concurrently.
package chdb

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Lib is a loaded libchdb.so.
type Lib struct {
	path string

	version                 func() string
	setSignalHandlers       func(enabled int32)
	connect                 func(argc int32, argv **byte) *uintptr
	closeConn               func(conn *uintptr)
	queryWithParamsN        func(conn uintptr, q *byte, qLen uintptr, f *byte, fLen uintptr, names **byte, nameLens *uintptr, values **byte, valueLens *uintptr, n uintptr) uintptr
	resultBuffer            func(r uintptr) *byte
	resultLength            func(r uintptr) uintptr
	resultError             func(r uintptr) string
	resultElapsed           func(r uintptr) float64
	resultRowsRead          func(r uintptr) uint64
	resultRowsWritten       func(r uintptr) uint64
	resultStorageRowsRead   func(r uintptr) uint64
	resultStorageBytesRead  func(r uintptr) uint64
	destroyQueryResult      func(r uintptr)
	streamInsertWithParamsN func(conn uintptr, q *byte, qLen uintptr, f *byte, fLen uintptr, names **byte, nameLens *uintptr, values **byte, valueLens *uintptr, n uintptr) uintptr
	streamAppend            func(s uintptr, data *byte, n uintptr) int32
	streamDone              func(s uintptr) uintptr
	streamInsertError       func(s uintptr) string
	destroyInsertStream     func(s uintptr)
	streamQueryWithParamsN  func(conn uintptr, q *byte, qLen uintptr, f *byte, fLen uintptr, names **byte, nameLens *uintptr, values **byte, valueLens *uintptr, n uintptr) uintptr
	streamFetchResult       func(conn uintptr, r uintptr) uintptr
	streamCancelQuery       func(conn uintptr, r uintptr)
}

var (
	loadMu sync.Mutex
	loaded = map[string]*Lib{}
)

// Load opens libchdb.so at path once per process (later calls with the same
// path return the same Lib) and turns off chDB's own signal handlers, so
// the Go runtime keeps SIGINT/SIGTERM for graceful shutdown.
func Load(path string) (*Lib, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	if l, ok := loaded[path]; ok {
		return l, nil
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("load chDB library %s: %w (run `make run` or scripts/setup.sh to fetch it, or set INSIGHTD_CHDB_LIB)", path, err)
	}
	l := &Lib{path: path}
	syms := []struct {
		fn   any
		name string
	}{
		{&l.version, "chdb_version"},
		{&l.setSignalHandlers, "chdb_set_signal_handlers_enabled"},
		{&l.connect, "chdb_connect"},
		{&l.closeConn, "chdb_close_conn"},
		{&l.queryWithParamsN, "chdb_query_with_params_n"},
		{&l.resultBuffer, "chdb_result_buffer"},
		{&l.resultLength, "chdb_result_length"},
		{&l.resultError, "chdb_result_error"},
		{&l.resultElapsed, "chdb_result_elapsed"},
		{&l.resultRowsRead, "chdb_result_rows_read"},
		{&l.resultRowsWritten, "chdb_result_rows_written"},
		{&l.resultStorageRowsRead, "chdb_result_storage_rows_read"},
		{&l.resultStorageBytesRead, "chdb_result_storage_bytes_read"},
		{&l.destroyQueryResult, "chdb_destroy_query_result"},
		{&l.streamInsertWithParamsN, "chdb_stream_insert_with_params_n"},
		{&l.streamAppend, "chdb_stream_append"},
		{&l.streamDone, "chdb_stream_done"},
		{&l.streamInsertError, "chdb_stream_insert_error"},
		{&l.destroyInsertStream, "chdb_destroy_insert_stream"},
		{&l.streamQueryWithParamsN, "chdb_stream_query_with_params_n"},
		{&l.streamFetchResult, "chdb_stream_fetch_result"},
		{&l.streamCancelQuery, "chdb_stream_cancel_query"},
	}
	for _, s := range syms {
		addr, err := purego.Dlsym(h, s.name)
		if err != nil {
			return nil, fmt.Errorf("chDB library %s lacks %s (need chDB 26.x): %w", path, s.name, err)
		}
		purego.RegisterFunc(s.fn, addr)
	}
	l.setSignalHandlers(0)
	loaded[path] = l
	return l, nil
}

// Version is the library's version string, e.g. "26.7.2".
func (l *Lib) Version() string { return l.version() }

// Conn is one chDB connection. It runs one statement at a time; callers
// serialise their use of a Conn (olap keeps a pool).
type Conn struct {
	lib    *Lib
	handle *uintptr // chdb_connection* as returned by chdb_connect
}

// Connect opens a connection on the data directory path ("" = in memory).
// Extra arguments are chDB/ClickHouse settings such as "--max_threads=2".
func (l *Lib) Connect(path string, args ...string) (*Conn, error) {
	argv := []string{"insightd"}
	if path != "" {
		argv = append(argv, "--path="+path)
	}
	argv = append(argv, args...)
	cargs := make([]*byte, len(argv))
	keep := make([][]byte, len(argv))
	for i, a := range argv {
		keep[i] = append([]byte(a), 0)
		cargs[i] = &keep[i][0]
	}
	h := l.connect(int32(len(cargs)), &cargs[0])
	runtime.KeepAlive(keep)
	if h == nil || *h == 0 {
		return nil, fmt.Errorf("chDB: cannot open a connection on %q (is another process using that directory?)", path)
	}
	return &Conn{lib: l, handle: h}, nil
}

func (c *Conn) conn() uintptr { return *c.handle }

// Close closes the connection.
func (c *Conn) Close() {
	if c.handle != nil {
		c.lib.closeConn(c.handle)
		c.handle = nil
	}
}

// Result is a query's output, copied out of chDB's buffer.
type Result struct {
	Data        []byte
	Elapsed     float64
	RowsRead    uint64
	RowsWritten uint64
	// StorageRowsRead and StorageBytesRead are what the statement read
	// from tables (RowsRead counts the rows of its output).
	StorageRowsRead, StorageBytesRead uint64
}

// Query runs sql with named parameters (already in ClickHouse's escaped
// text form, see olap's encoder) and returns the output in format.
// Parameters are bound by the engine, never interpolated into the text.
func (c *Conn) Query(sql, format string, params map[string]string) (*Result, error) {
	q := []byte(sql)
	f := []byte(format)
	names, nameLens, values, valueLens, keep := paramArrays(params)
	r := c.lib.queryWithParamsN(c.conn(), ptr(q), uintptr(len(q)), ptr(f), uintptr(len(f)),
		first(names), first(nameLens), first(values), first(valueLens), uintptr(len(names)))
	runtime.KeepAlive(q)
	runtime.KeepAlive(f)
	runtime.KeepAlive(keep)
	if r == 0 {
		return nil, errors.New("chDB: query returned no result")
	}
	defer c.lib.destroyQueryResult(r)
	if e := c.lib.resultError(r); e != "" {
		return nil, parseError(e)
	}
	res := &Result{
		Elapsed:     c.lib.resultElapsed(r),
		RowsRead:    c.lib.resultRowsRead(r),
		RowsWritten: c.lib.resultRowsWritten(r),

		StorageRowsRead:  c.lib.resultStorageRowsRead(r),
		StorageBytesRead: c.lib.resultStorageBytesRead(r),
	}
	if n := c.lib.resultLength(r); n > 0 {
		res.Data = make([]byte, n)
		copy(res.Data, unsafe.Slice(c.lib.resultBuffer(r), n))
	}
	return res, nil
}

// Insert streams data (in format, e.g. "JSONEachRow") into the INSERT
// statement sql (without FORMAT or data). The rows travel apart from the
// SQL text; the insert is all or nothing for what one call sends.
func (c *Conn) Insert(sql, format string, params map[string]string, data []byte) (uint64, error) {
	q := []byte(sql)
	f := []byte(format)
	names, nameLens, values, valueLens, keep := paramArrays(params)
	s := c.lib.streamInsertWithParamsN(c.conn(), ptr(q), uintptr(len(q)), ptr(f), uintptr(len(f)),
		first(names), first(nameLens), first(values), first(valueLens), uintptr(len(names)))
	runtime.KeepAlive(q)
	runtime.KeepAlive(f)
	runtime.KeepAlive(keep)
	defer c.lib.destroyInsertStream(s)
	if e := c.lib.streamInsertError(s); e != "" {
		return 0, parseError(e)
	}
	if len(data) > 0 {
		if st := c.lib.streamAppend(s, &data[0], uintptr(len(data))); st != 0 {
			if e := c.lib.streamInsertError(s); e != "" {
				return 0, parseError(e)
			}
			return 0, errors.New("chDB: insert stream refused data")
		}
	}
	r := c.lib.streamDone(s)
	if r == 0 {
		return 0, errors.New("chDB: insert returned no result")
	}
	defer c.lib.destroyQueryResult(r)
	if e := c.lib.resultError(r); e != "" {
		return 0, parseError(e)
	}
	return c.lib.resultRowsWritten(r), nil
}

// Exception is an error raised by the ClickHouse engine, with its numeric
// code (see ClickHouse's ErrorCodes.cpp) so callers can tell errors apart
// without matching their text.
type Exception struct {
	Code    int32
	Name    string // e.g. QUERY_WAS_CANCELLED
	Message string
}

func (e *Exception) Error() string { return e.Message }

// The engine reports "Code: 394. DB::Exception: ... (QUERY_WAS_CANCELLED)".
var (
	codeRe = regexp.MustCompile(`Code: (\d+)\.`)
	nameRe = regexp.MustCompile(`\(([A-Z][A-Z0-9_]+)\)(?: \(version [^)]*\))?\s*$`)
)

func parseError(msg string) error {
	e := &Exception{Message: msg}
	if m := codeRe.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 32)
		e.Code = int32(n)
	}
	if m := nameRe.FindStringSubmatch(msg); m != nil {
		e.Name = m[1]
	}
	return e
}

func paramArrays(params map[string]string) (names []*byte, nameLens []uintptr, values []*byte, valueLens []uintptr, keep [][]byte) {
	for k, v := range params {
		kb, vb := []byte(k), []byte(v)
		keep = append(keep, kb, vb)
		names = append(names, ptr(kb))
		nameLens = append(nameLens, uintptr(len(kb)))
		values = append(values, ptr(vb))
		valueLens = append(valueLens, uintptr(len(vb)))
	}
	return
}

// ptr returns a pointer to b's data, or to a static byte for an empty b
// (the C side reads zero bytes from it).
func ptr(b []byte) *byte {
	if len(b) == 0 {
		return &zero
	}
	return &b[0]
}

var zero byte

func first[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}
