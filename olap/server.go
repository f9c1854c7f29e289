package olap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// Server is the ClickHouse server backend: a pool of native-protocol
// connections (clickhouse-go) to a server or cluster. It runs the same SQL
// and parameters as the embedded backend and returns rows with the same Go
// types (see Rows).
type Server struct {
	conn    driver.Conn
	log     *slog.Logger
	timeout time.Duration
	schema  chsql.Schema
	events  Table // schema.Events, as ingestion writes it
	// fair limits each project's analyses (fairness.go).
	fair *fairShare

	closeOnce sync.Once
	closeErr  error
}

// OpenServer connects to cfg.ClickHouseURL
// (clickhouse://user:pass@host:9000/db?dial_timeout=5s&...) and runs one
// query, so that a wrong address, password, database or a server too old
// for the settings insightd needs fails at start, not on the first request.
func OpenServer(ctx context.Context, cfg Config, log *slog.Logger) (*Server, error) {
	if cfg.ClickHouseURL == "" {
		return nil, errors.New("CLICKHOUSE_URL is empty")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts, err := clickhouse.ParseDSN(cfg.ClickHouseURL)
	if err != nil {
		// net/url masks the password in the URL it quotes.
		return nil, fmt.Errorf("CLICKHOUSE_URL is not a ClickHouse address: %w", err)
	}
	if opts.Settings == nil {
		opts.Settings = clickhouse.Settings{}
	}
	// The session time zone decides how DateTime values without a zone and
	// toDate()/toStartOfDay() read; the embedded backend pins it to UTC, so
	// the server must too, whatever its own timezone setting says. The
	// native protocol sends these settings with every query, so every
	// pooled connection gets them.
	opts.Settings["session_timezone"] = "UTC"
	if cfg.Cluster != "" {
		clusterSettings(opts.Settings)
	}

	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open ClickHouse server %s: %w", strings.Join(opts.Addr, ","), err)
	}
	s := &Server{conn: conn, log: log, timeout: cfg.QueryTimeout, fair: newFairShare(cfg.perProject(), cfg.queueWait())}
	s.schema = cfg.schema()
	s.events = tablesOf(s.schema).events
	rows, err := s.Query(ctx, chsql.Statement{SQL: "SELECT version() AS version, timezone() AS tz"})
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("ClickHouse server %s: %w", strings.Join(opts.Addr, ","), err)
	}
	version, tz := "", ""
	if len(rows.Data) == 1 && len(rows.Data[0]) == 2 {
		version, _ = rows.Data[0][0].(string)
		tz, _ = rows.Data[0][1].(string)
	}
	log.Info("ClickHouse server ready", "addr", strings.Join(opts.Addr, ","), "database", opts.Auth.Database,
		"version", version, "session_timezone", tz)
	return s, nil
}

// Backend implements Engine.
func (s *Server) Backend() string { return "clickhouse" }

// Schema implements Engine.
func (s *Server) Schema() chsql.Schema { return s.schema }

// queryContext carries the query id (so Cancel and system.query_log can
// find the statement) and the encoded parameters, which clickhouse-go
// sends beside the SQL text, never inside it.
func queryContext(ctx context.Context, params map[string]string) context.Context {
	opts := []clickhouse.QueryOption{clickhouse.WithQueryID(queryID(ctx))}
	if len(params) > 0 {
		opts = append(opts, clickhouse.WithParameters(clickhouse.Parameters(params)))
	}
	return clickhouse.Context(ctx, opts...)
}

// run runs fn under the statement's query id: registered (so Cancel
// finds it queued), in its project's fair share, and killed on the server
// with KILL QUERY by that id when ctx ends first (the caller hung up, the
// query timeout passed, a cancel). The driver's cancel packet on a context
// that ends only stops the server reading its output: the query would run
// on, as far as max_execution_time, where the embedded engine's kill stops
// it at once.
func (s *Server) run(ctx context.Context, fn func(ctx context.Context) error) error {
	ctx, cancel := withTimeout(ctx, s.timeout)
	defer cancel()
	id := queryID(ctx)
	ctx, call, err := s.fair.calls.admit(ctx, id)
	if err != nil {
		return err
	}
	defer s.fair.calls.finish(call)
	if project, ok := projectOf(ctx); ok {
		release, _, err := s.fair.acquire(ctx, project)
		if err != nil {
			return err
		}
		defer release()
	}
	if err := s.fair.calls.start(call); err != nil {
		return err
	}
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { s.killUntil(id, done) })
	err = fn(WithQueryID(ctx, id))
	close(done)
	stop()
	return err
}

// killUntil kills the statement of query id on the server, again every
// 25ms while it is under way here or still listed there (KILL ... ASYNC
// answers before the statement has stopped), for at most killFor.
func (s *Server) killUntil(id string, done <-chan struct{}) {
	until := time.Now().Add(killFor)
	for time.Now().Before(until) {
		found, err := s.kill(id)
		if err != nil {
			s.log.Warn("kill query", "query_id", id, "err", err)
		}
		select {
		case <-done:
			if !found {
				return
			}
		default:
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// killFor bounds how long a kill is repeated: a statement that outlives
// it is stopped by max_execution_time.
const killFor = 5 * time.Second

// kill sends KILL QUERY for the statements of query id, the id a bound
// parameter; found says the server listed one.
func (s *Server) kill(id string) (bool, error) {
	params, err := EncodeParams(map[string]any{"id": id})
	if err != nil {
		return false, err
	}
	// Its own deadline: the statement's context has ended already.
	ctx, cancel := context.WithTimeout(context.Background(), killFor)
	defer cancel()
	if s.schema.Cluster != "" {
		return s.killOnCluster(ctx, id)
	}
	rows, err := s.conn.Query(queryContext(ctx, params), "KILL QUERY WHERE query_id = {id:String} ASYNC")
	if err != nil {
		return false, err
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		found = true
	}
	return found, rows.Err()
}

// Query implements Engine.
func (s *Server) Query(ctx context.Context, stmt chsql.Statement) (*Rows, error) {
	return queryOrFallback(ctx, s.log, stmt, s.query)
}

// query runs one statement, not its fallback.
func (s *Server) query(ctx context.Context, stmt chsql.Statement) (*Rows, error) {
	params, err := EncodeParams(stmt.Params)
	if err != nil {
		return nil, err
	}
	var out *Rows
	err = s.run(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		qctx, read := watchProgress(queryContext(ctx, params))
		rows, err := s.conn.Query(qctx, stmt.SQL)
		if err != nil {
			return ctxError(ctx, err)
		}
		out, err = readRows(rows)
		if err != nil {
			// Classify first, then stop the server's stream: closing rows
			// would otherwise read the rest of the result to throw it away.
			err = ctxError(ctx, err)
			cancel()
			_ = rows.Close()
			return err
		}
		if err := rows.Close(); err != nil {
			return ctxError(ctx, err)
		}
		read.observe()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readRows materializes a result, scanning each column into the driver's
// own Go type for it and then normalizing that to the types Rows promises.
func readRows(rows driver.Rows) (*Rows, error) {
	cts := rows.ColumnTypes()
	out := &Rows{Columns: make([]Column, len(cts))}
	types := make([]chType, len(cts))
	scan := make([]reflect.Type, len(cts))
	for i, ct := range cts {
		out.Columns[i] = Column{Name: ct.Name(), Type: ct.DatabaseTypeName()}
		types[i] = parseType(ct.DatabaseTypeName())
		scan[i] = ct.ScanType()
		if scan[i] == nil {
			return nil, fmt.Errorf("column %s: type %s cannot be read", ct.Name(), ct.DatabaseTypeName())
		}
	}
	for rows.Next() {
		// Fresh destinations per row: the driver may keep and fill maps and
		// slices it finds in a destination.
		dest := make([]any, len(scan))
		for i, t := range scan {
			dest[i] = reflect.New(t).Interface()
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		row := make([]any, len(dest))
		for i, d := range dest {
			v, err := normalize(types[i], reflect.ValueOf(d).Elem())
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", out.Columns[i].Name, err)
			}
			row[i] = v
		}
		out.Data = append(out.Data, row)
	}
	return out, rows.Err()
}

// Exec implements Engine.
func (s *Server) Exec(ctx context.Context, stmt chsql.Statement) error {
	params, err := EncodeParams(stmt.Params)
	if err != nil {
		return err
	}
	return s.run(ctx, func(ctx context.Context) error {
		if err := s.conn.Exec(queryContext(ctx, params), stmt.SQL); err != nil {
			return ctxError(ctx, err)
		}
		return nil
	})
}

// InsertEvents implements Engine. The events travel as one native block of
// one INSERT: a row the driver refuses aborts the batch before anything is
// sent, and the server writes a block whole or not at all.
func (s *Server) InsertEvents(ctx context.Context, events []Event) error {
	rows := make([][]any, len(events))
	for i, ev := range events {
		// Same order as the events table's columns (tablesOf).
		rows[i] = []any{ev.UUID, ev.TeamID, ev.Event, ev.DistinctID, ev.PersonID,
			ev.Timestamp.UTC(), ev.Properties, ev.CreatedAt.UTC()}
	}
	return s.Insert(ctx, s.events, rows)
}

// Insert implements Engine, as one native block like InsertEvents.
func (s *Server) Insert(ctx context.Context, t Table, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	ctx, cancel := withTimeout(ctx, s.timeout)
	defer cancel()
	batch, err := s.conn.PrepareBatch(queryContext(ctx, nil), t.insertSQL())
	if err != nil {
		return ctxError(ctx, err)
	}
	defer func() {
		if !batch.IsSent() {
			_ = batch.Abort()
		}
	}()
	for i, r := range rows {
		if err := batch.Append(r...); err != nil {
			return fmt.Errorf("%s row %d: %w", t.name, i, err)
		}
	}
	if err := batch.Send(); err != nil {
		return ctxError(ctx, err)
	}
	return nil
}

// Cancel implements Engine: a statement queued under id does not start,
// one running is killed (KILL QUERY ... ASYNC answers a row per query it
// asked to stop, without waiting for it to end; again until it has
// returned), and one arriving within cancelMemory is refused.
func (s *Server) Cancel(_ context.Context, id string) (bool, error) {
	if !ValidQueryID(id) {
		return false, nil
	}
	running, stopped := s.fair.calls.cancel(id)
	for _, c := range running {
		go s.killUntil(id, c.done)
	}
	if stopped || len(running) > 0 {
		return true, nil
	}
	// A statement of another insightd on the same server.
	return s.kill(id)
}

// Ping implements Engine.
func (s *Server) Ping(ctx context.Context) error {
	ctx, cancel := withTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.conn.Ping(ctx); err != nil {
		return ctxError(ctx, err)
	}
	return nil
}

// Close implements Engine; later calls return the first call's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.conn.Close() })
	return s.closeErr
}
