package api

// insights/path as an endpoint: GET and POST answer alike, the project's
// path_cleaning_filters are checked when they are saved and applied with
// path_replacements, and a cached paths answer is keyed by what its
// funnel_filter names (an action edited since is a new answer).

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

func TestPathsAnswerGETAsPOST(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	p := env.project(t, []reference.Event{analysistest.PV("u1", "/home/", 0), analysistest.PV("u1", "/cart", 1), analysistest.Ev("u1", "buy", 2), analysistest.PV("u2", "/home", 0), analysistest.Ev("u2", "buy", 3)})
	body := map[string]any{"insight": "PATHS", "date_from": "2026-04-10", "date_to": "2026-04-10", "include_event_types": []string{"$pageview", "custom_event"},
		"start_point": "/home", "step_limit": 3, "local_path_cleaning_filters": []map[string]string{{"regex": "^/c.*", "alias": "/c"}}}
	want := fmt.Sprint([]analysistest.APIPathEdge{analysistest.Edge("1_/home", "2_/c", 1, 1), analysistest.Edge("1_/home", "2_buy", 1, 3), analysistest.Edge("2_/c", "3_buy", 1, 1)})
	var answers []string
	for _, method := range []string{"POST", "GET"} {
		st, out := p.Ask(t, method, "path", body)
		var got []analysistest.APIPathEdge
		if st != 200 || json.Unmarshal(out["result"], &got) != nil || fmt.Sprint(got) != want {
			t.Fatalf("%s: %d %s, want %s", method, st, out["result"], want)
		}
		answers = append(answers, string(out["is_cached"]))
	}
	// The GET found the POST's answer: one cache key for both.
	if fmt.Sprint(answers) != "[false true]" {
		t.Fatalf("is_cached by POST then GET: %v", answers)
	}
	body["local_path_cleaning_filters"] = []map[string]string{{"regex": "(", "alias": ""}}
	if st, out := p.Ask(t, "GET", "path", body); st != 400 || string(out["attr"]) != `"local_path_cleaning_filters"` {
		t.Fatalf("a bad regex by GET: %d %s", st, mustJSON(t, out))
	}
}

func TestProjectPathCleaningFilters(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	p := env.project(t, []reference.Event{analysistest.PV("u1", "/item/12?ref=ad", 0), analysistest.PV("u1", "/item/7", 1), analysistest.PV("u1", "/cart", 2)})
	project := fmt.Sprintf("/api/projects/%d/", p.id)
	for _, bad := range []any{
		[]map[string]string{{"regex": "/item/(", "alias": "x"}},
		[]map[string]string{{"regex": "", "alias": "x"}},
		[]map[string]string{{"regex": `(?<=a)b`, "alias": "x"}}, // no lookbehind in RE2
		[]any{"not a rule"},
	} {
		st, out := call(t, env.h, "PATCH", project, p.key, map[string]any{"path_cleaning_filters": bad})
		if st != http.StatusBadRequest || out["attr"] != "path_cleaning_filters" {
			t.Errorf("PATCH %v: %d %v, want a 400 naming path_cleaning_filters", bad, st, out)
		}
	}
	rules := []map[string]string{{"regex": `\?.*$`, "alias": ""}, {"regex": `/item/\d+`, "alias": "/item/:id"}}
	if st, out := call(t, env.h, "PATCH", project, p.key, map[string]any{"path_cleaning_filters": rules}); st != 200 {
		t.Fatalf("PATCH valid rules: %d %v", st, out)
	}
	day := reference.Paths{From: time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 4, 11, 0, 0, 0, 0, time.UTC)}
	for _, tc := range []struct {
		name         string
		replacements bool
		want         []analysistest.APIPathEdge
	}{
		{"path_replacements applies the project's rules, in order, before the request's", true,
			[]analysistest.APIPathEdge{analysistest.Edge("1_/item/:id", "2_/c", 1, 1)}},
		{"without path_replacements they are not applied", false,
			[]analysistest.APIPathEdge{analysistest.Edge("1_/item/12?ref=ad", "2_/item/7", 1, 1), analysistest.Edge("2_/item/7", "3_/c", 1, 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := day.Params()
			body["path_replacements"] = tc.replacements
			body["local_path_cleaning_filters"] = []map[string]string{{"regex": "^/ca.*", "alias": "/c"}}
			var got []analysistest.APIPathEdge
			p.result(t, "path", body, &got)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
	t.Run("a rule changed since is a new answer, not the cached one", func(t *testing.T) {
		call(t, env.h, "PATCH", project, p.key, map[string]any{"path_cleaning_filters": []map[string]string{{"regex": `/item/\d+.*`, "alias": "/i"}}})
		body := day.Params()
		body["path_replacements"] = true
		var got []analysistest.APIPathEdge
		p.result(t, "path", body, &got)
		if want := []analysistest.APIPathEdge{analysistest.Edge("1_/i", "2_/cart", 1, 1)}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("got %v\nwant %v", got, want)
		}
	})
}

// Editing an action that only the funnel_filter names changes the
// paths answer: its version keys the cached one.
func TestFunnelPathsFollowAnEditedAction(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	p := env.project(t, []reference.Event{analysistest.PV("u1", "/a", 0), analysistest.Ev("u1", "signup", 1), analysistest.Ev("u1", "x", 2), analysistest.Ev("u1", "buy", 3), analysistest.Ev("u1", "y", 4)})
	st, created := call(t, env.h, "POST", fmt.Sprintf("/api/projects/%d/actions/", p.id), p.key,
		map[string]any{"name": "Converted", "steps": []any{map[string]any{"event": "signup"}}})
	if st != http.StatusCreated {
		t.Fatalf("create the action: %d %v", st, created)
	}
	id := created["id"]
	body := map[string]any{"insight": "PATHS", "date_from": "2026-04-10", "date_to": "2026-04-10",
		"funnel_paths": "funnel_path_after_step", "funnel_step": 2,
		"funnel_filter": map[string]any{"insight": "FUNNELS", "date_from": "2026-04-10", "date_to": "2026-04-10",
			"events":  []any{map[string]any{"id": "$pageview", "type": "events", "order": 0}},
			"actions": []any{map[string]any{"id": id, "type": "actions", "order": 1}}}}
	ask := func() (string, string) {
		st, out := p.Ask(t, "POST", "path", body)
		if st != 200 {
			t.Fatalf("%d %s", st, mustJSON(t, out))
		}
		var got []analysistest.APIPathEdge
		if err := json.Unmarshal(out["result"], &got); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(got), string(out["is_cached"])
	}
	fromSignup := fmt.Sprint([]analysistest.APIPathEdge{analysistest.Edge("1_signup", "2_x", 1, 1), analysistest.Edge("2_x", "3_buy", 1, 1), analysistest.Edge("3_buy", "4_y", 1, 1)})
	for i, cached := range []string{"false", "true"} {
		if got, c := ask(); got != fromSignup || c != cached {
			t.Fatalf("ask %d: %s cached %s, want %s cached %s", i, got, c, fromSignup, cached)
		}
	}
	st, out := call(t, env.h, "PATCH", fmt.Sprintf("/api/projects/%d/actions/%v/", p.id, id), p.key,
		map[string]any{"steps": []any{map[string]any{"event": "buy"}}})
	if st != 200 {
		t.Fatalf("edit the action: %d %v", st, out)
	}
	fromBuy := fmt.Sprint([]analysistest.APIPathEdge{analysistest.Edge("1_buy", "2_y", 1, 1)})
	if got, c := ask(); got != fromBuy || c != "false" {
		t.Fatalf("after the edit: %s cached %s, want %s computed anew", got, c, fromBuy)
	}
}

// TestFunnelPathsRefuseOptionalSteps: an optional step has no time in an
// attempt that skipped it, so paths cannot be sliced at it.
func TestFunnelPathsRefuseOptionalSteps(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	p := env.project(t, []reference.Event{analysistest.PV("u1", "/home", 0), analysistest.Ev("u1", "buy", 2)})
	body := map[string]any{"insight": "PATHS", "date_from": "2026-04-10", "date_to": "2026-04-10", "funnel_paths": "funnel_path_after_step",
		"funnel_step": 1, "funnel_filter": map[string]any{"insight": "FUNNELS", "date_from": "2026-04-10", "date_to": "2026-04-10",
			"events": []any{map[string]any{"id": "$pageview", "order": 0}, map[string]any{"id": "x", "order": 1, "optionalInFunnel": true},
				map[string]any{"id": "buy", "order": 2}}}}
	if st, out := p.Ask(t, "POST", "path", body); st != 400 || string(out["attr"]) != `"funnel_filter"` {
		t.Fatalf("funnel paths of an optional-step funnel: %d %s", st, mustJSON(t, out))
	}
	body["funnel_filter"].(map[string]any)["events"].([]any)[1].(map[string]any)["optionalInFunnel"] = false
	if st, out := p.Ask(t, "POST", "path", body); st != 200 {
		t.Fatalf("the same funnel with every step required: %d %s", st, mustJSON(t, out))
	}
}

// Saved PATHS insights compute, then answer from the cache; as CSV a
// paths answer is one row per edge.
func TestPathsAsSavedInsightsAndCSV(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	p := env.project(t, []reference.Event{analysistest.Ev("u1", "A", 0), analysistest.Ev("u1", "B", 1), analysistest.Ev("u2", "A", 0), analysistest.Ev("u2", "B", 3), analysistest.Ev("u2", "C", 4)})
	f := map[string]any{"insight": "PATHS", "date_from": "2026-04-10", "date_to": "2026-04-10"}
	st, created := call(t, env.h, "POST", fmt.Sprintf("/api/projects/%d/insights/", p.id), p.key, map[string]any{"filters": f})
	if st != 201 {
		t.Fatalf("%d %v", st, created)
	}
	path := fmt.Sprintf("/api/projects/%d/insights/%v/", p.id, created["id"])
	for i, cached := range []bool{false, true} {
		st, out := call(t, env.h, "GET", path, p.key, nil)
		if st != 200 || out["is_cached"] != cached || fmt.Sprint(out["result"]) !=
			"[map[average_conversion_time:120000 source:1_A target:2_B value:2] map[average_conversion_time:60000 source:2_B target:3_C value:1]]" {
			t.Fatalf("retrieve %d: %d %v", i, st, out)
		}
	}
	r := httptest.NewRequest("POST", fmt.Sprintf("/api/projects/%d/insights/path/?format=csv", p.id), strings.NewReader(string(mustJSON(t, f))))
	r.Header.Set("Authorization", "Bearer "+p.key)
	w := httptest.NewRecorder()
	env.h.ServeHTTP(w, r)
	rows, err := csv.NewReader(w.Body).ReadAll()
	want := [][]string{{"source", "target", "value", "average_conversion_time"}, {"1_A", "2_B", "2", "120000"}, {"2_B", "3_C", "1", "60000"}}
	if w.Code != 200 || err != nil || !reflect.DeepEqual(rows, want) {
		t.Fatalf("%d %v %v", w.Code, rows, err)
	}
}
