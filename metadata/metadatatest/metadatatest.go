// Package metadatatest gives each test its own migrated PostgreSQL
// database on the server DATABASE_URL points at (make test starts one), so
// tests never see each other's rows.
package metadatatest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/lib/pq"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/migrations"
)

var projectRange atomic.Int64

// NewStore returns a store on a fresh database cloned from a migrated
// template; the database is dropped when the test ends.
func NewStore(t testing.TB) *metadata.Store {
	t.Helper()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		t.Fatal("DATABASE_URL is not set: run `make test`, which starts PostgreSQL for the tests")
	}
	ctx := context.Background()
	admin, err := sql.Open("postgres", withDatabase(t, base, "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	tmpl := ensureTemplate(t, admin, base)
	name := "insightd_t_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)+" TEMPLATE "+pq.QuoteIdentifier(tmpl)); err != nil {
		t.Fatal(err)
	}
	// Project ids key events in ClickHouse, which tests of one package
	// share: each database numbers its projects from its own range.
	db, err := sql.Open("postgres", withDatabase(t, base, name))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(ctx, "SELECT setval('projects_id_seq', $1)", projectRange.Add(1)<<20)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	store, err := metadata.Open(ctx, metadata.Config{DatabaseURL: withDatabase(t, base, name), MaxOpenConns: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		store.Close()
		if db, err := sql.Open("postgres", withDatabase(t, base, "postgres")); err == nil {
			db.Exec("DROP DATABASE IF EXISTS " + pq.QuoteIdentifier(name) + " WITH (FORCE)")
			db.Close()
		}
	})
	return store
}

// ensureTemplate migrates a template database named after the migrations'
// content once, so that every test database is a cheap copy of it.
func ensureTemplate(t testing.TB, admin *sql.DB, base string) string {
	t.Helper()
	ms, err := migrations.Postgres()
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, m := range ms {
		fmt.Fprintf(h, "%d %s\n", m.Version, m.SQL)
	}
	name := "insightd_tmpl_" + hex.EncodeToString(h.Sum(nil))[:12]
	ctx := context.Background()
	conn, err := admin.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Test packages run in parallel processes: one makes the template.
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(4242)"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "SELECT pg_advisory_unlock(4242)")
	var exists bool
	if err := conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		return name
	}
	building := name + "_new"
	conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(building))
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(building)); err != nil {
		t.Fatal(err)
	}
	store, err := metadata.Open(ctx, metadata.Config{DatabaseURL: withDatabase(t, base, building), MaxOpenConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.Migrate(ctx)
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "ALTER DATABASE "+pq.QuoteIdentifier(building)+" RENAME TO "+pq.QuoteIdentifier(name)); err != nil {
		t.Fatal(err)
	}
	return name
}

func withDatabase(t testing.TB, raw, db string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("DATABASE_URL: %v", err)
	}
	u.Path = "/" + db
	return u.String()
}

// Bootstrap gives the store a user with email, an organization and a
// project (metadata.Store.Bootstrap), failing the test if it cannot.
func Bootstrap(t testing.TB, s *metadata.Store, email, orgName, projectName string) metadata.Bootstrapped {
	t.Helper()
	b, err := s.Bootstrap(context.Background(), email, orgName, projectName)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
