package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder/reference"
)

// queryEvents are the known data of the query API's tests: four users
// over the first week of March 2026.
func queryEvents() []reference.Event {
	var out []reference.Event
	for i, who := range []string{"u1", "u2", "u3", "u4"} {
		browser := "Chrome"
		if i%2 == 1 {
			browser = "Safari"
		}
		for d := 0; d <= i; d++ {
			out = append(out, analysistest.Fev(who, "$pageview", time.Duration(d)*24*time.Hour, "$browser", browser, "plan", "pro"))
		}
		if i < 3 {
			out = append(out, analysistest.Fev(who, "signup", time.Hour, "$browser", browser))
		}
	}
	return out
}

// postQuery sends body to path with key and decodes the answer.
func postQuery(t *testing.T, p *funnelProject, path, key string, body any) (int, map[string]json.RawMessage) {
	t.Helper()
	r := httptest.NewRequest("POST", path, bytes.NewReader(mustJSON(t, body)))
	r.Host = "insightd.test"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	p.env.h.ServeHTTP(w, r)
	var out map[string]json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s: %d %q", path, w.Code, w.Body)
	}
	return w.Code, out
}

func (p *funnelProject) query(t *testing.T, node any) (int, map[string]json.RawMessage) {
	t.Helper()
	return postQuery(t, p, fmt.Sprintf("/api/projects/%d/query/", p.id), p.key, map[string]any{"query": node})
}

func js(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

// Every insight node kind answers what its legacy request answers, from
// the same cache entry: the legacy request computes, the node then reads
// its answer.
func TestInsightNodesAnswerAsTheirLegacyRequests(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	p := env.project(t, queryEvents())
	const dr = `"dateRange": {"date_from": "2026-03-01", "date_to": "2026-03-07"}`
	const lr = `"date_from": "2026-03-01", "date_to": "2026-03-07"`
	for _, tc := range []struct{ name, route, node, legacy string }{
		{"trends with dau, a breakdown and display", "trend",
			`{"kind": "InsightVizNode", "source": {"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview", "name": "$pageview", "math": "dau"}, {"kind": "EventsNode", "event": "signup"}], ` + dr + `, "interval": "day", "breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}, "trendsFilter": {"display": "ActionsLineGraph", "showLegend": true}}, "full": true}`,
			`{"insight": "TRENDS", "events": [{"id": "$pageview", "type": "events", "order": 0, "name": "$pageview", "math": "dau"}, {"id": "signup", "type": "events", "order": 1}], ` + lr + `, "interval": "day", "breakdown": "$browser", "breakdown_type": "event", "display": "ActionsLineGraph"}`},
		{"trends with a formula, compare and properties", "trend",
			`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}, {"kind": "EventsNode", "event": "signup"}], ` + dr + `, "properties": [{"key": "$browser", "value": ["Chrome"], "operator": "exact", "type": "event"}], "compareFilter": {"compare": true}, "trendsFilter": {"formula": "A+B"}}`,
			`{"insight": "TRENDS", "events": [{"id": "$pageview", "type": "events", "order": 0}, {"id": "signup", "type": "events", "order": 1}], ` + lr + `, "properties": [{"key": "$browser", "value": ["Chrome"], "operator": "exact", "type": "event"}], "compare": true, "formula": "A+B"}`},
		{"funnels", "funnel",
			`{"kind": "InsightVizNode", "source": {"kind": "FunnelsQuery", "series": [{"kind": "EventsNode", "event": "signup"}, {"kind": "EventsNode", "event": "$pageview"}], ` + dr + `, "funnelsFilter": {"funnelVizType": "steps", "funnelOrderType": "ordered", "funnelWindowInterval": 7, "funnelWindowIntervalUnit": "day", "layout": "horizontal"}}}`,
			`{"insight": "FUNNELS", "events": [{"id": "signup", "type": "events", "order": 0}, {"id": "$pageview", "type": "events", "order": 1}], ` + lr + `, "funnel_viz_type": "steps", "funnel_order_type": "ordered", "funnel_window_interval": 7, "funnel_window_interval_unit": "day"}`},
		{"retention", "retention",
			`{"kind": "InsightVizNode", "source": {"kind": "RetentionQuery", "dateRange": {"date_to": "2026-03-07"}, "retentionFilter": {"period": "Day", "totalIntervals": 5, "retentionType": "retention_first_time", "targetEntity": {"id": "signup", "type": "events"}, "returningEntity": {"id": "$pageview", "type": "events"}, "showMean": true}}}`,
			`{"insight": "RETENTION", "date_to": "2026-03-07", "period": "Day", "total_intervals": 5, "retention_type": "retention_first_time", "target_entity": {"id": "signup", "type": "events"}, "returning_entity": {"id": "$pageview", "type": "events"}}`},
		{"paths", "path",
			`{"kind": "PathsQuery", ` + dr + `, "pathsFilter": {"includeEventTypes": ["custom_event"], "stepLimit": 4}}`,
			`{"insight": "PATHS", ` + lr + `, "include_event_types": ["custom_event"], "step_limit": 4}`},
		{"stickiness", "trend",
			`{"kind": "InsightVizNode", "source": {"kind": "StickinessQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], ` + dr + `, "stickinessFilter": {"showLegend": false}}}`,
			`{"insight": "STICKINESS", "events": [{"id": "$pageview", "type": "events", "order": 0}], ` + lr + `}`},
		{"lifecycle", "trend",
			`{"kind": "LifecycleQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], ` + dr + `, "interval": "day", "lifecycleFilter": {"toggledLifecycles": ["new"]}}`,
			`{"insight": "LIFECYCLE", "events": [{"id": "$pageview", "type": "events", "order": 0}], ` + lr + `, "interval": "day"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, legacy := p.Ask(t, "POST", tc.route, js(t, tc.legacy))
			if code != 200 {
				t.Fatalf("legacy: %d %s", code, mustJSON(t, legacy))
			}
			code, got := p.query(t, js(t, tc.node))
			if code != 200 {
				t.Fatalf("node: %d %s", code, mustJSON(t, got))
			}
			if string(got["results"]) != string(legacy["result"]) || string(got["results"]) == "null" {
				t.Fatalf("node results %s\nlegacy result %s", got["results"], legacy["result"])
			}
			if string(got["is_cached"]) != "true" {
				t.Errorf("the node did not read the legacy request's cache entry: %s", mustJSON(t, got))
			}
			if string(got["timezone"]) != `"UTC"` || got["last_refresh"] == nil {
				t.Errorf("envelope %s", mustJSON(t, got))
			}
		})
	}
}

// Nodes the API cannot answer as asked are 400s naming the JSON path.
func TestInsightNodesRefuseWhatTheyCannotHonour(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, queryEvents())
	for node, attr := range map[string]string{
		`{"kind": "WebOverviewQuery"}`:                                                                                                               "query.kind",
		`{"kind": "InsightVizNode", "source": {"kind": "DataTableNode"}}`:                                                                            "query.source.kind",
		`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "a", "math_hogql": "sum(1)"}]}`:                                          "query.series[0].math_hogql",
		`{"kind": "TrendsQuery", "series": [{"kind": "DataWarehouseNode"}]}`:                                                                         "query.series[0].kind",
		`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "a"}], "dateRnge": {}}`:                                                  "query.dateRnge",
		`{"kind": "TrendsQuery", "series": [], "trendsFilter": {"smoothingIntervals": 7}}`:                                                           "query.trendsFilter.smoothingIntervals",
		`{"kind": "RetentionQuery", "retentionFilter": {"cumulative": true}}`:                                                                        "query.retentionFilter.cumulative",
		`{"kind": "FunnelsQuery", "series": [], "funnelsFilter": {"funnelAggregateByHogQL": "properties.$x"}}`:                                       "query.funnelsFilter.funnelAggregateByHogQL",
		`{"kind": "PathsQuery", "funnelPathsFilter": {"funnelSource": {"kind": "TrendsQuery", "series": []}}}`:                                       "query.funnelPathsFilter.funnelSource.kind",
		`{"kind": "HogQLQuery", "query": "SELECT 1", "placeholders": {"x": {"kind": "HogQLPlaceholder"}}}`:                                           "query.placeholders",
		`{"kind": "EventsQuery", "select": ["event"], "fixedProperties": [{"key": "a"}]}`:                                                            "query.fixedProperties",
		`{"kind": "EventsQuery", "select": ["event"], "where": ["team_id = 1"]}`:                                                                     "query",
		`{"kind": "EventsQuery", "select": ["event"], "properties": [{"type": "group", "group_type_index": 0, "key": "industry", "value": "tech"}]}`: "query.properties",
		// Problems the kind finds name the node's fields, not the legacy
		// parameters they became.
		`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "a"}], "interval": "year"}`:                                             "query.interval",
		`{"kind": "FunnelsQuery", "series": []}`:                                                                                                    "query.series",
		`{"kind": "FunnelsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], "funnelsFilter": {"funnelVizType": "time_to_convert"}}`: "query.funnelsFilter.funnelVizType",
		`{"kind": "FunnelsQuery", "series": [{"kind": "EventsNode", "event": "a"}, {"kind": "EventsNode", "event": "b"}], "funnelsFilter": {"exclusions": [{"kind": "EventsNode", "event": "x", "funnelFromStep": 0, "funnelToStep": 5}]}}`:                                              "query.funnelsFilter.exclusions",
		`{"kind": "RetentionQuery", "properties": [{"key": "a", "operator": "no_such_operator", "value": 1}], "retentionFilter": {"targetEntity": {"id": "$pageview", "type": "events", "properties": []}, "returningEntity": {"id": "$pageview", "type": "events", "properties": []}}}`: "query.properties",
		`{"kind": "InsightVizNode", "source": {"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "a"}], "dateRange": {"date_from": "yesterday-ish"}}}`:                                                                                                                   "query.source.dateRange.date_from",
	} {
		code, body := p.query(t, js(t, node))
		var got string
		json.Unmarshal(body["attr"], &got)
		if code != 400 || got != attr {
			t.Errorf("%s: want 400 naming %s, got %d %s", node, attr, code, mustJSON(t, body))
		}
	}
}

// HogQL runs over the project's rows only, with its limits.
func TestHogQLQueriesOnKnownData(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	p := env.project(t, queryEvents())
	other := env.project(t, []reference.Event{analysistest.Fev("x1", "$pageview", 0, "$browser", "Chrome"), analysistest.Fev("x2", "signup", 0)})
	hog := func(t *testing.T, q string, values map[string]any) (int, map[string]json.RawMessage) {
		t.Helper()
		return p.query(t, map[string]any{"kind": "HogQLQuery", "query": q, "values": values})
	}
	for _, tc := range []struct {
		query  string
		values map[string]any
		want   string
		more   bool
	}{
		{`SELECT event, count() AS c FROM events GROUP BY event ORDER BY event`, nil, `[["$pageview",10],["signup",3]]`, false},
		{`SELECT count() FROM events WHERE properties.$browser = 'Chrome'`, nil, `[[6]]`, false},
		{`SELECT count() FROM events WHERE properties.plan = {plan} AND event = {e}`, map[string]any{"plan": "pro", "e": "$pageview"}, `[[10]]`, false},
		// A placeholder may be named by a keyword, as PostHog's grammar allows.
		{`SELECT count() FROM events WHERE event = {end} AND timestamp >= {from}`, map[string]any{"end": "signup", "from": "2026-01-01"}, `[[3]]`, false},
		{`SELECT count(DISTINCT person_id), uniq(distinct_id) FROM events`, nil, `[[4,4]]`, false},
		{`SELECT count() FROM persons`, nil, `[[4]]`, false},
		{`SELECT toDate(timestamp) AS day, count() FROM events WHERE event = '$pageview' AND timestamp >= '2026-03-04' GROUP BY day ORDER BY day`, nil, `[["2026-03-04",3],["2026-03-05",2],["2026-03-06",1]]`, false},
		{`SELECT e.event FROM events AS e WHERE e.distinct_id IN (SELECT distinct_id FROM events WHERE event = 'signup') AND e.event = 'signup' ORDER BY e.timestamp LIMIT 2`, nil, `[["signup"],["signup"]]`, true},
		{`WITH t AS (SELECT distinct_id, count() AS n FROM events GROUP BY distinct_id) SELECT max(n) FROM t`, nil, `[[4]]`, false},
		{`SELECT a.event FROM events AS a JOIN events AS b ON a.event = b.event`, nil, "", true},
		// Each part of a union keeps its own LIMIT; the union is read under the default one.
		{`SELECT event FROM events WHERE event = 'signup' LIMIT 1 UNION ALL SELECT event FROM events WHERE event = 'signup'`, nil, `[["signup"],["signup"],["signup"],["signup"]]`, false},
		{`SELECT event FROM events WHERE event = 'signup' UNION ALL SELECT event FROM events WHERE event = 'signup' LIMIT 2`, nil, `[["signup"],["signup"],["signup"],["signup"],["signup"]]`, false},
		{`SELECT a.event FROM events AS a JOIN events AS b ON a.event = b.event UNION ALL SELECT event FROM events LIMIT 1000`, nil, "", true},
	} {
		t.Run(tc.query, func(t *testing.T) {
			code, body := hog(t, tc.query, tc.values)
			if code != 200 {
				t.Fatalf("%d %s", code, mustJSON(t, body))
			}
			var rows []any
			json.Unmarshal(body["results"], &rows)
			if tc.want != "" && string(body["results"]) != tc.want {
				t.Errorf("results %s, want %s", body["results"], tc.want)
			}
			if tc.want == "" && len(rows) != 100 {
				t.Errorf("want the default 100 rows, got %d", len(rows))
			}
			if string(body["hasMore"]) != fmt.Sprint(tc.more) || body["columns"] == nil || body["types"] == nil {
				t.Errorf("envelope %s", mustJSON(t, body))
			}
		})
	}
	t.Run("a LIMIT above 50 000 is lowered to it, with hasMore", func(t *testing.T) {
		code, body := hog(t, `SELECT a.uuid FROM events AS a JOIN events AS b ON a.event = b.event JOIN events AS c ON a.event = c.event `+
			`JOIN events AS d ON a.event = d.event JOIN events AS f ON a.event = f.event WHERE a.event = '$pageview' LIMIT 60000`, nil)
		var rows []any
		json.Unmarshal(body["results"], &rows)
		if code != 200 || len(rows) != 50000 || string(body["hasMore"]) != "true" {
			t.Fatalf("%d rows %d hasMore %s", code, len(rows), body["hasMore"])
		}
	})
	t.Run("another project's rows never appear", func(t *testing.T) {
		for _, q := range []string{`SELECT count() FROM events`, `SELECT count() FROM events AS a LEFT JOIN persons AS b ON a.person_id = b.id`,
			`SELECT count() FROM (SELECT event FROM events) AS s`, `SELECT count() FROM events WHERE distinct_id IN ('x1', 'x2')`} {
			_, body := hog(t, q, nil)
			if s := string(body["results"]); s != `[[13]]` && s != `[[0]]` {
				t.Errorf("%s: %s", q, mustJSON(t, body))
			}
		}
		_, body := postQuery(t, other, fmt.Sprintf("/api/projects/%d/query/", other.id), other.key,
			map[string]any{"query": map[string]any{"kind": "HogQLQuery", "query": "SELECT count() FROM events"}})
		if string(body["results"]) != `[[2]]` {
			t.Errorf("other project: %s", mustJSON(t, body))
		}
	})
	deep := strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300)
	for _, q := range []string{
		`SELECT count() FROM events WHERE team_id = 1`, `SELECT name FROM system.tables`, `SELECT * FROM file('/etc/passwd')`,
		`SELECT 1 FROM url('http://x')`, `SELECT count() FROM events SETTINGS max_threads = 1`, `SELECT 1 INTO OUTFILE '/tmp/x'`,
		`SELECT ` + deep, `SELECT 1` + strings.Repeat("0", 100), `SELECT '` + strings.Repeat("x", 20000) + `'`,
		`SELECT count() FROM person_distinct_id`, `SELECT count() FROM events e JOIN groups g ON 1 = 1`, `SELECT sleep(3)`,
		`SELECT * FROM events`, `SELECT event FROM events; DROP TABLE events`, `SELECT {missing}`,
		// a text column as a condition; subqueries compiling past what the engine parses
		`SELECT event FROM events WHERE event`,
		`SELECT ` + strings.TrimSuffix(strings.Repeat("(SELECT count() FROM events), ", 1000), ", "),
	} {
		code, body := hog(t, q, nil)
		var attr string
		json.Unmarshal(body["attr"], &attr)
		if code != 400 || attr != "query.query" {
			t.Errorf("%.80s: want 400 naming query.query, got %d %.300s", q, code, mustJSON(t, body))
		}
	}
}

// EventsQuery lists events with HogQL columns and reference.Conditions; the
// environments alias answers the same; the scope is query:read.
func TestEventsQueryAliasAndScope(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	p := env.project(t, queryEvents())
	node := map[string]any{"kind": "EventsQuery", "select": []string{"*", "event", "properties.$browser", "timestamp"},
		"where": []string{"properties.$browser = 'Safari'"}, "event": "$pageview", "after": "2026-03-01", "before": "2026-03-31",
		"orderBy": []string{"timestamp DESC"}, "limit": 3}
	var first string
	for _, path := range []string{"/api/projects/%d/query/", "/api/environments/%d/query/"} {
		code, body := postQuery(t, p, fmt.Sprintf(path, p.id), p.key, map[string]any{"query": node})
		var rows [][]any
		json.Unmarshal(body["results"], &rows)
		if code != 200 || len(rows) != 3 || string(body["hasMore"]) != "true" {
			t.Fatalf("%s: %d %s", path, code, mustJSON(t, body))
		}
		star, _ := rows[0][0].(map[string]any)
		if rows[0][1] != "$pageview" || rows[0][2] != "Safari" || star["event"] != "$pageview" || star["properties"] == nil {
			t.Errorf("row %v", rows[0])
		}
		if first == "" {
			first = string(body["results"])
		} else if first != string(body["results"]) {
			t.Errorf("the alias answered %s, the project route %s", body["results"], first)
		}
	}
	agg := map[string]any{"kind": "EventsQuery", "select": []string{"event", "count()"}, "orderBy": []string{"event"}}
	if _, body := p.query(t, agg); string(body["results"]) != `[["$pageview",10],["signup",3]]` {
		t.Errorf("aggregate: %s", mustJSON(t, body))
	}
	agg["after"] = "all" // no lower bound, as PostHog reads it (it was a 400)
	if code, body := p.query(t, agg); code != 200 || string(body["results"]) != `[["$pageview",10],["signup",3]]` {
		t.Errorf("after all: %d %s", code, mustJSON(t, body))
	}
	// Person reference.Conditions (a test-account filter on email, the usual one)
	// read the event's person as person.properties does. The PATCH of a
	// person's properties is a $set event of theirs, as PostHog's is.
	st, people := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/?distinct_id=u4", p.id), p.key, nil)
	if st != 200 || len(people["results"].([]any)) != 1 {
		t.Fatalf("%d %v", st, people)
	}
	u4 := people["results"].([]any)[0].(map[string]any)["uuid"]
	if st, out := call(t, env.h, "PATCH", fmt.Sprintf("/api/projects/%d/persons/%v/", p.id, u4), p.key,
		map[string]any{"properties": map[string]any{"email": "u4@acme.com"}}); st != 200 {
		t.Fatalf("%d %v", st, out)
	}
	if st, out := call(t, env.h, "PATCH", fmt.Sprintf("/api/projects/%d/", p.id), p.key, map[string]any{"test_account_filters": []any{
		map[string]any{"key": "email", "value": "@acme.com", "operator": "not_icontains", "type": "person"}}}); st != 200 {
		t.Fatalf("%d %v", st, out)
	}
	counts := map[string]any{"kind": "EventsQuery", "select": []string{"event", "count()"}, "orderBy": []string{"event"}, "filterTestAccounts": true}
	if code, body := p.query(t, counts); code != 200 || string(body["results"]) != `[["$pageview",6],["signup",3]]` {
		t.Errorf("test accounts left out: %d %s", code, mustJSON(t, body))
	}
	delete(counts, "filterTestAccounts")
	counts["properties"] = []any{map[string]any{"key": "email", "value": "u4@acme.com", "operator": "exact", "type": "person"}}
	if code, body := p.query(t, counts); code != 200 || string(body["results"]) != `[["$pageview",4],["$set",1]]` {
		t.Errorf("a person condition: %d %s", code, mustJSON(t, body))
	}
	st, co := call(t, env.h, "POST", fmt.Sprintf("/api/projects/%d/cohorts/", p.id), p.key, map[string]any{"name": "u1",
		"is_static": true, "persons": []string{"u1"}})
	if st != 201 {
		t.Fatalf("%d %v", st, co)
	}
	p.waitCohort(t, int64(co["id"].(float64)), 1)
	counts["properties"] = []any{map[string]any{"key": "id", "value": co["id"], "type": "cohort"}}
	if code, body := p.query(t, counts); code != 200 || string(body["results"]) != `[["$pageview",1],["signup",1]]` {
		t.Errorf("a cohort condition: %d %s", code, mustJSON(t, body))
	}
	k, err := env.s.store.CreateKey(t.Context(), fmt.Sprintf("funnel%d@example.com", env.n), "insights only", []string{"insight:read"}, metadata.KeyScope{})
	if err != nil {
		t.Fatal(err)
	}
	if code, body := postQuery(t, p, fmt.Sprintf("/api/projects/%d/query/", p.id), k.Key, map[string]any{"query": node}); code != 403 {
		t.Errorf("without query:read: %d %s", code, mustJSON(t, body))
	}
}

// dateRange.explicitDate (explicit_date in legacy filters) reads events
// between the dates as sent; without it a day range runs from the first
// day's start to the last day's end. (It was ignored: a 12:00-06:00 range
// counted both whole days.)
func TestExplicitDatesReadTheDatesAsSent(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	p := env.project(t, []reference.Event{analysistest.Fev("u1", "$pageview", analysistest.Mar(1, 10)), analysistest.Fev("u1", "$pageview", analysistest.Mar(1, 14)),
		analysistest.Fev("u2", "$pageview", analysistest.Mar(2, 5)), analysistest.Fev("u2", "$pageview", analysistest.Mar(2, 8))})
	node := func(explicit bool) map[string]any {
		return map[string]any{"kind": "TrendsQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "$pageview"}},
			"interval": "day", "trendsFilter": map[string]any{"display": "ActionsTable"},
			"dateRange": map[string]any{"date_from": "2026-03-01T12:00:00", "date_to": "2026-03-02T06:00:00", "explicitDate": explicit}}
	}
	for explicit, want := range map[bool]string{true: "2", false: "4"} {
		code, body := p.query(t, node(explicit))
		var series []struct {
			Value float64 `json:"aggregated_value"`
		}
		json.Unmarshal(body["results"], &series)
		if code != 200 || len(series) != 1 || fmt.Sprint(series[0].Value) != want {
			t.Errorf("explicitDate %v: %d %s, want %s", explicit, code, body["results"], want)
		}
	}
	var legacy []struct {
		Data []float64 `json:"data"`
	}
	p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "explicit_date": true,
		"date_from": "2026-03-01T12:00:00", "date_to": "2026-03-02T06:00:00"}, &legacy)
	if len(legacy) != 1 || fmt.Sprint(legacy[0].Data) != "[1 1]" {
		t.Errorf("legacy explicit_date: %+v, want one event on each day", legacy)
	}
}
