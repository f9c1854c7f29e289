// Package metadata is insightd's PostgreSQL store: organizations, users and
// memberships, personal API keys, projects, insights, insight views,
// sharing configurations, the activity log and cached analysis results.
package metadata

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/insightd/insightd/migrations"
)

// Config locates the database.
type Config struct {
	// DatabaseURL is a libpq URL, e.g. postgres://user@127.0.0.1:5432/insightd?sslmode=disable.
	DatabaseURL string
	// MaxOpenConns bounds the connection pool (default 20).
	MaxOpenConns int
	// AuthCacheTTL is how long an authenticated API key is remembered
	// (default 10s; 0 turns the cache off). A deleted key keeps working
	// for at most this long.
	AuthCacheTTL time.Duration
	// RoundTrip bounds each exchange with PostgreSQL (default 10s; see
	// deadlines.go): a frozen server fails requests within it.
	RoundTrip time.Duration
	// OutageMemory is how long a read is remembered to be answered while
	// PostgreSQL does not answer (default 5 minutes; 0 turns it off; see
	// outage.go).
	OutageMemory time.Duration
}

// DefaultConfig is the configuration without any setting (the database
// URL still to be given).
func DefaultConfig() Config {
	return Config{MaxOpenConns: 20, AuthCacheTTL: 10 * time.Second, RoundTrip: 10 * time.Second, OutageMemory: 5 * time.Minute}
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	if c.DatabaseURL == "" {
		return errors.New("DATABASE_URL is not set (make run and make test start a private PostgreSQL and set it)")
	}
	if c.MaxOpenConns < 1 {
		return errors.New("MaxOpenConns must be at least 1")
	}
	if c.AuthCacheTTL < 0 {
		return errors.New("INSIGHTD_AUTH_CACHE_TTL must not be negative")
	}
	if c.OutageMemory < 0 {
		return errors.New("INSIGHTD_OUTAGE_MEMORY must not be negative")
	}
	return nil
}

// Store is the metadata store. It is safe for concurrent use.
type Store struct {
	db *sqlx.DB
	// keys remembers keys that authenticated, for a short time: API
	// clients send the same key on every request, and the lookup would
	// otherwise be one more PostgreSQL round trip on each. Unknown keys
	// are never cached. A deleted key keeps working until its entry
	// expires (Config.AuthCacheTTL).
	keys *ttlCache[Principal]
	// tokens does the same for project api tokens on the capture path.
	tokens *ttlCache[TokenProject]
	stmts  sync.Map // query text -> *sqlx.Stmt, see prepared
	// watch hears what changes rendered answers (render_watch.go); it
	// starts listening when first asked.
	watch *renderWatch
	// recall answers recent reads while PostgreSQL is down (outage.go).
	recall    *recall
	roundTrip time.Duration
}

// Open connects and checks the connection.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	roundTrip := cfg.RoundTrip
	if roundTrip <= 0 {
		roundTrip = defaultRoundTrip
	}
	db, err := openDB(cfg.DatabaseURL, roundTrip)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(cfg.MaxOpenConns)
	db.SetMaxIdleConns(cfg.MaxOpenConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	return &Store{db: db, keys: newTTLCache[Principal](cfg.AuthCacheTTL), tokens: newTTLCache[TokenProject](cfg.AuthCacheTTL),
		watch: newRenderWatch(cfg.DatabaseURL, db, roundTrip), recall: newRecall(cfg.OutageMemory), roundTrip: roundTrip}, nil
}

// DB exposes the pool to tests and tools in this module.
func (s *Store) DB() *sqlx.DB { return s.db }

// Ping checks that PostgreSQL answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close stops listening, closes the prepared statements and the pool.
func (s *Store) Close() error {
	s.watch.close()
	s.stmts.Range(func(_, v any) bool {
		v.(*sqlx.Stmt).Close()
		return true
	})
	return s.db.Close()
}

// prepared returns the statement for query, prepared once per query text
// (database/sql prepares it again on each pooled connection as it is first
// used there). With lib/pq an ad-hoc query with arguments costs two round
// trips, a prepare and an execute; a prepared statement costs one, which
// is most of the latency of the hot read paths (keys, projects).
func (s *Store) prepared(ctx context.Context, query string) (*sqlx.Stmt, error) {
	if st, ok := s.stmts.Load(query); ok {
		return st.(*sqlx.Stmt), nil
	}
	st, err := s.db.PreparexContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sqlx.Stmt), nil
	}
	return st, nil
}

// migrationLock is the advisory lock key that serialises concurrent migrate
// runs (the ASCII of "insightd" as a number).
const migrationLock = 0x696e736967687464

// Migrate applies the PostgreSQL migrations not yet recorded, each in its
// own transaction with its record, and returns the versions it applied.
// Concurrent runs wait for each other on an advisory lock.
func (s *Store) Migrate(ctx context.Context) ([]int, error) {
	ms, err := migrations.Postgres()
	if err != nil {
		return nil, err
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		return nil, err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLock) //nolint:errcheck // released with the session anyway
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY,
		name text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, err
	}
	var versions []int
	if err := conn.SelectContext(ctx, &versions, "SELECT version FROM schema_migrations"); err != nil {
		return nil, err
	}
	done := map[int]bool{}
	for _, v := range versions {
		done[v] = true
	}
	applied := []int{}
	for _, m := range ms {
		if done[m.Version] {
			continue
		}
		tx, err := conn.BeginTxx(ctx, nil)
		if err != nil {
			return applied, err
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			tx.Rollback()
			return applied, fmt.Errorf("postgres migration %04d_%s: %w", m.Version, m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
			tx.Rollback()
			return applied, err
		}
		if err := tx.Commit(); err != nil {
			return applied, err
		}
		applied = append(applied, m.Version)
	}
	return applied, nil
}

// getOne reads one row into dest through tx, or through the pool (nil tx)
// with the statement prepared once; ErrNotFound when there is none.
func (s *Store) getOne(ctx context.Context, tx *sqlx.Tx, dest any, query string, args ...any) error {
	var err error
	if tx != nil {
		err = tx.GetContext(ctx, dest, query, args...)
	} else {
		err = s.recallInto(dest, query, args, func() error {
			st, err := s.prepared(ctx, query)
			if err == nil {
				err = st.GetContext(ctx, dest, args...)
			}
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNotFound
			}
			return err
		})
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
