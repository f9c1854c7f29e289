package api

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// PostHog's tools wrap HogQL in a DataVisualizationNode and pass
// HogQLQuery.filters: both answer as the HogQL inside does, on
// /query/, as a saved insight and as a dashboard tile. On queryEvents
// (UTC project): pageviews on 3, 4, 5 and 6 March (4, 3, 2, 1), three
// signups on 3 March, 6 events from Chrome.
func TestHogQLNodesOfPostHogsToolsOnKnownData(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	p := env.project(t, queryEvents())
	hog := func(query string, filters any) map[string]any {
		n := map[string]any{"kind": "HogQLQuery", "query": query}
		if filters != nil {
			n["filters"] = filters
		}
		return n
	}
	viz := func(src map[string]any) map[string]any {
		return map[string]any{"kind": "DataVisualizationNode", "source": src, "display": "ActionsTable",
			"chartSettings": map[string]any{"xAxis": map[string]any{"column": "event"}}, "tableSettings": map[string]any{"columns": []any{}}}
	}
	days := map[string]any{"dateRange": map[string]any{"date_from": "2026-03-04", "date_to": "2026-03-06"}}
	for _, tc := range []struct {
		name string
		node map[string]any
		want string
	}{
		{"a viz node answers its HogQL", viz(hog(`SELECT event, count() AS c FROM events GROUP BY event ORDER BY event`, nil)),
			`[["$pageview",10],["signup",3]]`},
		{"the date range reads timestamp >= date_from and < date_to, as sent", hog(`SELECT count() FROM events WHERE {filters}`, days), `[[5]]`},
		{"inside a viz node too", viz(hog(`SELECT count() FROM events WHERE {filters}`, days)), `[[5]]`},
		{"property conditions", hog(`SELECT count() FROM events WHERE {filters}`,
			map[string]any{"properties": []any{map[string]any{"key": "$browser", "value": "Chrome", "type": "event", "operator": "exact"}}}), `[[6]]`},
		{"a hostile value is a value", hog(`SELECT count() FROM events WHERE {filters}`,
			map[string]any{"properties": []any{map[string]any{"key": "$browser') OR 1 = 1 --", "value": "x'); DROP TABLE events; --"}}}), `[[0]]`},
		{"in a column, the placeholder means the same", hog(`SELECT countIf({filters}), count() FROM events`, days), `[[5,13]]`},
		{"in a subquery, it narrows that subquery's events", hog(`SELECT count() FROM persons WHERE id IN (SELECT person_id FROM events WHERE {filters} AND event = 'signup')`,
			map[string]any{"properties": []any{map[string]any{"key": "$browser", "value": "Safari"}}}), `[[1]]`},
		{"without the placeholder filters change nothing, as in PostHog", hog(`SELECT count() FROM events`, days), `[[13]]`},
		{"empty filters are true", hog(`SELECT count() FROM events WHERE {filters}`, map[string]any{}), `[[13]]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := p.query(t, tc.node)
			if code != 200 || string(body["results"]) != tc.want {
				t.Fatalf("want %s, got %d %s", tc.want, code, mustJSON(t, body))
			}
			for _, k := range []string{"columns", "types", "hasMore", "limit"} {
				if _, ok := body[k]; !ok {
					t.Errorf("the HogQL response has no %s: %s", k, mustJSON(t, body))
				}
			}
		})
	}
	t.Run("the environments alias answers a viz node", func(t *testing.T) {
		code, body := postQuery(t, p, fmt.Sprintf("/api/environments/%d/query/", p.id), p.key,
			map[string]any{"query": viz(hog(`SELECT count() FROM events`, nil))})
		if code != 200 || string(body["results"]) != `[[13]]` {
			t.Fatalf("%d %s", code, mustJSON(t, body))
		}
	})
	t.Run("filterTestAccounts applies the project's test-account filters", func(t *testing.T) {
		st, out := call(t, env.h, "PATCH", fmt.Sprintf("/api/organizations/%s/projects/%d/", p.org, p.id), p.key, map[string]any{
			"test_account_filters": []any{map[string]any{"key": "$browser", "value": "Safari", "operator": "is_not", "type": "event"}}})
		if st != 200 {
			t.Fatalf("%d %v", st, out)
		}
		code, body := p.query(t, hog(`SELECT count() FROM events WHERE {filters}`, map[string]any{"filterTestAccounts": true}))
		if code != 200 || string(body["results"]) != `[[6]]` {
			t.Fatalf("%d %s", code, mustJSON(t, body))
		}
	})
	for _, tc := range []struct {
		name string
		node map[string]any
		attr string
	}{
		{"{filters} in a select that reads no events", hog(`SELECT count() FROM persons WHERE {filters}`, days), "query.query"},
		{"a viz node around another node", viz(map[string]any{"kind": "TrendsQuery", "series": []any{}}), "query.source.kind"},
		{"a date that is not one", viz(hog(`SELECT count() FROM events WHERE {filters}`, map[string]any{"dateRange": map[string]any{"date_from": "soon"}})),
			"query.source.filters.dateRange.date_from"},
		{"a field PostHog's viz node does not have", map[string]any{"kind": "DataVisualizationNode", "source": hog("SELECT 1", nil), "sql": "x"}, "query.sql"},
	} {
		t.Run(tc.name+" is a 400 naming it", func(t *testing.T) {
			code, body := p.query(t, tc.node)
			var attr string
			json.Unmarshal(body["attr"], &attr)
			if code != 400 || attr != tc.attr || len(body["detail"]) == 0 || len(body["type"]) == 0 {
				t.Fatalf("want 400 at %s, got %d %s", tc.attr, code, mustJSON(t, body))
			}
		})
	}

	// Saved: the result is the rows, columns beside them; a dashboard's
	// date range fills the filters as PostHog applies it (date_from
	// replaces the range).
	saved := func(t *testing.T, node map[string]any) int64 {
		t.Helper()
		r := httptest.NewRequest("POST", fmt.Sprintf("/api/projects/%d/insights/", p.id), bytesReader(mustJSON(t, map[string]any{"name": "SQL", "query": node})))
		code, created := p.send(t, r)
		if code != 201 {
			t.Fatalf("create: %d %s", code, mustJSON(t, created))
		}
		var id int64
		json.Unmarshal(created["id"], &id)
		return id
	}
	retrieve := func(t *testing.T, id int64, query string) map[string]json.RawMessage {
		t.Helper()
		code, got := p.send(t, httptest.NewRequest("GET", fmt.Sprintf("/api/projects/%d/insights/%d/%s", p.id, id, query), nil))
		if code != 200 {
			t.Fatalf("%d %s", code, mustJSON(t, got))
		}
		return got
	}
	pageviews := viz(hog(`SELECT count() AS pageviews FROM events WHERE event = '$pageview' AND {filters}`, days))
	id := saved(t, pageviews)
	t.Run("a saved viz node computes on refresh=blocking, then answers from the cache", func(t *testing.T) {
		got := retrieve(t, id, "?refresh=blocking")
		if string(got["result"]) != `[[5]]` || string(got["columns"]) != `["pageviews"]` || string(got["is_cached"]) != "false" ||
			string(got["hasMore"]) != "false" || !strings.Contains(string(got["types"]), "UInt64") {
			t.Fatalf("%s", mustJSON(t, got))
		}
		again := retrieve(t, id, "")
		if string(again["result"]) != `[[5]]` || string(again["is_cached"]) != "true" {
			t.Fatalf("%s", mustJSON(t, again))
		}
	})
	t.Run("a dashboard tile of it computes under the dashboard's dates", func(t *testing.T) {
		st, d := call(t, env.h, "POST", fmt.Sprintf("/api/projects/%d/dashboards/", p.id), p.key, map[string]any{
			"name": "SQL", "filters": map[string]any{"date_from": "2026-03-05"}, "tiles": []any{map[string]any{"insight": id}}})
		if st != 201 {
			t.Fatalf("%d %v", st, d)
		}
		st, got := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/dashboards/%v/", p.id, d["id"]), p.key, nil)
		tiles, _ := got["tiles"].([]any)
		if st != 200 || len(tiles) != 1 {
			t.Fatalf("%d %v", st, got)
		}
		in, _ := tiles[0].(map[string]any)["insight"].(map[string]any)
		if fmt.Sprint(in["result"]) != "[[3]]" || fmt.Sprint(in["columns"]) != "[pageviews]" {
			t.Fatalf("tile %v", tiles[0])
		}
	})
	t.Run("a saved statement the engine refuses answers a null result and says why", func(t *testing.T) {
		got := retrieve(t, saved(t, hog(`SELECT 1 + 'a' FROM events`, nil)), "?refresh=blocking")
		if string(got["result"]) != "null" || !strings.Contains(string(got["query_status"]), "Illegal types") {
			t.Fatalf("%s", mustJSON(t, got))
		}
	})
	t.Run("a saved HogQLQuery computes as well", func(t *testing.T) {
		got := retrieve(t, saved(t, hog(`SELECT event FROM events WHERE {filters} ORDER BY event LIMIT 1`, nil)), "?refresh=blocking")
		if string(got["result"]) != `[["$pageview"]]` || string(got["hasMore"]) != "true" {
			t.Fatalf("%s", mustJSON(t, got))
		}
	})
}
