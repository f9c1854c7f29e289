package olap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/insightd/insightd/olap/chdb"
	"github.com/insightd/insightd/querybuilder/chsql"
)

// Embedded is the chDB backend: ClickHouse running inside this process on
// a data directory. A chDB connection runs one statement at a time, so the
// backend keeps a pool of connections to the same directory (they share
// one engine) and a separate control connection that issues KILL QUERY,
// which is how a running statement is stopped: chDB's own stream cancel
// waits for the statement it should interrupt.
type Embedded struct {
	lib     *chdb.Lib
	log     *slog.Logger
	timeout time.Duration
	path    string
	schema  chsql.Schema
	events  Table // schema.Events, as ingestion writes it

	// pool holds the connections analyses run on; reserved those kept for
	// statements without a project, which may also take a free analysis
	// connection. fair limits each project's analyses.
	pool     chan *chdb.Conn
	reserved chan *chdb.Conn
	fair     *fairShare
	control  *chdb.Conn
	ctlMu    sync.Mutex

	mu  sync.Mutex // guards all
	all []*chdb.Conn

	closeOnce sync.Once
}

// chDB keeps one data directory per process; a second Embedded in the same
// process must use the same one.
var (
	embeddedMu   sync.Mutex
	embeddedPath string
)

// engineArgs pin what must not depend on the machine: the session time
// zone (so DateTime values and toDate() mean UTC on every backend) and the
// JSON output of 64-bit integers (quoted, decoded exactly).
var engineArgs = []string{
	"--session_timezone=UTC",
	"--output_format_json_quote_64bit_integers=1",
	"--output_format_json_quote_denormals=1",
}

// OpenEmbedded loads libchdb.so and opens the pool on cfg.DataDir.
func OpenEmbedded(cfg Config, log *slog.Logger) (*Embedded, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("olap data directory: %w", err)
	}
	embeddedMu.Lock()
	defer embeddedMu.Unlock()
	if embeddedPath != "" && embeddedPath != cfg.DataDir {
		return nil, fmt.Errorf("chDB is already open on %s in this process; it cannot open %s too", embeddedPath, cfg.DataDir)
	}
	lib, err := chdb.Load(cfg.ChDBLib)
	if err != nil {
		return nil, err
	}
	e := &Embedded{lib: lib, log: log, timeout: cfg.QueryTimeout, path: cfg.DataDir, pool: make(chan *chdb.Conn, cfg.Connections),
		reserved: make(chan *chdb.Conn, reservedConnections), fair: newFairShare(cfg.perProject(), cfg.queueWait())}
	e.schema = cfg.schema()
	e.events = tablesOf(e.schema).events
	for i := 0; i <= cfg.Connections+reservedConnections; i++ {
		c, err := lib.Connect(cfg.DataDir, engineArgs...)
		if err != nil {
			e.closeConns()
			return nil, err
		}
		e.all = append(e.all, c)
		if i == 0 {
			e.control = c
			continue
		}
		if i <= reservedConnections {
			e.reserved <- c
			continue
		}
		e.pool <- c
	}
	embeddedPath = cfg.DataDir
	log.Info("embedded ClickHouse ready", "chdb_version", lib.Version(), "path", cfg.DataDir, "connections", cfg.Connections)
	return e, nil
}

// Backend implements Engine.
func (e *Embedded) Backend() string { return "chdb" }

// Schema implements Engine.
func (e *Embedded) Schema() chsql.Schema { return e.schema }

// Version is the embedded engine's version.
func (e *Embedded) Version() string { return e.lib.Version() }

// run borrows a connection, runs fn on it under a query id and kills the
// statement if ctx ends first. The id travels as a leading comment in the
// statement text (it is generated or validated, never user text), because
// chDB has no per-call query id.
func (e *Embedded) run(ctx context.Context, fn func(c *chdb.Conn, tag string) error) error {
	ctx, cancel := withTimeout(ctx, e.timeout)
	defer cancel()
	id := queryID(ctx)
	ctx, call, err := e.fair.calls.admit(ctx, id)
	if err != nil {
		return err
	}
	defer e.fair.calls.finish(call)
	var c *chdb.Conn
	var back chan *chdb.Conn
	if project, ok := projectOf(ctx); ok {
		release, deadline, err := e.fair.acquire(ctx, project)
		if err != nil {
			return err
		}
		defer release()
		// The wait for a connection ends with the queueing time too: two
		// projects holding every connection refuse a third in time.
		if c, err = waitFor(ctx, e.fair, project, deadline, e.pool); err != nil {
			return err
		}
		back = e.pool
	} else {
		select {
		case c = <-e.reserved:
			back = e.reserved
		case c = <-e.pool:
			back = e.pool
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	if err := e.fair.calls.start(call); err != nil {
		back <- c
		return err
	}

	tag := "/* insightd:" + id + " */ "
	// The engine shows a statement with bound parameters in
	// system.processes with the values substituted and the leading
	// comment gone, so a kill finds it by the session's log_comment,
	// which the id (validated: [A-Za-z0-9_-]) is safe to write into.
	if _, err := c.Query("SET log_comment = '"+tagComment(id)+"'", "TSV", nil); err != nil {
		back <- e.renew(c)
		return err
	}
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { e.killUntil(id, done) })
	err = fn(c, tag)
	close(done)
	stop()
	if err != nil {
		// A statement that failed part way (a kill, a runtime error) can
		// leave its partial output in the connection, where chDB would
		// prepend it to the next result: never reuse such a connection.
		back <- e.renew(c)
		return ctxError(ctx, err)
	}
	back <- c
	return ctx.Err()
}

// renew closes c and opens a fresh connection in its place. Should that
// fail, c stays, first drained by a statement whose output is thrown away.
func (e *Embedded) renew(c *chdb.Conn) *chdb.Conn {
	nc, err := e.lib.Connect(e.path, engineArgs...)
	if err != nil {
		e.log.Error("chDB: reopening a connection failed; reusing the old one", "err", err)
		_, _ = c.Query("SELECT 1", "TSV", nil)
		return c
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, x := range e.all {
		if x == c {
			e.all[i] = nc
		}
	}
	c.Close()
	return nc
}

// tagComment is the log_comment of the statements of query id.
func tagComment(id string) string { return "insightd:" + id }

// killUntil kills the statement of query id, again every 25ms until it
// has returned: a kill that lands before the statement registers finds
// nothing.
func (e *Embedded) killUntil(id string, done <-chan struct{}) {
	for {
		if _, err := e.kill(id); err != nil {
			e.log.Warn("kill query", "err", err)
		}
		select {
		case <-done:
			return
		case <-time.After(25 * time.Millisecond):
		}
	}
}

func (e *Embedded) kill(id string) (bool, error) {
	e.ctlMu.Lock()
	defer e.ctlMu.Unlock()
	res, err := e.control.Query(
		"KILL QUERY WHERE Settings['log_comment'] = {tag:String} ASYNC FORMAT TSV", "",
		map[string]string{"tag": escaper.Replace(tagComment(id))})
	if err != nil {
		e.control = e.renew(e.control)
		return false, err
	}
	return len(res.Data) > 0, nil
}

// Cancel implements Engine: a statement queued under id does not start,
// one running is killed (again until it has returned), and one arriving
// within cancelMemory is refused.
func (e *Embedded) Cancel(_ context.Context, id string) (bool, error) {
	if !ValidQueryID(id) {
		return false, nil
	}
	running, stopped := e.fair.calls.cancel(id)
	for _, c := range running {
		go e.killUntil(id, c.done)
	}
	if stopped || len(running) > 0 {
		return true, nil
	}
	return e.kill(id)
}

// Query implements Engine.
func (e *Embedded) Query(ctx context.Context, stmt chsql.Statement) (*Rows, error) {
	return queryOrFallback(ctx, e.log, stmt, e.query)
}

// query runs one statement, not its fallback.
func (e *Embedded) query(ctx context.Context, stmt chsql.Statement) (*Rows, error) {
	params, err := EncodeParams(stmt.Params)
	if err != nil {
		return nil, err
	}
	var rows *Rows
	err = e.run(ctx, func(c *chdb.Conn, tag string) error {
		res, err := c.Query(tag+stmt.SQL, "JSONCompactEachRowWithNamesAndTypes", params)
		if err != nil {
			return err
		}
		observeStatement(ctx, res.StorageRowsRead, res.StorageBytesRead)
		rows, err = decodeJSONCompact(res.Data)
		return err
	})
	return rows, err
}

// Exec implements Engine.
func (e *Embedded) Exec(ctx context.Context, stmt chsql.Statement) error {
	params, err := EncodeParams(stmt.Params)
	if err != nil {
		return err
	}
	return e.run(ctx, func(c *chdb.Conn, tag string) error {
		res, err := c.Query(tag+stmt.SQL, "TSV", params)
		if err == nil {
			observeStatement(ctx, res.StorageRowsRead, res.StorageBytesRead)
		}
		return err
	})
}

// InsertEvents implements Engine. The rows travel as RowBinary data beside
// the INSERT statement, never inside its text.
func (e *Embedded) InsertEvents(ctx context.Context, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	return e.insert(ctx, e.events, len(events), encodeEvents(events))
}

// Insert implements Engine.
func (e *Embedded) Insert(ctx context.Context, t Table, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	data, err := encodeRows(t, rows)
	if err != nil {
		return err
	}
	return e.insert(ctx, t, len(rows), data)
}

func (e *Embedded) insert(ctx context.Context, t Table, n int, data []byte) error {
	return e.run(ctx, func(c *chdb.Conn, tag string) error {
		written, err := c.Insert(tag+t.insertSQL(), "RowBinary", nil, data)
		// Inserts into events also write the sessions and group keys
		// views' rows, inserts into groups the group keys view's (one a
		// row at most).
		wrong := written < uint64(n)
		switch t.name {
		case e.schema.Events:
		case e.schema.Groups:
			wrong = wrong || written > 2*uint64(n)
		default:
			wrong = written != uint64(n)
		}
		if err == nil && wrong {
			err = fmt.Errorf("inserted %d of %d rows into %s", written, n, t.name)
		}
		return err
	})
}

// Ping implements Engine.
func (e *Embedded) Ping(ctx context.Context) error {
	rows, err := e.Query(ctx, chsql.Statement{SQL: "SELECT 1"})
	if err != nil {
		return err
	}
	if len(rows.Data) != 1 {
		return errors.New("chDB ping: unexpected answer")
	}
	return nil
}

// Close implements Engine. The library stays loaded (chDB cannot be
// unloaded); the process may open the same directory again.
func (e *Embedded) Close() error {
	e.closeOnce.Do(func() {
		embeddedMu.Lock()
		defer embeddedMu.Unlock()
		// Take every pooled connection back so none is in use while closing.
		for range cap(e.pool) {
			<-e.pool
		}
		for range cap(e.reserved) {
			<-e.reserved
		}
		e.closeConns()
		embeddedPath = ""
	})
	return nil
}

func (e *Embedded) closeConns() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.all {
		c.Close()
	}
	e.all = nil
}
