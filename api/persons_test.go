package api

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder/reference"
)

func TestPersonsListRetrieveAndValues(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := []reference.Event{
		analysistest.Fev("anon-1", "A", analysistest.Mar(1, 9), "browser", "Chrome"),
		analysistest.Fident("ada", "anon-1", analysistest.Mar(1, 10)),
		{UUID: "0190d6a2-5b7e-7c3a-9f1e-000000000001", DistinctID: "ada", Event: "$set", At: analysistest.Fday.Add(analysistest.Mar(1, 11)),
			Props: map[string]any{"$set": map[string]any{"email": "ada@example.com", "plan": "pro"}}},
		analysistest.Fev("bob", "A", analysistest.Mar(2, 9), "browser", "Safari"),
		{UUID: "0190d6a2-5b7e-7c3a-9f1e-000000000002", DistinctID: "bob", Event: "$set", At: analysistest.Fday.Add(analysistest.Mar(2, 10)),
			Props: map[string]any{"$set": map[string]any{"name": "Bob", "plan": "free"}}},
		analysistest.Fev("carol", "B", analysistest.Mar(3, 9), "browser", "Chrome"),
	}
	p := env.project(t, events)
	list := func(t *testing.T, query url.Values) (int, map[string]any) {
		t.Helper()
		return call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/?%s", p.id, query.Encode()), p.key, nil)
	}
	names := func(body map[string]any) []string {
		var out []string
		for _, r := range body["results"].([]any) {
			out = append(out, r.(map[string]any)["name"].(string))
		}
		return out
	}
	t.Run("the list is newest first, merged persons once with every distinct id, named by email or name", func(t *testing.T) {
		st, body := list(t, url.Values{})
		if st != 200 || body["count"] != 3.0 || fmt.Sprint(names(body)) != "[carol Bob ada@example.com]" {
			t.Fatalf("%d %v", st, body)
		}
		ada := body["results"].([]any)[2].(map[string]any)
		if fmt.Sprint(ada["distinct_ids"]) != "[ada anon-1]" || ada["id"] != ada["uuid"] || ada["is_identified"] != true {
			t.Fatalf("%v", ada)
		}
		st, one := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/%s/", p.id, ada["uuid"]), p.key, nil)
		if st != 200 || one["name"] != "ada@example.com" {
			t.Fatalf("%d %v", st, one)
		}
	})
	t.Run("the list filters by a cohort", func(t *testing.T) {
		st, co := call(t, env.h, "POST", fmt.Sprintf("/api/projects/%d/cohorts/", p.id), p.key, map[string]any{"name": "pro",
			"groups": []any{map[string]any{"properties": []any{map[string]any{"key": "plan", "value": "pro", "type": "person"}}}}})
		if st != 201 {
			t.Fatalf("%d %v", st, co)
		}
		cond := fmt.Sprintf(`[{"type": "cohort", "key": "id", "value": %v}]`, co["id"])
		st, body := list(t, url.Values{"properties": {cond}})
		if st != 200 || fmt.Sprint(names(body)) != "[ada@example.com]" {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("the list filters by a static cohort's computed members", func(t *testing.T) {
		st, co := call(t, env.h, "POST", fmt.Sprintf("/api/projects/%d/cohorts/", p.id), p.key, map[string]any{"name": "listed",
			"is_static": true, "persons": []string{"bob"}})
		if st != 201 {
			t.Fatalf("%d %v", st, co)
		}
		p.waitCohort(t, int64(co["id"].(float64)), 1)
		cond := fmt.Sprintf(`[{"type": "cohort", "key": "id", "value": %v}]`, co["id"])
		st, body := list(t, url.Values{"properties": {cond}})
		if st != 200 || fmt.Sprint(names(body)) != "[Bob]" {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("a key sent as a parameter is not copied into the next link", func(t *testing.T) {
		st, body := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/?limit=1&personal_api_key=%s", p.id, p.key), "", nil)
		next, _ := body["next"].(string)
		if st != 200 || next == "" || strings.Contains(next, p.key) || strings.Contains(next, "personal_api_key") {
			t.Fatalf("%d next %q", st, next)
		}
	})
	t.Run("a page past the end still counts every person", func(t *testing.T) {
		st, body := list(t, url.Values{"offset": {"1000"}})
		if st != 200 || body["count"] != 3.0 || len(body["results"].([]any)) != 0 || body["next"] != nil {
			t.Fatalf("%d %v", st, body)
		}
	})
	for name, tc := range map[string]struct {
		query url.Values
		want  string
	}{
		"by distinct id":                      {url.Values{"distinct_id": {"anon-1"}}, "[ada@example.com]"},
		"by search over ids and email":        {url.Values{"search": {"EXAMPLE.com"}}, "[ada@example.com]"},
		"by search over names":                {url.Values{"search": {"bob"}}, "[Bob]"},
		"by property":                         {url.Values{"properties": {`[{"key": "plan", "value": "pro"}]`}}, "[ada@example.com]"},
		"by a property nobody has":            {url.Values{"properties": {`[{"key": "plan", "operator": "is_not_set"}]`}}, "[carol]"},
		"a page of one":                       {url.Values{"limit": {"1"}, "offset": {"1"}}, "[Bob]"},
		"hostile values are data, not syntax": {url.Values{"search": {`x'); DROP TABLE persons; --`}}, "[]"},
	} {
		t.Run("the list filters "+name, func(t *testing.T) {
			st, body := list(t, tc.query)
			if st != 200 || fmt.Sprint(names(body)) != tc.want {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
	t.Run("a property's values, most frequent first", func(t *testing.T) {
		st, body := callList(t, env, p, fmt.Sprintf("/api/projects/%d/persons/values/?key=plan", p.id))
		if st != 200 || fmt.Sprint(body) != "[map[count:1 name:free] map[count:1 name:pro]]" {
			t.Fatalf("%d %v", st, body)
		}
		st, body = callList(t, env, p, fmt.Sprintf("/api/projects/%d/events/values/?key=browser&event=A", p.id))
		if st != 200 || len(body) != 0 { // the events are older than a week
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("bad input, scopes and other organizations' ids", func(t *testing.T) {
		if st, body := list(t, url.Values{"limit": {"-1"}}); st != 400 || body["attr"] != "limit" {
			t.Fatalf("%d %v", st, body)
		}
		if st, body := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/values/", p.id), p.key, nil); st != 400 || body["attr"] != "key" {
			t.Fatalf("%d %v", st, body)
		}
		if st, _ := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/not-a-uuid/", p.id), p.key, nil); st != 404 {
			t.Fatalf("%d", st)
		}
		other := env.project(t, nil)
		if st, _ := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/", other.id), p.key, nil); st != 404 {
			t.Fatalf("another organization's persons: %d", st)
		}
		k, err := env.s.store.CreateKey(t.Context(), fmt.Sprintf("funnel%d@example.com", env.n-1), "insights only", []string{"insight:read"}, metadata.KeyScope{})
		if err != nil {
			t.Fatal(err)
		}
		if st, body := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/", p.id), k.Key, nil); st != 403 {
			t.Fatalf("%d %v", st, body)
		}
	})
}

// callList GETs a JSON list.
func callList(t *testing.T, env *funnelEnv, p *funnelProject, path string) (int, []any) {
	t.Helper()
	w := send(t, &fixture{h: env.h}, "GET", path, p.key, "")
	var out []any
	if w.Code == 200 {
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s: %v %s", path, err, w.Body)
		}
	}
	return w.Code, out
}

func TestPersonPatchSetsPropertiesThroughIngestion(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, []reference.Event{analysistest.Fev("ada", "A", analysistest.Mar(1, 9)), analysistest.Fev("bob", "A", analysistest.Mar(1, 10))})
	_, body := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/?distinct_id=ada", p.id), p.key, nil)
	ada := body["results"].([]any)[0].(map[string]any)["uuid"].(string)
	path := fmt.Sprintf("/api/projects/%d/persons/%s/", p.id, ada)
	st, out := call(t, env.h, "PATCH", path, p.key, map[string]any{"properties": map[string]any{"plan": "pro", "email": "ada@example.com"}})
	if st != 200 || out["name"] != "ada@example.com" || out["properties"].(map[string]any)["plan"] != "pro" {
		t.Fatalf("%d %v", st, out)
	}
	t.Run("analyses see the new value", func(t *testing.T) {
		var series []struct {
			Data []float64 `json:"data"`
		}
		p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": "A"}}, "date_from": "2026-03-01", "date_to": "2026-03-01",
			"properties": []any{map[string]any{"key": "plan", "value": "pro", "type": "person"}}}, &series)
		if len(series) != 1 || series[0].Data[0] != 1 {
			t.Fatalf("%v", series)
		}
	})
	t.Run("bad bodies, unknown persons and keys without person:write", func(t *testing.T) {
		if st, out := call(t, env.h, "PATCH", path, p.key, map[string]any{"properties": "pro"}); st != 400 || out["attr"] != "properties" {
			t.Fatalf("%d %v", st, out)
		}
		if st, _ := call(t, env.h, "PATCH", fmt.Sprintf("/api/projects/%d/persons/%s/", p.id, "0190d6a2-5b7e-7c3a-9f1e-2d4b6a8c0e12"), p.key,
			map[string]any{"properties": map[string]any{}}); st != 404 {
			t.Fatalf("%d", st)
		}
		k, err := env.s.store.CreateKey(t.Context(), fmt.Sprintf("funnel%d@example.com", env.n), "read", []string{"person:read"}, metadata.KeyScope{})
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := call(t, env.h, "PATCH", path, k.Key, map[string]any{"properties": map[string]any{"x": 1}}); st != 403 {
			t.Fatalf("%d", st)
		}
	})
}
