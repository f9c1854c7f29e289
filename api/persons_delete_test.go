package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/metadata/metadatatest"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
	"github.com/insightd/insightd/querybuilder/reference"
)

// dayPageviews are the pageviews of 1 March and the persons who did them,
// computed afresh (a closed range's answer is otherwise cached for a day
// whatever happens to its data).
func dayPageviews(t *testing.T, p *funnelProject) (total, unique float64) {
	t.Helper()
	for i, m := range []string{"total", "dau"} {
		var series []struct {
			Data []float64 `json:"data"`
		}
		p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview", "math": m}},
			"date_from": "2026-03-01", "date_to": "2026-03-01", "refresh": true}, &series)
		if len(series) != 1 || len(series[0].Data) != 1 {
			t.Fatalf("%s: %v", m, series)
		}
		if i == 0 {
			total = series[0].Data[0]
		} else {
			unique = series[0].Data[0]
		}
	}
	return total, unique
}

// DELETE persons/:id/: the person leaves the list and retrieve, its
// events stay (and count) unless delete_events=true, which also takes the
// events of the persons merged into it; a later event of one of its
// distinct ids makes a new person.
func TestPersonDelete(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := []reference.Event{
		// ada: two persons (anon-1, ada) merged by $identify, so anon-1's
		// pageview is stored under a merged-away person's id.
		analysistest.Fev("anon-1", "$pageview", analysistest.Mar(1, 9)),
		analysistest.Fev("ada", "$pageview", analysistest.Mar(1, 10)),
		analysistest.Fident("ada", "anon-1", analysistest.Mar(1, 11)),
		analysistest.Fev("ada", "$pageview", analysistest.Mar(1, 12)),
		analysistest.Fev("bob", "$pageview", analysistest.Mar(1, 13)),
		analysistest.Fev("carol", "$pageview", analysistest.Mar(1, 14)),
	}
	p := env.project(t, events)
	persons := func(t *testing.T) map[string]string {
		t.Helper()
		st, body := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/", p.id), p.key, nil)
		if st != 200 {
			t.Fatalf("list: %d %v", st, body)
		}
		out := map[string]string{} // distinct ids → uuid
		for _, r := range body["results"].([]any) {
			person := r.(map[string]any)
			var ids []string
			for _, d := range person["distinct_ids"].([]any) {
				ids = append(ids, d.(string))
			}
			sort.Strings(ids)
			out[fmt.Sprint(ids)] = person["uuid"].(string)
		}
		return out
	}
	// pageviews are the day's pageviews and the persons who did them,
	// computed afresh (a closed range's answer is otherwise cached for a
	// day whatever happens to its data).
	pageviews := func(t *testing.T) (total, unique float64) {
		t.Helper()
		return dayPageviews(t, p)
	}
	path := func(id string) string { return fmt.Sprintf("/api/projects/%d/persons/%s/", p.id, id) }
	before := persons(t)
	ada, bob, carol := before["[ada anon-1]"], before["[bob]"], before["[carol]"]
	if len(before) != 3 || ada == "" || bob == "" || carol == "" {
		t.Fatalf("persons before: %v", before)
	}
	if total, unique := pageviews(t); total != 5 || unique != 3 {
		t.Fatalf("before: %v pageviews by %v persons, want 5 by 3", total, unique)
	}

	t.Run("without delete_events the person goes and the events stay", func(t *testing.T) {
		if st, body := call(t, env.h, "DELETE", path(bob), p.key, nil); st != http.StatusNoContent || body != nil {
			t.Fatalf("%d %v", st, body)
		}
		if got := persons(t); len(got) != 2 || got["[bob]"] != "" {
			t.Fatalf("list: %v", got)
		}
		if st, _ := call(t, env.h, "GET", path(bob), p.key, nil); st != 404 {
			t.Fatalf("retrieve: %d", st)
		}
		if st, _ := call(t, env.h, "DELETE", path(bob), p.key, nil); st != 404 {
			t.Fatalf("deleted twice: %d", st)
		}
		if total, unique := pageviews(t); total != 5 || unique != 3 {
			t.Fatalf("%v pageviews by %v persons, want still 5 by 3", total, unique)
		}
	})
	t.Run("with delete_events the events of the person and of those merged into it go", func(t *testing.T) {
		if st, body := call(t, env.h, "DELETE", path(ada)+"?delete_events=true", p.key, nil); st != http.StatusNoContent {
			t.Fatalf("%d %v", st, body)
		}
		if got := persons(t); len(got) != 1 || got["[carol]"] != carol {
			t.Fatalf("list: %v", got)
		}
		// bob's pageview (kept) and carol's: anon-1's went with ada's.
		if total, unique := pageviews(t); total != 2 || unique != 2 {
			t.Fatalf("%v pageviews by %v persons, want 2 by 2", total, unique)
		}
	})
	t.Run("a later event of a deleted distinct id makes a new person", func(t *testing.T) {
		p.Capture(t, []reference.Event{analysistest.Fev("bob", "$pageview", analysistest.Mar(1, 15)), analysistest.Fev("anon-1", "$pageview", analysistest.Mar(1, 16))})
		got := persons(t)
		if len(got) != 3 || got["[bob]"] == "" || got["[bob]"] == bob || got["[anon-1]"] == "" || got["[anon-1]"] == ada {
			t.Fatalf("list: %v (bob was %s, ada %s)", got, bob, ada)
		}
		if st, _ := call(t, env.h, "GET", path(bob), p.key, nil); st != 404 {
			t.Fatalf("the old bob: %d", st)
		}
		// bob old and new, carol, anon-1 new: 4 persons, 4 pageviews.
		if total, unique := pageviews(t); total != 4 || unique != 4 {
			t.Fatalf("%v pageviews by %v persons, want 4 by 4", total, unique)
		}
	})
	t.Run("bad input, scopes, other projects and organizations", func(t *testing.T) {
		if st, body := call(t, env.h, "DELETE", path(carol)+"?delete_events=maybe", p.key, nil); st != 400 || body["attr"] != "delete_events" {
			t.Fatalf("%d %v", st, body)
		}
		if st, _ := call(t, env.h, "DELETE", path("not-a-uuid"), p.key, nil); st != 404 {
			t.Fatalf("not a uuid: %d", st)
		}
		k, err := env.s.store.CreateKey(t.Context(), fmt.Sprintf("funnel%d@example.com", env.n), "read only", []string{"person:read"}, metadata.KeyScope{})
		if err != nil {
			t.Fatal(err)
		}
		if st, body := call(t, env.h, "DELETE", path(carol), k.Key, nil); st != 403 {
			t.Fatalf("person:read only: %d %v", st, body)
		}
		other := env.project(t, []reference.Event{analysistest.Fev("dan", "$pageview", analysistest.Mar(1, 9))})
		if st, _ := call(t, env.h, "DELETE", path(carol), other.key, nil); st != 404 {
			t.Fatalf("another organization's key: %d", st)
		}
		if st, _ := call(t, env.h, "DELETE", fmt.Sprintf("/api/projects/%d/persons/%s/", other.id, carol), other.key, nil); st != 404 {
			t.Fatalf("another project's person: %d", st)
		}
		if got := persons(t); got["[carol]"] != carol {
			t.Fatalf("carol should remain: %v", got)
		}
	})
}

// eventsDeleteEngine is the embedded engine with the events' DELETE of a
// person's deletion failing (fail times) or held until release closes.
type eventsDeleteEngine struct {
	olap.Engine
	fail    atomic.Int32
	held    chan struct{} // closed when a DELETE waits on release
	release chan struct{}
}

func (e *eventsDeleteEngine) Exec(ctx context.Context, stmt querybuilder.Statement) error {
	if strings.HasPrefix(stmt.SQL, "DELETE FROM ") {
		if e.fail.Add(-1) >= 0 {
			return errors.New("injected failure of the events' DELETE")
		}
		if e.release != nil {
			close(e.held)
			<-e.release
		}
	}
	return e.Engine.Exec(ctx, stmt)
}

func newDeleteEnv(t *testing.T, e *eventsDeleteEngine) *funnelEnv {
	t.Helper()
	s := New(testConfig(), quietLog(), metadatatest.NewStore(t), e)
	t.Cleanup(s.writer.Close)
	return &funnelEnv{s: s, h: validated(t, s.Handler())}
}

// A deletion whose events' DELETE failed answers 503 and is retried
// whole by the same request: the person's events, those of the persons
// merged into it, its row and its distinct ids all end up deleted.
func TestAFailedPersonDeletionCanBeRetried(t *testing.T) {
	t.Parallel()
	e := &eventsDeleteEngine{Engine: engine}
	e.fail.Store(1)
	env := newDeleteEnv(t, e)
	p := env.project(t, []reference.Event{
		analysistest.Fev("anon-1", "$pageview", analysistest.Mar(1, 9)),
		analysistest.Fident("ada", "anon-1", analysistest.Mar(1, 10)),
		analysistest.Fev("ada", "$pageview", analysistest.Mar(1, 11)),
		analysistest.Fev("bob", "$pageview", analysistest.Mar(1, 12)),
	})
	before := personsByDistinctIDs(t, env, p)
	ada := before["[ada anon-1]"]
	if len(before) != 2 || ada == "" {
		t.Fatalf("persons before: %v", before)
	}
	path := fmt.Sprintf("/api/projects/%d/persons/%s/?delete_events=true", p.id, ada)
	if st, body := call(t, env.h, "DELETE", path, p.key, nil); st != http.StatusServiceUnavailable {
		t.Fatalf("the failing deletion: %d %v", st, body)
	}
	if st, body := call(t, env.h, "DELETE", path, p.key, nil); st != http.StatusNoContent {
		t.Fatalf("the retry: %d %v", st, body)
	}
	if total, unique := dayPageviews(t, p); total != 1 || unique != 1 {
		t.Fatalf("%v pageviews by %v persons, want bob's 1", total, unique)
	}
	if got := personsByDistinctIDs(t, env, p); len(got) != 1 || got["[bob]"] == "" {
		t.Fatalf("persons after: %v", got)
	}
	// The distinct ids no longer map to the deleted person.
	p.Capture(t, []reference.Event{analysistest.Fev("anon-1", "$pageview", analysistest.Mar(1, 13))})
	if got := personsByDistinctIDs(t, env, p); len(got) != 2 || got["[anon-1]"] == "" || got["[anon-1]"] == ada {
		t.Fatalf("persons after anon-1's new event: %v (ada was %s)", got, ada)
	}
	if st, _ := call(t, env.h, "DELETE", fmt.Sprintf("/api/projects/%d/persons/%s/", p.id, ada), p.key, nil); st != 404 {
		t.Fatalf("deleted again without delete_events: %d", st)
	}
	if st, _ := call(t, env.h, "DELETE", fmt.Sprintf("/api/projects/%d/persons/%s/?delete_events=true", p.id, uuid.NewString()), p.key, nil); st != 404 {
		t.Fatalf("a person that never was, with delete_events: %d", st)
	}
}

// The events' DELETE runs after the writer is released: while it runs,
// another project's capture is stored.
func TestAPersonsEventsDeleteDoesNotStallIngestion(t *testing.T) {
	e := &eventsDeleteEngine{Engine: engine, held: make(chan struct{}), release: make(chan struct{})}
	env := newDeleteEnv(t, e)
	p := env.project(t, []reference.Event{analysistest.Fev("ada", "$pageview", analysistest.Mar(1, 9)), analysistest.Fev("bob", "$pageview", analysistest.Mar(1, 10))})
	other := env.project(t, []reference.Event{analysistest.Fev("dan", "$pageview", analysistest.Mar(1, 9))})
	ada := personsByDistinctIDs(t, env, p)["[ada]"]
	if ada == "" {
		t.Fatal("no person ada")
	}
	released := false
	release := func() {
		if !released {
			released = true
			close(e.release)
		}
	}
	defer release()
	deleted := make(chan int, 1)
	go func() {
		deleted <- send(t, &fixture{h: env.h}, "DELETE", fmt.Sprintf("/api/projects/%d/persons/%s/?delete_events=true", p.id, ada), p.key, "").Code
	}()
	select {
	case <-e.held:
	case <-time.After(30 * time.Second):
		t.Fatal("the events' DELETE never ran")
	}
	captured := make(chan int, 1)
	go func() {
		body := fmt.Sprintf(`{"api_key": %q, "batch": [{"event": "$pageview", "distinct_id": "erin", "timestamp": "2026-03-01T11:00:00Z"}]}`, other.token)
		r := httptest.NewRequest("POST", "/batch/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		env.h.ServeHTTP(w, r)
		captured <- w.Code
	}()
	select {
	case st := <-captured:
		if st != 200 {
			t.Fatalf("capture: %d", st)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("another project's capture waits for the person's events' DELETE")
	}
	if total, unique := dayPageviews(t, other); total != 2 || unique != 2 {
		t.Fatalf("the other project: %v pageviews by %v persons, want 2 by 2", total, unique)
	}
	select {
	case st := <-deleted:
		t.Fatalf("the deletion answered %d before its events' DELETE ended", st)
	default:
	}
	release()
	if st := <-deleted; st != http.StatusNoContent {
		t.Fatalf("the deletion: %d", st)
	}
	if total, unique := dayPageviews(t, p); total != 1 || unique != 1 {
		t.Fatalf("%v pageviews by %v persons, want bob's 1", total, unique)
	}
}

// personsByDistinctIDs lists a project's persons: their sorted distinct
// ids → uuid.
func personsByDistinctIDs(t *testing.T, env *funnelEnv, p *funnelProject) map[string]string {
	t.Helper()
	st, body := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/", p.id), p.key, nil)
	if st != 200 {
		t.Fatalf("list: %d %v", st, body)
	}
	out := map[string]string{}
	for _, r := range body["results"].([]any) {
		person := r.(map[string]any)
		var ids []string
		for _, d := range person["distinct_ids"].([]any) {
			ids = append(ids, d.(string))
		}
		sort.Strings(ids)
		out[fmt.Sprint(ids)] = person["uuid"].(string)
	}
	return out
}
