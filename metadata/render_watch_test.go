package metadata_test

import (
	"context"
	"database/sql"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/metadata/metadatatest"
)

// liveStamp waits until the store vouches for notifications and returns
// the project's stamp.
func liveStamp(t *testing.T, s *metadata.Store, project int64) metadata.RenderStamp {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if st, ok := s.RenderStamp(project); ok {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatal("the store did not start hearing render notifications within 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func syncRenders(t *testing.T, s *metadata.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.SyncRenders(ctx); err != nil {
		t.Fatal(err)
	}
}

// killListener ends the store's listening connection from PostgreSQL's
// side, as a restart or a network failure would.
func killListener(t *testing.T, s *metadata.Store) {
	t.Helper()
	var n int
	if err := s.DB().Get(&n, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`, metadata.ListenerName); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("terminated %d listening connections, want 1", n)
	}
}

// allowConnections lets new connections to the store's database be made
// or not (from another database: PostgreSQL refuses it from its own).
func allowConnections(t *testing.T, s *metadata.Store, allow bool) {
	t.Helper()
	var db string
	if err := s.DB().Get(&db, "SELECT current_database()"); err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("postgres", os.Getenv("DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec("ALTER DATABASE " + pq.QuoteIdentifier(db) + " WITH ALLOW_CONNECTIONS " + strconv.FormatBool(allow)); err != nil {
		t.Fatal(err)
	}
}

// The render notifications of migration 0008 move the stamps of exactly
// the projects whose answers a change reaches, for changes made by hand
// as for the store's own, and a listener that lost its connection gives
// no stamp until it listens again, and then none it gave before.
func TestRenderStampsFollowNotifications(t *testing.T) {
	ctx := context.Background()
	s := metadatatest.NewStore(t)
	a := metadatatest.Bootstrap(t, s, "ada@example.com", "Acme", "Acme web")
	b := metadatatest.Bootstrap(t, s, "bob@example.com", "Beta", "Beta app")
	exec := func(t *testing.T, q string, args ...any) {
		t.Helper()
		if _, err := s.DB().Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	// moved makes a change by hand and reports, once it was heard, whether
	// each project's stamp moved.
	moved := func(t *testing.T, change func(t *testing.T)) (movedA, movedB bool) {
		t.Helper()
		a0, b0 := liveStamp(t, s, a.ProjectID), liveStamp(t, s, b.ProjectID)
		change(t)
		syncRenders(t, s)
		a1, b1 := liveStamp(t, s, a.ProjectID), liveStamp(t, s, b.ProjectID)
		return a1 != a0, b1 != b0
	}
	result := `INSERT INTO cached_results (project_id, cache_key, result, computed_at, stale_at)
		VALUES ($1, 'k', '[]', now(), now() + interval '1 hour')
		ON CONFLICT (project_id, cache_key) DO UPDATE SET computed_at = excluded.computed_at`
	cases := []struct {
		name         string
		change       func(t *testing.T)
		wantA, wantB bool
	}{
		{name: "a project's setting moves that project's stamp only",
			change: func(t *testing.T) {
				exec(t, "UPDATE projects SET timezone = 'Europe/Paris' WHERE id = $1", a.ProjectID)
			}, wantA: true},
		{name: "a cached result written by hand moves its project's stamp only",
			change: func(t *testing.T) { exec(t, result, b.ProjectID) }, wantB: true},
		{name: "a cached result deleted by hand",
			change: func(t *testing.T) { exec(t, "DELETE FROM cached_results WHERE project_id = $1", b.ProjectID) }, wantB: true},
		{name: "a user's name moves every project's stamp",
			change: func(t *testing.T) { exec(t, "UPDATE users SET first_name = 'Augusta' WHERE id = $1", a.UserID) }, wantA: true, wantB: true},
		{name: "a membership removed moves every project's stamp",
			change: func(t *testing.T) { exec(t, "DELETE FROM memberships WHERE user_id = $1", b.UserID) }, wantA: true, wantB: true},
		{name: "a change rolled back moves nothing",
			change: func(t *testing.T) {
				tx, err := s.DB().Begin()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec("UPDATE projects SET timezone = 'Asia/Tokyo' WHERE id = $1", a.ProjectID); err != nil {
					t.Fatal(err)
				}
				tx.Rollback()
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if gotA, gotB := moved(t, c.change); gotA != c.wantA || gotB != c.wantB {
				t.Fatalf("moved: project a %v, b %v; want %v, %v", gotA, gotB, c.wantA, c.wantB)
			}
		})
	}

	t.Run("the store's own cached result moves the stamp before any notification is heard", func(t *testing.T) {
		before := liveStamp(t, s, a.ProjectID)
		if err := s.PutCachedResult(ctx, a.ProjectID, "own", metadata.CachedResult{Result: []byte(`[]`),
			ComputedAt: time.Now(), StaleAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if after, _ := s.RenderStamp(a.ProjectID); after == before {
			t.Fatal("the stamp did not move")
		}
	})

	t.Run("a second store on the same database hears the first's changes", func(t *testing.T) {
		second := metadatatest.Reopen(t, s)
		before := liveStamp(t, second, a.ProjectID)
		if err := s.PutCachedResult(ctx, a.ProjectID, "shared", metadata.CachedResult{Result: []byte(`[]`),
			ComputedAt: time.Now(), StaleAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		syncRenders(t, second)
		if after := liveStamp(t, second, a.ProjectID); after == before {
			t.Fatal("the second store's stamp did not move")
		}
	})

	t.Run("a lost listener gives no stamp until it listens again, and then a new one", func(t *testing.T) {
		before := liveStamp(t, s, a.ProjectID)
		allowConnections(t, s, false) // it cannot reconnect meanwhile
		killListener(t, s)
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, ok := s.RenderStamp(a.ProjectID); !ok {
				break
			}
			if time.Now().After(deadline) {
				allowConnections(t, s, true)
				t.Fatal("stamps are still given 10 s after the listener was lost")
			}
			time.Sleep(5 * time.Millisecond)
		}
		// Lost with the connection: what is changed now is not heard.
		exec(t, "UPDATE projects SET timezone = 'UTC' WHERE id = $1", b.ProjectID)
		time.Sleep(200 * time.Millisecond)
		if _, ok := s.RenderStamp(a.ProjectID); ok {
			t.Fatal("a stamp was given while not listening")
		}
		allowConnections(t, s, true)
		if after := liveStamp(t, s, a.ProjectID); after == before {
			t.Fatal("listening again gave a stamp it gave before the connection was lost")
		}
	})
}

// How long a change by hand takes to be heard: the window in which a
// server may still answer what the change replaced. Logged, not judged.
func TestRenderNotificationDelay(t *testing.T) {
	s := metadatatest.NewStore(t)
	a := metadatatest.Bootstrap(t, s, "ada@example.com", "Acme", "Acme web")
	var delays []time.Duration
	for i := range 20 {
		before := liveStamp(t, s, a.ProjectID)
		start := time.Now()
		if _, err := s.DB().Exec("UPDATE projects SET name = $2 WHERE id = $1", a.ProjectID, i); err != nil {
			t.Fatal(err)
		}
		committed := time.Now()
		for {
			if st, _ := s.RenderStamp(a.ProjectID); st != before {
				break
			}
			if time.Since(start) > 10*time.Second {
				t.Fatal("a change by hand was not heard within 10 s")
			}
			time.Sleep(20 * time.Microsecond)
		}
		delays = append(delays, time.Since(committed))
	}
	t.Logf("heard after the commit returned: %v", delays)
}

// A PostgreSQL that stops answering with its sockets open (frozen) looks
// like a quiet one to the listening connection: no beat comes back, so
// stamps stop within three beats, and come back, new, after the thaw.
func TestRenderStampsStopWhilePostgresIsFrozen(t *testing.T) {
	pg := metadatatest.StartPrivate(t)
	ctx := context.Background()
	const roundTrip = 2 * time.Second // beats every 500 ms
	s, err := metadata.Open(ctx, metadata.Config{DatabaseURL: pg.URL, MaxOpenConns: 4, RoundTrip: roundTrip})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	before := liveStamp(t, s, 1)
	pg.Freeze()
	frozen := time.Now()
	for {
		if _, ok := s.RenderStamp(1); !ok {
			break
		}
		if time.Since(frozen) > 2*time.Second {
			pg.Thaw()
			t.Fatal("stamps are still given 2 s into the freeze")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("no stamp %v into the freeze", time.Since(frozen).Round(time.Millisecond))
	pg.Thaw()
	if after := liveStamp(t, s, 1); after == before {
		t.Fatal("after the thaw, a stamp given before the freeze")
	}
}
