// Package olap is insightd's ClickHouse side: one Engine interface with two
// backends, the embedded chDB library (default) and a ClickHouse server
// reached with clickhouse-go (when CLICKHOUSE_URL is set). Both run the same
// SQL with the same {name:Type} parameters bound by the engine.
package olap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/uuid"

	"github.com/insightd/insightd/migrations"
	"github.com/insightd/insightd/olap/chdb"
	"github.com/insightd/insightd/querybuilder/chsql"
)

// Engine runs statements against ClickHouse. Implementations are safe for
// concurrent use. Every query carries a query id (see WithQueryID) and
// honours the context's deadline, or Config.QueryTimeout when it is sooner.
type Engine interface {
	// Query runs a statement and returns all of its rows: its Fallback's
	// when the statement's own check refuses it (chsql.FallbackCheck).
	Query(ctx context.Context, stmt chsql.Statement) (*Rows, error)
	// Stream runs a statement and hands its rows to each as they arrive,
	// without holding the result (olap/stream.go), after its columns to
	// columns; an error from either stops the statement and is returned.
	Stream(ctx context.Context, stmt chsql.Statement, columns func([]Column) error, each func(row []any) error) error
	// Exec runs a statement that returns no rows (DDL, ALTER, INSERT ... SELECT).
	Exec(ctx context.Context, stmt chsql.Statement) error
	// InsertEvents writes events in one insert: all of them or none.
	InsertEvents(ctx context.Context, events []Event) error
	// Insert writes rows into one of the tables ingestion owns (persons,
	// distinct ids, overrides) in one insert: all of them or none.
	Insert(ctx context.Context, t Table, rows [][]any) error
	// Cancel stops the running query with this id; false if none was running.
	Cancel(ctx context.Context, queryID string) (bool, error)
	// Ping checks that the engine answers.
	Ping(ctx context.Context) error
	// Backend names the backend: "chdb" or "clickhouse".
	Backend() string
	// Schema names the tables the engine's data lives in: those ingestion
	// writes, crash recovery reads and project deletion clears.
	Schema() chsql.Schema
	// Close releases the engine; in-flight calls should have returned.
	Close() error
}

// Config chooses and tunes the backend.
type Config struct {
	// ClickHouseURL selects the server backend, e.g.
	// clickhouse://user:pass@host:9000/insightd. Empty means embedded chDB.
	ClickHouseURL string
	// ChDBLib is the path of libchdb.so for the embedded backend.
	ChDBLib string
	// DataDir is where the embedded backend keeps its tables.
	DataDir string
	// QueryTimeout bounds every query (default 60s).
	QueryTimeout time.Duration
	// Connections is the embedded backend's pool size: how many analyses
	// run at once (default 8). Each chDB connection runs one at a time.
	// Two more connections are kept for statements without a project
	// (ingestion, readiness, small lookups), so they never wait behind
	// analyses.
	Connections int
	// PerProject bounds the analyses one project runs at once (default
	// half the connections, at least 1); QueueWait is how long an analysis
	// waits for its project's slot before it is refused (ErrThrottled).
	PerProject int
	QueueWait  time.Duration
	// Schema names insightd's tables; zero means
	// chsql.DefaultSchema(), the layout migrations/clickhouse
	// creates.
	Schema chsql.Schema
	// Cluster is the ClickHouse cluster (remote_servers) the server
	// backend's tables live on: migrations create the cluster layout and
	// statements read its Distributed tables (olap/cluster.md). Empty:
	// one server.
	Cluster string
}

// schema is the configured schema, or the default layout, on the
// configured cluster.
func (c Config) schema() chsql.Schema {
	s := c.Schema
	if s.Events == "" {
		s = chsql.DefaultSchema()
	}
	if c.Cluster != "" {
		s.Cluster = c.Cluster
	}
	return s
}

// reservedConnections are the embedded connections kept for statements
// without a project.
const reservedConnections = 2

// perProject is the configured per-project limit, or its default.
func (c Config) perProject() int {
	if c.PerProject > 0 {
		return c.PerProject
	}
	return max(1, c.Connections/2)
}

// queueWait is the configured queueing time, or its default.
func (c Config) queueWait() time.Duration {
	if c.QueueWait > 0 {
		return c.QueueWait
	}
	return 10 * time.Second
}

// DefaultConfig is the configuration without any setting: the embedded
// engine from .deps/chdb with its files in .data/olap.
func DefaultConfig() Config {
	return Config{ChDBLib: ".deps/chdb/libchdb.so", DataDir: ".data/olap", QueryTimeout: 60 * time.Second, Connections: 8}
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	var errs []error
	if c.QueryTimeout <= 0 {
		errs = append(errs, errors.New("query timeout must be positive"))
	}
	if c.Cluster != "" {
		if c.ClickHouseURL == "" {
			errs = append(errs, errors.New("INSIGHTD_CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL: the embedded engine is one node"))
		}
		if !migrations.ValidClusterName(c.Cluster) {
			errs = append(errs, fmt.Errorf("cluster name %q: want letters, digits and _", c.Cluster))
		}
	}
	if c.ClickHouseURL == "" {
		if c.ChDBLib == "" {
			errs = append(errs, errors.New("INSIGHTD_CHDB_LIB is empty"))
		}
		if c.DataDir == "" {
			errs = append(errs, errors.New("data directory is empty"))
		}
		if c.Connections < 1 || c.Connections > 256 {
			errs = append(errs, fmt.Errorf("connections must be 1..256, got %d", c.Connections))
		}
	}
	return errors.Join(errs...)
}

// Open returns the backend the configuration selects.
func Open(ctx context.Context, cfg Config, log *slog.Logger) (Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.ClickHouseURL != "" {
		return OpenServer(ctx, cfg, log)
	}
	return OpenEmbedded(cfg, log)
}

// Event is one row of the events table as written by ingestion.
type Event struct {
	UUID       uuid.UUID
	TeamID     int64
	Event      string
	DistinctID string
	PersonID   uuid.UUID
	Timestamp  time.Time
	// Properties is the event's properties as a JSON object text.
	Properties string
	CreatedAt  time.Time
}

type queryIDKey struct{}

// WithQueryID sets the id the next query in ctx runs under, so that it can
// be found and cancelled (Engine.Cancel). Ids are 1-64 characters of
// [A-Za-z0-9_-]; anything else is replaced by a generated id.
func WithQueryID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, queryIDKey{}, id)
}

var queryIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidQueryID reports whether id can be used as a query id.
func ValidQueryID(id string) bool { return queryIDRe.MatchString(id) }

func queryID(ctx context.Context) string {
	if id, ok := ctx.Value(queryIDKey{}).(string); ok && ValidQueryID(id) {
		return id
	}
	return uuid.NewString()
}

// ErrorCode returns the ClickHouse error code carried by err (from either
// backend), so callers tell errors apart by code, not by message text.
func ErrorCode(err error) (int32, bool) {
	var ce *chdb.Exception
	if errors.As(err, &ce) && ce.Code != 0 {
		return ce.Code, true
	}
	var se *clickhouse.Exception
	if errors.As(err, &se) {
		return se.Code, true
	}
	return 0, false
}

// queryOrFallback runs stmt with query and, when the statement's own
// check refuses it (chsql.FallbackCheck), runs its Fallback
// instead, logging why: a statement that rests on an assumption (paths'
// item hashes: querybuilder/paths_hashed.go) checks it and fails rather
// than answer wrong.
func queryOrFallback(ctx context.Context, log *slog.Logger, stmt chsql.Statement,
	query func(context.Context, chsql.Statement) (*Rows, error)) (*Rows, error) {
	rows, err := query(ctx, stmt)
	if err == nil || stmt.Fallback == nil || !checkFailed(err) {
		return rows, err
	}
	id, _ := ctx.Value(queryIDKey{}).(string)
	log.Warn("statement check failed; running its fallback", "query_id", id, "err", err)
	// The fallback runs under the same query id, so that a cancel still
	// finds it. A server may still list the failed statement for a moment
	// after sending its error: the fallback waits for the id to be free.
	for wait := 10 * time.Millisecond; ; wait *= 2 {
		rows, err = queryOrFallback(ctx, log, *stmt.Fallback, query)
		if code, ok := ErrorCode(err); !ok || code != CodeQueryWithSameID || wait > time.Second {
			return rows, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
	}
}

// checkFailed reports whether err is a statement's own check asking for
// its fallback (a throwIf with chsql.FallbackCheck).
func checkFailed(err error) bool {
	code, ok := ErrorCode(err)
	return ok && code == CodeThrowIf && strings.Contains(err.Error(), chsql.FallbackCheck)
}

// ClickHouse error codes insightd reacts to.
const (
	CodeSyntaxError         int32 = 62
	CodeTimeoutExceeded     int32 = 159
	CodeQueryWasCancelled   int32 = 394
	CodeBadQueryParameter   int32 = 457
	CodeUnknownQueryParam   int32 = 456
	CodeCannotCompileRegexp int32 = 427
	CodeMemoryLimitExceeded int32 = 241
	CodeTooManyRows         int32 = 396
	// Past max_rows_to_read, max_bytes_to_read, and a join's or set's
	// max_rows_in_join / max_bytes_in_join.
	CodeTooManyRowsRead      int32 = 158
	CodeTooManyBytesRead     int32 = 307
	CodeSetSizeLimitExceeded int32 = 191
	CodeThrowIf              int32 = 395
	CodeQueryWithSameID      int32 = 216
)

// withTimeout applies the configured query timeout unless ctx already ends sooner.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d || ctx.Value(maintenanceKey{}) != nil {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

type maintenanceKey struct{}

// Maintenance marks ctx as maintenance work whose statements may run for
// as long as the data needs (a migration filling a new table from every
// event): Config.QueryTimeout does not bound them; ctx's own deadline, if
// it has one, still does.
func Maintenance(ctx context.Context) context.Context {
	return context.WithValue(ctx, maintenanceKey{}, true)
}

// ctxError classifies a statement's error: the context's reason when the
// context ended, so that a query killed because its caller left reads as
// context.Canceled and one past its deadline as context.DeadlineExceeded;
// an *UnavailableError when the engine could not be reached; else err.
func ctxError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	if unreachable(err) {
		return &UnavailableError{Err: err}
	}
	return err
}
