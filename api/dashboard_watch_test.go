package api

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/metadata/metadatatest"
)

// syncRenders waits until s has heard every change committed so far.
func syncRenders(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.store.SyncRenders(ctx); err != nil {
		t.Fatal(err)
	}
}

// watchedDashboard is a dashboard of Ada's project whose kept answer a
// test marks (its name replaced), so that a retrieve tells whether it was
// served the kept answer, and counts the round trips that checked it.
type watchedDashboard struct {
	f    *fixture
	id   int64
	name string
}

func newWatchedDashboard(t *testing.T, f *fixture) *watchedDashboard {
	t.Helper()
	writeBrowserEvents(t, f.a.ProjectID, []time.Time{day(2), day(3)}, []string{"Chrome", "Safari"})
	in := f.newInsight(t, map[string]any{"name": "watched", "filters": pageviews("2026-03-01", "2026-03-05")})
	d := f.newDashboard(t, map[string]any{"name": "Watched", "tiles": []any{map[string]any{"insight": in["id"]}}})
	return &watchedDashboard{f: f, id: idOf(d), name: "Watched"}
}

// on is the same dashboard as seen through another server (fixture).
func (w *watchedDashboard) on(f *fixture) *watchedDashboard {
	return &watchedDashboard{f: f, id: w.id, name: w.name}
}

// mark makes sure the answer is kept, the store having shown it current
// after every change made so far was heard (a write this server made
// moves the stamp twice: at once, and when its notification comes), and
// marks it.
func (w *watchedDashboard) mark(t *testing.T) {
	t.Helper()
	clearOfMinuteEnd()
	w.f.s.renders = renderCache{}
	w.f.getDashboard(t, w.id, "")
	// Until a retrieve after every change was heard makes no round trip:
	// a result the first retrieve computed may be stored (and notified)
	// after its answer, on a busy machine after the sync below.
	for range 5 {
		syncRenders(t, w.f.s)
		if before := w.f.s.renders.roundTrips.Load(); w.f.getDashboard(t, w.id, "") != nil && w.f.s.renders.roundTrips.Load() == before {
			break
		}
	}
	e := w.f.s.renders.get(w.f.a.ProjectID, w.id)
	if e == nil {
		t.Fatal("not kept")
	}
	e.body = bytes.Replace(e.body, []byte(`"name":"`+w.name+`"`), []byte(`"name":"served kept"`), 1)
}

// clearOfMinuteEnd waits for the next clock minute when this one ends
// within 2 s: a kept answer is of one minute, and a test that counts
// round trips must not see the next one's re-keying (one more).
func clearOfMinuteEnd() {
	if left := time.Until(time.Now().Truncate(analysis.ClockPrecision).Add(analysis.ClockPrecision)); left < 2*time.Second {
		time.Sleep(left + 10*time.Millisecond)
	}
}

// get retrieves the dashboard and reports whether the kept answer was
// served, and how many round trips checked it.
func (w *watchedDashboard) get(t *testing.T) (kept bool, roundTrips int64) {
	t.Helper()
	before := w.f.s.renders.roundTrips.Load()
	got := w.f.getDashboard(t, w.id, "")
	return got["name"] == "served kept", w.f.s.renders.roundTrips.Load() - before
}

func (w *watchedDashboard) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := w.f.s.store.DB().Exec(q, args...); err != nil {
		t.Fatal(err)
	}
}

// listening waits until the server's store vouches for notifications.
func listening(t *testing.T, s *Server, project int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := s.store.RenderStamp(project); ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("not listening 10 s on")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A kept answer is checked against PostgreSQL once per change rather than
// once per retrieve: the store hears of every change by notification
// (migration 0008), from this server, another one, or by hand. While it
// cannot vouch for them (its listening connection lost), every retrieve
// makes the round trip, which still sees what it did not hear.
func TestDashboardKeptAnswerChecksOncePerChange(t *testing.T) {
	f := newFixture(t)
	team := f.a.ProjectID
	w := newWatchedDashboard(t, f)
	listening(t, f.s, team)

	t.Run("retrieves of an unchanged dashboard make no round trip", func(t *testing.T) {
		// A round trip is right whenever the stamp moved (a notification
		// came late, or the watch went unheard for a while on a loaded
		// machine); only one made under an unmoved stamp is a fault.
		for attempt := 1; ; attempt++ {
			w.mark(t)
			moved := false
			for range 3 {
				before, heard := f.s.store.RenderStamp(team)
				kept, trips := w.get(t)
				after, still := f.s.store.RenderStamp(team)
				if kept && trips == 0 {
					continue
				}
				if heard && still && before == after || attempt == 5 {
					t.Fatalf("kept %v with %d round trips under an unmoved stamp (attempt %d); want kept with none", kept, trips, attempt)
				}
				moved = true
				break
			}
			if !moved {
				return
			}
		}
	})
	t.Run("concurrent retrieves after a change share one round trip", func(t *testing.T) {
		w.mark(t)
		f.s.store.RenderChanged(team) // as a write through this server does
		// The round trip waits on a lock until every retrieve has come.
		tx, err := f.s.store.DB().Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("LOCK TABLE render_generations IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		before := f.s.renders.roundTrips.Load()
		kept := make([]bool, 16)
		var wg sync.WaitGroup
		for k := range kept {
			wg.Go(func() {
				r := send(t, f, "GET", f.dashboard(team, w.id), f.a.PersonalAPIKey, "")
				kept[k] = r.Code == http.StatusOK && strings.Contains(r.Body.String(), `"name":"served kept"`)
			})
		}
		time.Sleep(300 * time.Millisecond)
		tx.Rollback()
		wg.Wait()
		if n := f.s.renders.roundTrips.Load() - before; n != 1 || slices.Contains(kept, false) {
			t.Fatalf("%d round trips, kept %v; want one, every answer kept", n, kept)
		}
	})
	t.Run("a change by hand is heard, and the next retrieve renders it", func(t *testing.T) {
		w.mark(t)
		w.exec(t, "UPDATE dashboards SET description = 'by hand' WHERE id = $1", w.id)
		syncRenders(t, f.s)
		if kept, _ := w.get(t); kept {
			t.Fatal("the kept answer was served after a change by hand was heard")
		}
		if got := f.getDashboard(t, w.id, ""); got["description"] != "by hand" {
			t.Fatalf("description %v", got["description"])
		}
	})
	t.Run("a change by hand is heard without waiting for it", func(t *testing.T) {
		w.mark(t)
		w.exec(t, "UPDATE dashboards SET description = 'unwaited' WHERE id = $1", w.id)
		start := time.Now()
		for {
			if kept, _ := w.get(t); !kept {
				t.Logf("heard after %v", time.Since(start).Round(time.Microsecond))
				break
			}
			if time.Since(start) > 2*time.Second {
				t.Fatal("the kept answer was still served 2 s after a change by hand")
			}
		}
	})
	t.Run("a write through this server moves the stamp before its answer, heard or not", func(t *testing.T) {
		// A refused PATCH writes nothing, so no notification comes: the
		// stamp moved all the same, before the client had the answer.
		before, _ := f.s.store.RenderStamp(team)
		if st, _ := call(t, f.h, "PATCH", f.dashboard(team, w.id), f.a.PersonalAPIKey, map[string]any{"name": 5}); st != http.StatusBadRequest {
			t.Fatalf("PATCH with a number for a name: %d", st)
		}
		if after, _ := f.s.store.RenderStamp(team); after == before {
			t.Fatal("the stamp did not move")
		}
	})
	t.Run("without the listener every retrieve makes the round trip, and sees what was not heard", func(t *testing.T) {
		w.mark(t)
		allowConnections(t, f.s, false)
		defer allowConnections(t, f.s, true)
		killListener(t, f.s)
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, ok := f.s.store.RenderStamp(team); !ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("still listening 10 s after the connection was lost")
			}
			time.Sleep(5 * time.Millisecond)
		}
		for range 2 {
			if kept, trips := w.get(t); !kept || trips != 1 {
				t.Fatalf("kept %v with %d round trips; want kept after one", kept, trips)
			}
		}
		w.exec(t, "UPDATE dashboards SET description = 'unheard' WHERE id = $1", w.id)
		if kept, _ := w.get(t); kept {
			t.Fatal("the kept answer was served after a change the round trip shows")
		}
		allowConnections(t, f.s, true)
		listening(t, f.s, team)
		w.mark(t)
		if kept, trips := w.get(t); !kept || trips != 0 {
			t.Fatalf("listening again: kept %v with %d round trips; want kept with none", kept, trips)
		}
	})
	t.Run("a second server on the same PostgreSQL renders the first's change", func(t *testing.T) {
		s2 := New(testConfig(), quietLog(), metadatatest.Reopen(t, f.s.store), engine)
		f2 := &fixture{s: s2, h: validated(t, s2.Handler()), a: f.a, b: f.b}
		w2 := w.on(f2)
		listening(t, s2, team)
		w2.mark(t)
		if kept, trips := w2.get(t); !kept || trips != 0 {
			t.Fatalf("second server: kept %v with %d round trips; want kept with none", kept, trips)
		}
		call(t, f.h, "PATCH", f.dashboard(team, w.id), f.a.PersonalAPIKey, map[string]any{"description": "from the first"})
		syncRenders(t, s2)
		if kept, _ := w2.get(t); kept {
			t.Fatal("the second server served its kept answer after the first's change was heard")
		}
		if got := f2.getDashboard(t, w.id, ""); got["description"] != "from the first" {
			t.Fatalf("description %v", got["description"])
		}
	})
}

// killListener ends the server's listening connection from PostgreSQL's
// side, as a restart or a network failure would.
func killListener(t *testing.T, s *Server) {
	t.Helper()
	var n int
	if err := s.store.DB().Get(&n, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`, metadata.ListenerName); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("terminated %d listening connections, want 1", n)
	}
}

// allowConnections lets new connections to the server's database be made
// or not (from another database: PostgreSQL refuses it from its own).
func allowConnections(t *testing.T, s *Server, allow bool) {
	t.Helper()
	var db string
	if err := s.store.DB().Get(&db, "SELECT current_database()"); err != nil {
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
