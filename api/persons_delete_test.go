package api

import (
	"fmt"
	"net/http"
	"sort"
	"testing"

	"github.com/insightd/insightd/metadata"
)

// DELETE persons/:id/: the person leaves the list and retrieve, its
// events stay (and count) unless delete_events=true, which also takes the
// events of the persons merged into it; a later event of one of its
// distinct ids makes a new person.
func TestPersonDelete(t *testing.T) {
	env := newFunnelEnv(t)
	events := []refEvent{
		// ada: two persons (anon-1, ada) merged by $identify, so anon-1's
		// pageview is stored under a merged-away person's id.
		fev("anon-1", "$pageview", mar(1, 9)),
		fev("ada", "$pageview", mar(1, 10)),
		fident("ada", "anon-1", mar(1, 11)),
		fev("ada", "$pageview", mar(1, 12)),
		fev("bob", "$pageview", mar(1, 13)),
		fev("carol", "$pageview", mar(1, 14)),
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
		p.capture(t, []refEvent{fev("bob", "$pageview", mar(1, 15)), fev("anon-1", "$pageview", mar(1, 16))})
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
		other := env.project(t, []refEvent{fev("dan", "$pageview", mar(1, 9))})
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
