package api

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// countingEngine counts the analyses (trend statements) run on the real
// engine, each held for delay so concurrent requests overlap.
type countingEngine struct {
	olap.Engine
	trends atomic.Int64
	delay  time.Duration
}

func (e *countingEngine) Query(ctx context.Context, stmt querybuilder.Statement) (*olap.Rows, error) {
	if strings.Contains(stmt.SQL, "FROM events AS e") {
		e.trends.Add(1)
		time.Sleep(e.delay)
	}
	return e.Engine.Query(ctx, stmt)
}

// getInsight retrieves an insight and fails the test unless it answers 200.
func (f *fixture) getInsight(t *testing.T, id any, query string) map[string]any {
	t.Helper()
	st, out := call(t, f.h, "GET", f.insight(f.a.ProjectID, id)+query, f.a.PersonalAPIKey, nil)
	if st != 200 {
		t.Fatalf("%d %v", st, out)
	}
	return out
}

// captureNow sends one $pageview through the capture endpoint, as an SDK does.
func (f *fixture) captureNow(t *testing.T) {
	t.Helper()
	w := send(t, f, "POST", "/capture/", "", fmt.Sprintf(`{"api_key": %q, "event": "$pageview", "distinct_id": "late-user"}`, f.a.ProjectAPIToken))
	if w.Code != 200 {
		t.Fatalf("capture: %d %s", w.Code, w.Body)
	}
}

func seriesCount(t *testing.T, body map[string]any) float64 {
	t.Helper()
	res, _ := body["result"].([]any)
	if len(res) != 1 {
		t.Fatalf("result %v", body["result"])
	}
	return res[0].(map[string]any)["count"].(float64)
}

func TestSavedInsightsComputeAndCacheTheirResults(t *testing.T) {
	f := newFixture(t)
	ce := &countingEngine{Engine: engine}
	f.s.useEngine(ce)
	team := f.a.ProjectID
	now := time.Now().UTC()
	writeEvents(t, team, []time.Time{
		time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC), time.Date(2026, 3, 6, 12, 0, 0, 0, time.UTC),
		now.Add(-time.Minute),
	}, nil)
	past := f.newInsight(t, map[string]any{"name": "Past", "filters": map[string]any{"insight": "TRENDS",
		"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "2026-03-05", "date_to": "2026-03-07"}})
	recent := f.newInsight(t, map[string]any{"name": "Recent", "filters": map[string]any{
		"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "-7d"}})

	t.Run("a retrieve computes the result and the next one answers it from the cache", func(t *testing.T) {
		first := f.getInsight(t, past["id"], "")
		if first["is_cached"] != false || fmt.Sprint(dataOf(t, first)) != "[1 1 0]" || first["timezone"] != "UTC" {
			t.Fatalf("first %v", first)
		}
		for _, k := range []string{"last_refresh", "next_allowed_client_refresh", "cache_target_age"} {
			if _, err := time.Parse(time.RFC3339, fmt.Sprint(first[k])); err != nil {
				t.Errorf("%s = %v", k, first[k])
			}
		}
		if first["query_status"] != nil {
			t.Errorf("query_status %v", first["query_status"])
		}
		n := ce.trends.Load()
		second := f.getInsight(t, past["id"], "")
		if second["is_cached"] != true || second["last_refresh"] != first["last_refresh"] ||
			fmt.Sprint(second["result"]) != fmt.Sprint(first["result"]) || ce.trends.Load() != n {
			t.Fatalf("second %v (engine ran %d more)", second, ce.trends.Load()-n)
		}
	})
	t.Run("refresh=true recomputes once the result is older than its refresh window", func(t *testing.T) {
		if again := f.getInsight(t, past["id"], "?refresh=true"); again["is_cached"] != true {
			t.Fatalf("refresh=true within the window recomputed: %v", again)
		}
		// A closed range's window is an hour: make the cached result two hours old.
		if _, err := f.s.store.DB().Exec(`UPDATE cached_results SET computed_at = computed_at - interval '2 hours'`); err != nil {
			t.Fatal(err)
		}
		if plain := f.getInsight(t, past["id"], ""); plain["is_cached"] != true {
			t.Fatalf("a plain retrieve recomputed a result that is not stale: %v", plain)
		}
		fresh := f.getInsight(t, past["id"], "?refresh=true")
		if fresh["is_cached"] != false || fmt.Sprint(dataOf(t, fresh)) != "[1 1 0]" {
			t.Fatalf("refresh=true %v", fresh)
		}
		if forced := f.getInsight(t, past["id"], "?refresh=force_blocking"); forced["is_cached"] != false {
			t.Fatalf("force_blocking %v", forced)
		}
	})
	t.Run("new events make a range that includes today stale, and leave a past range cached", func(t *testing.T) {
		first := f.getInsight(t, recent["id"], "")
		if f.getInsight(t, recent["id"], "")["is_cached"] != true {
			t.Fatal("the recent range was not cached")
		}
		f.getInsight(t, past["id"], "")
		f.captureNow(t)
		after := f.getInsight(t, recent["id"], "")
		if after["is_cached"] != false || seriesCount(t, after) != seriesCount(t, first)+1 {
			t.Fatalf("after new events: %v (before %v)", after, first)
		}
		if p := f.getInsight(t, past["id"], ""); p["is_cached"] != true {
			t.Fatalf("the past range was recomputed: %v", p)
		}
	})
	t.Run("the cache key changes with the project's timezone and test-account filters", func(t *testing.T) {
		tafs := f.newInsight(t, map[string]any{"name": "No tests", "filters": map[string]any{"insight": "TRENDS",
			"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "2026-03-05", "date_to": "2026-03-07",
			"filter_test_accounts": true}})
		f.getInsight(t, tafs["id"], "")
		patch := func(body map[string]any) {
			if st, out := call(t, f.h, "PATCH", f.project(f.a.OrganizationID, team), f.a.PersonalAPIKey, body); st != 200 {
				t.Fatalf("%d %v", st, out)
			}
		}
		patch(map[string]any{"timezone": "Asia/Tokyo"})
		if tz := f.getInsight(t, past["id"], ""); tz["is_cached"] != false || tz["timezone"] != "Asia/Tokyo" {
			t.Fatalf("after a timezone change: %v", tz)
		}
		patch(map[string]any{"timezone": "UTC"})
		if back := f.getInsight(t, past["id"], ""); back["is_cached"] != true {
			t.Fatalf("back in UTC the UTC result was not reused: %v", back)
		}
		patch(map[string]any{"test_account_filters": []any{map[string]any{"key": "$browser", "value": "Chrome", "operator": "is_not", "type": "event"}}})
		filtered := f.getInsight(t, tafs["id"], "")
		if filtered["is_cached"] != false || fmt.Sprint(dataOf(t, filtered)) != "[0 0 0]" {
			t.Fatalf("after a test-account filter change: %v", filtered)
		}
		if p := f.getInsight(t, past["id"], ""); p["is_cached"] != true {
			t.Fatalf("an insight without filter_test_accounts changed key: %v", p)
		}
	})
	t.Run("filters that do not validate answer a null result and a query_status saying why", func(t *testing.T) {
		bad := f.newInsight(t, map[string]any{"name": "Bad", "filters": map[string]any{"insight": "TRENDS",
			"events": []any{map[string]any{"id": "$pageview", "math": "mode"}}}})
		out := f.getInsight(t, bad["id"], "")
		qs, _ := out["query_status"].(map[string]any)
		if out["result"] != nil || qs["error"] != true || !strings.Contains(fmt.Sprint(qs["error_message"]), "math") {
			t.Fatalf("%v", out)
		}
	})
	t.Run("format=csv renders a retrieved result", func(t *testing.T) {
		w := send(t, f, "GET", f.insight(team, past["id"])+"?format=csv", f.a.PersonalAPIKey, "")
		if w.Code != 200 || !strings.Contains(w.Body.String(), "is_cached") {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	})
	t.Run("funnels compute and cache too", func(t *testing.T) {
		fun := f.newInsight(t, map[string]any{"name": "Funnel", "filters": map[string]any{"insight": "FUNNELS",
			"events":    []any{map[string]any{"id": "$pageview"}, map[string]any{"id": "$pageview"}},
			"date_from": "2026-03-01", "date_to": "2026-03-07"}})
		first := f.getInsight(t, fun["id"], "")
		steps, _ := first["result"].([]any)
		if len(steps) != 2 || first["is_cached"] != false || first["last_refresh"] == nil {
			t.Fatalf("first retrieve: %v", first)
		}
		if again := f.getInsight(t, fun["id"], ""); again["is_cached"] != true || !reflect.DeepEqual(again["result"], first["result"]) {
			t.Fatalf("second retrieve: %v", again)
		}
	})
	t.Run("filters that ask for no analysis keep a null result", func(t *testing.T) {
		ret := f.newInsight(t, map[string]any{"name": "Nothing yet", "filters": map[string]any{"date_from": "-7d"}})
		if out := f.getInsight(t, ret["id"], ""); out["result"] != nil || out["last_refresh"] != nil || out["is_cached"] != false {
			t.Fatalf("%v", out)
		}
	})
}

func TestConcurrentIdenticalAnalysesComputeOnce(t *testing.T) {
	f := newFixture(t)
	ce := &countingEngine{Engine: engine, delay: 300 * time.Millisecond}
	f.s.useEngine(ce)
	team := f.a.ProjectID
	writeEvents(t, team, []time.Time{time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC)}, nil)
	body := `{"events": [{"id": "$pageview"}], "date_from": "2026-03-01", "date_to": "2026-03-07"}`
	const n = 8
	var wg sync.WaitGroup
	codes := make([]int, n)
	results := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := send(t, f, "POST", f.trend(team), f.a.PersonalAPIKey, body)
			codes[i] = w.Code
			var env map[string]json.RawMessage
			if json.Unmarshal(w.Body.Bytes(), &env) == nil {
				results[i] = string(env["result"])
			}
		}()
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 200 || results[i] != results[0] || results[0] == "" {
			t.Fatalf("request %d: %d %s", i, codes[i], results[i])
		}
	}
	if got := ce.trends.Load(); got != 1 {
		t.Fatalf("%d concurrent identical requests ran %d engine queries, want 1", n, got)
	}
}

func TestTrendEndpointAnswersFromTheCache(t *testing.T) {
	f := newFixture(t)
	ce := &countingEngine{Engine: engine}
	f.s.useEngine(ce)
	team, key := f.a.ProjectID, f.a.PersonalAPIKey
	writeEvents(t, team, []time.Time{time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC)}, nil)
	filter := map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "2026-03-05", "date_to": "2026-03-06"}
	post := func(query string, body any) map[string]any {
		t.Helper()
		st, out := call(t, f.h, "POST", f.trend(team)+query, key, body)
		if st != 200 {
			t.Fatalf("%d %v", st, out)
		}
		return out
	}
	first := post("", filter)
	if first["is_cached"] != false {
		t.Fatalf("first %v", first)
	}
	t.Run("the same filter again is cached, by POST or GET, and a saved insight shares it", func(t *testing.T) {
		if again := post("", map[string]any{"filters": filter}); again["is_cached"] != true || again["last_refresh"] != first["last_refresh"] {
			t.Fatalf("%v", again)
		}
		st, got := call(t, f.h, "GET", f.trend(team)+`?events=[{"id":"$pageview"}]&date_from=2026-03-05&date_to=2026-03-06`, key, nil)
		if st != 200 || got["is_cached"] != true {
			t.Fatalf("%d %v", st, got)
		}
		saved := f.newInsight(t, map[string]any{"filters": filter})
		if out := f.getInsight(t, saved["id"], ""); out["is_cached"] != true || out["last_refresh"] != first["last_refresh"] {
			t.Fatalf("%v", out)
		}
		if ce.trends.Load() != 1 {
			t.Fatalf("engine ran %d analyses", ce.trends.Load())
		}
	})
	t.Run("refresh=true recomputes, in the query string or the body", func(t *testing.T) {
		if out := post("?refresh=true", filter); out["is_cached"] != false {
			t.Fatalf("%v", out)
		}
		if out := post("", map[string]any{"filters": filter, "refresh": true}); out["is_cached"] != false {
			t.Fatalf("%v", out)
		}
	})
	t.Run("debug=true answers the statement with a cached result too", func(t *testing.T) {
		out := post("?debug=true", filter)
		if d, _ := out["debug"].(map[string]any); out["is_cached"] != true || !strings.Contains(fmt.Sprint(d["sql"]), "FROM events AS e") {
			t.Fatalf("%v", out)
		}
	})
	t.Run("a refresh no client sends is 400 naming it, in the query string, the body or the query API's", func(t *testing.T) {
		for _, tc := range []struct {
			query string
			body  any
		}{
			{"?refresh=bogus", filter},
			{"", map[string]any{"filters": filter, "refresh": "later"}},
			{"", map[string]any{"filters": filter, "refresh": map[string]any{"x": 1}}},
		} {
			if st, out := call(t, f.h, "POST", f.trend(team)+tc.query, key, tc.body); st != 400 || out["attr"] != "refresh" {
				t.Fatalf("%s %v: %d %v", tc.query, tc.body, st, out)
			}
		}
		for _, refresh := range []any{"bogus", map[string]any{"x": 1}, 7} {
			body := map[string]any{"query": map[string]any{"kind": "HogQLQuery", "query": "SELECT 1"}, "refresh": refresh}
			if st, out := call(t, f.h, "POST", fmt.Sprintf("/api/projects/%d/query/", team), key, body); st != 400 || out["attr"] != "refresh" {
				t.Fatalf("query API refresh %v: %d %v", refresh, st, out)
			}
		}
		for _, refresh := range []any{true, false, "blocking", "async", "lazy_async", "force_cache", nil} {
			body := map[string]any{"query": map[string]any{"kind": "HogQLQuery", "query": "SELECT 1"}, "refresh": refresh}
			if st, out := call(t, f.h, "POST", fmt.Sprintf("/api/projects/%d/query/", team), key, body); st != 200 {
				t.Fatalf("query API refresh %v: %d %v", refresh, st, out)
			}
		}
	})
	t.Run("force_cache answers null when nothing is cached", func(t *testing.T) {
		out := post("?refresh=force_cache", map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "2026-01-01", "date_to": "2026-01-02"})
		if out["result"] != nil || out["is_cached"] != false || out["last_refresh"] != nil {
			t.Fatalf("%v", out)
		}
	})
}

func TestPersonCountsSkipTheOverrideJoinUntilPersonsMerge(t *testing.T) {
	f := newFixture(t)
	team, key := f.a.ProjectID, f.a.PersonalAPIKey
	batch := func(events string) {
		t.Helper()
		w := send(t, f, "POST", "/batch/", "", fmt.Sprintf(`{"api_key": %q, "batch": [%s]}`, f.a.ProjectAPIToken, events))
		if w.Code != 200 {
			t.Fatalf("capture: %d %s", w.Code, w.Body)
		}
	}
	dau := func(query string) (string, string) {
		t.Helper()
		st, out := call(t, f.h, "POST", f.trend(team)+"?debug=true"+query, key, map[string]any{
			"events": []any{map[string]any{"id": "$pageview", "math": "dau"}}, "date_from": "2026-04-01", "date_to": "2026-04-01"})
		if st != 200 {
			t.Fatalf("%d %v", st, out)
		}
		d, _ := out["debug"].(map[string]any)
		return fmt.Sprint(dataOf(t, out)), fmt.Sprint(d["sql"])
	}
	batch(`{"event": "$pageview", "distinct_id": "anon-x", "timestamp": "2026-04-01T10:00:00Z"},
		{"event": "$pageview", "distinct_id": "user-x", "timestamp": "2026-04-01T10:05:00Z"}`)
	data, sql := dau("")
	if data != "[2]" || strings.Contains(sql, "person_overrides") || !strings.Contains(sql, "uniqExact(actor)") {
		t.Fatalf("before any merge: %s\n%s", data, sql)
	}
	// Both ids have persons, so the merge is an override row.
	batch(`{"event": "$identify", "distinct_id": "user-x", "timestamp": "2026-04-01T11:00:00Z", "properties": {"$anon_distinct_id": "anon-x"}}`)
	data, sql = dau("&refresh=true")
	if data != "[1]" || !strings.Contains(sql, "person_overrides") {
		t.Fatalf("after the merge: %s\n%s", data, sql)
	}
}
