package api

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// downEngine is an events engine that cannot be reached: every call
// fails as the engine reports a refused connection (olap's
// UnavailableError, see TestAnEngineOutOfReachIsUnavailable), and is
// counted.
type downEngine struct {
	olap.Engine
	calls atomic.Int64
}

var errEngineDown = &olap.UnavailableError{Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}

func (e *downEngine) Query(context.Context, querybuilder.Statement) (*olap.Rows, error) {
	e.calls.Add(1)
	return nil, errEngineDown
}

func (e *downEngine) Exec(context.Context, querybuilder.Statement) error {
	e.calls.Add(1)
	return errEngineDown
}

func (e *downEngine) Ping(context.Context) error {
	e.calls.Add(1)
	return errEngineDown
}

func TestCachedAnswersAreServedWithTheEngineDown(t *testing.T) {
	f := newFixture(t)
	team, key := f.a.ProjectID, f.a.PersonalAPIKey
	writeEvents(t, team, []time.Time{time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC), time.Date(2026, 3, 6, 9, 0, 0, 0, time.UTC)},
		[]string{"u1", "u1"})
	pageviews := []any{map[string]any{"id": "$pageview"}}
	requests := []struct {
		name, route string
		body        map[string]any
	}{
		{"a trend", "trend", map[string]any{"events": pageviews, "date_from": "2026-03-01", "date_to": "2026-03-07"}},
		{"a trend since the first event", "trend", map[string]any{"events": pageviews, "date_from": "all", "date_to": "2026-03-07"}},
		{"a trend counting persons", "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview", "math": "dau"}},
			"date_from": "2026-03-01", "date_to": "2026-03-07"}},
		{"a funnel", "funnel", map[string]any{"events": []any{map[string]any{"id": "$pageview"}, map[string]any{"id": "$pageview"}},
			"date_from": "2026-03-01", "date_to": "2026-03-07"}},
		{"a timing", "timing", map[string]any{"events": []any{map[string]any{"id": "$pageview"}, map[string]any{"id": "$pageview"}},
			"date_from": "2026-03-01", "date_to": "2026-03-07"}},
	}
	first := map[string]any{}
	for _, r := range requests {
		st, out := call(t, f.h, "POST", fmt.Sprintf("/api/projects/%d/insights/%s/", team, r.route), key, r.body)
		if st != 200 || out["is_cached"] != false {
			t.Fatalf("%s: %d %v", r.name, st, out)
		}
		first[r.name] = out["result"]
	}
	saved := f.newInsight(t, map[string]any{"filters": map[string]any{"insight": "FUNNELS", "events": requests[3].body["events"],
		"date_from": "2026-03-01", "date_to": "2026-03-07"}})

	down := &downEngine{Engine: engine}
	f.s.useEngine(down)
	for _, r := range requests {
		for _, query := range []string{"", "?refresh=force_cache", "?format=csv"} {
			t.Run(r.name+" is answered from the cache"+query, func(t *testing.T) {
				path := fmt.Sprintf("/api/projects/%d/insights/%s/%s", team, r.route, query)
				if query == "?format=csv" {
					w := send(t, f, "POST", path, key, string(mustJSON(t, r.body)))
					if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/csv") {
						t.Fatalf("%d %s", w.Code, w.Body)
					}
					return
				}
				st, out := call(t, f.h, "POST", path, key, r.body)
				if st != 200 || out["is_cached"] != true || fmt.Sprint(out["result"]) != fmt.Sprint(first[r.name]) {
					t.Fatalf("%d %v", st, out)
				}
			})
		}
	}
	t.Run("a saved insight is answered from the cache, force_cache too", func(t *testing.T) {
		for _, query := range []string{"", "?refresh=force_cache"} {
			if out := f.getInsight(t, saved["id"], query); out["is_cached"] != true || out["result"] == nil {
				t.Fatalf("%s: %v", query, out)
			}
		}
	})
	if n := down.calls.Load(); n != 0 {
		t.Fatalf("cached answers called the engine %d times", n)
	}
	t.Run("a request the cache cannot answer is a 503 naming the events store", func(t *testing.T) {
		st, out := call(t, f.h, "POST", f.trend(team), key, map[string]any{"events": pageviews, "date_from": "2026-02-01"})
		if st != 503 || out["code"] != "clickhouse_unavailable" {
			t.Fatalf("%d %v", st, out)
		}
		w := send(t, f, "POST", f.trend(team), key, `{"events": [{"id": "$pageview"}], "date_from": "2026-02-02"}`)
		if w.Header().Get("Retry-After") == "" {
			t.Fatalf("no Retry-After: %v", w.Header())
		}
	})
}

func TestValidationErrorsOfEveryKindAre400s(t *testing.T) {
	f := newFixture(t)
	for _, route := range querybuilder.Routes() {
		t.Run("insights/"+route+" names a bad date_to", func(t *testing.T) {
			body := map[string]any{"events": []any{map[string]any{"id": "a"}, map[string]any{"id": "b"}}, "date_to": "the day after"}
			st, out := call(t, f.h, "POST", fmt.Sprintf("/api/projects/%d/insights/%s/", f.a.ProjectID, route), f.a.PersonalAPIKey, body)
			if st != 400 || out["attr"] != "date_to" || out["type"] != "validation_error" {
				t.Fatalf("%d %v", st, out)
			}
		})
	}
	t.Run("a validation error of the query builder maps to a 400 wherever it comes from", func(t *testing.T) {
		err := fmt.Errorf("built: %w", &querybuilder.ValidationError{Attr: "interval", Detail: "too many buckets"})
		if e := httpx.ToError(err); e.Kind.Status() != 400 || e.Attr != "interval" || e.Detail != "too many buckets" {
			t.Fatalf("%+v", e)
		}
	})
}

func TestResultsPastTheBudgetAreRefusedBeforeTheyRun(t *testing.T) {
	f := newFixture(t)
	down := &downEngine{Engine: engine}
	f.s.useEngine(down)
	for _, tc := range []struct {
		name, route string
		body        map[string]any
		attr        string
	}{
		{"an hourly trend over 416 days by 100 values", "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview"}},
			"interval": "hour", "date_from": "2025-01-01", "date_to": "2026-02-20", "breakdown": "$current_url", "breakdown_limit": 100}, "breakdown_limit"},
		{"the same by 1 000 values (35 GB built in memory before budgets)", "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview"}},
			"interval": "hour", "date_from": "2025-01-01", "date_to": "2026-02-20", "breakdown": "$current_url", "breakdown_limit": 1000}, "breakdown_limit"},
		{"a compared daily trend of 26 series over 10 years", "trend", map[string]any{"events": manyEvents(26), "compare": true,
			"date_from": "2016-01-01", "date_to": "2026-01-01"}, "interval"},
		{"a retention of 100 intervals by 1 000 values", "retention", map[string]any{"total_intervals": 100, "breakdown": "$browser",
			"breakdown_limit": 1000}, "breakdown_limit"},
		{"funnel trends by the hour over a year by 50 values", "funnel", map[string]any{"events": manyEvents(2), "funnel_viz_type": "trends",
			"interval": "hour", "date_from": "2025-01-01", "date_to": "2025-12-31", "breakdown": "$browser", "breakdown_limit": 50}, "interval"},
	} {
		t.Run(tc.name+" is a 400 naming "+tc.attr, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			st, out := call(t, f.h, "POST", fmt.Sprintf("/api/projects/%d/insights/%s/", f.a.ProjectID, tc.route), f.a.PersonalAPIKey, tc.body)
			if st != 400 || out["attr"] != tc.attr || !strings.Contains(fmt.Sprint(out["detail"]), "more than the 100000") {
				t.Fatalf("%d %v", st, out)
			}
			if d := time.Since(start); d > time.Second {
				t.Fatalf("refused after %s", d)
			}
			runtime.ReadMemStats(&after)
			if grew := int64(after.TotalAlloc - before.TotalAlloc); grew > 16<<20 {
				t.Fatalf("refusing allocated %d MiB", grew>>20)
			}
		})
	}
	if n := down.calls.Load(); n != 0 {
		t.Fatalf("the engine was called %d times", n)
	}
}

func manyEvents(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"id": fmt.Sprintf("e%d", i)}
	}
	return out
}
