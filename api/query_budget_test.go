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
	"github.com/insightd/insightd/querybuilder"
	"github.com/insightd/insightd/querybuilder/reference"
)

// budgetEvents are 3 000 events of 300 people: a self-join on
// distinct_id holds 300 keys and 3 000 rows in its hash table and
// multiplies them to 30 000 (max_rows_in_join counts the keys).
func budgetEvents() []reference.Event {
	out := make([]reference.Event, 0, 3000)
	for i := 0; i < 3000; i++ {
		out = append(out, analysistest.Fev(fmt.Sprintf("u%d", i%300), "$pageview", time.Duration(i)*time.Minute))
	}
	return out
}

const selfJoin = "SELECT count() FROM events a JOIN events b ON a.distinct_id = b.distinct_id"

// Every HogQL statement runs under the server's budgets (rows read, a
// join's table, memory, time, result rows), set on the statement as
// engine settings: one past a budget is refused as a 400 naming the
// statement (query.query, query.source.query in a DataVisualizationNode,
// a saved insight's query_status), never a 500, and the same statement
// runs under the defaults.
func TestHogQLPastTheServersBudgetsAnswers400(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, budgetEvents())
	hog := func(sql string) map[string]any { return map[string]any{"kind": "HogQLQuery", "query": sql} }

	code, body := p.query(t, hog(selfJoin))
	var ok struct{ Results [][]any }
	_ = json.Unmarshal(mustJSON(t, body), &ok)
	if code != 200 || len(ok.Results) != 1 || fmt.Sprint(ok.Results[0][0]) != "30000" {
		t.Fatalf("the self-join under the default budgets: %d %s", code, mustJSON(t, body))
	}

	defaults := env.s.cfg.Limits
	t.Cleanup(func() { env.s.useLimits(defaults) })
	for _, tc := range []struct {
		name   string
		limit  func(l *querybuilder.Limits)
		node   map[string]any
		attr   string
		detail string
	}{
		{"a join's table past max_rows_in_join (191)", func(l *querybuilder.Limits) { l.MaxRowsInJoin = 100 },
			hog(selfJoin), "query.query", "join"},
		{"a join's table past max_bytes_in_join (191)", func(l *querybuilder.Limits) { l.MaxBytesInJoin = 16 << 10 },
			hog(selfJoin), "query.query", "join"},
		{"the join wrapped in a DataVisualizationNode", func(l *querybuilder.Limits) { l.MaxRowsInJoin = 100 },
			map[string]any{"kind": "DataVisualizationNode", "source": hog(selfJoin)}, "query.source.query", "join"},
		{"rows read past max_rows_to_read (158)", func(l *querybuilder.Limits) { l.MaxRowsToRead = 1000 },
			hog("SELECT count() FROM events WHERE distinct_id != ''"), "query.query", "read more rows"},
		{"the self-join past max_rows_to_read", func(l *querybuilder.Limits) { l.MaxRowsToRead = 5000 },
			hog(selfJoin), "query.query", "read more rows"},
		{"rows answered past max_result_rows (396)", func(l *querybuilder.Limits) { l.MaxResultRows = 100 },
			hog("SELECT uuid FROM events LIMIT 1000"), "query.query", "return more rows"},
		{"memory past max_memory_usage (241)", func(l *querybuilder.Limits) { l.MaxMemoryUsage = 4 << 20 },
			hog("SELECT groupArray(repeat(toString(uuid), 1000)) FROM events"), "query.query", "memory"},
		{"time past max_execution_time (159)", func(l *querybuilder.Limits) { l.MaxExecutionTime = 1 },
			hog("SELECT count() FROM events a JOIN events b ON a.event = b.event JOIN events c ON b.event = c.event"),
			"query.query", "run longer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := defaults
			tc.limit(&l)
			env.s.useLimits(l)
			defer env.s.useLimits(defaults)
			start := time.Now()
			code, body := p.query(t, tc.node)
			var attr, detail, errCode string
			_ = json.Unmarshal(body["attr"], &attr)
			_ = json.Unmarshal(body["detail"], &detail)
			_ = json.Unmarshal(body["code"], &errCode)
			if code != 400 || errCode != "query_over_budget" || attr != tc.attr || !strings.Contains(detail, tc.detail) {
				t.Fatalf("want 400 query_over_budget at %s saying %q, got %d %s", tc.attr, tc.detail, code, mustJSON(t, body))
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("refused after %s", took)
			}
		})
	}

	t.Run("a saved HogQL insight past a budget says so in its query_status", func(t *testing.T) {
		doc := mustJSON(t, map[string]any{"name": "Self-join", "query": hog(selfJoin)})
		w := serve(env, "POST", fmt.Sprintf("/api/projects/%d/insights/", p.id), p.key, doc)
		var created struct{ ID int64 }
		if w.Code != 201 || json.Unmarshal(w.Body.Bytes(), &created) != nil {
			t.Fatalf("create: %d %s", w.Code, w.Body)
		}
		l := defaults
		l.MaxRowsInJoin = 100
		env.s.useLimits(l)
		defer env.s.useLimits(defaults)
		w = serve(env, "GET", fmt.Sprintf("/api/projects/%d/insights/%d/?refresh=true", p.id, created.ID), p.key, nil)
		var out struct {
			Result      json.RawMessage
			QueryStatus struct {
				Error        bool   `json:"error"`
				ErrorMessage string `json:"error_message"`
			} `json:"query_status"`
		}
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &out) != nil || string(out.Result) != "null" ||
			!out.QueryStatus.Error || !strings.Contains(out.QueryStatus.ErrorMessage, "join") {
			t.Fatalf("a saved self-join past the join budget: %d %s", w.Code, w.Body)
		}
	})
}

// serve sends one request with key to env's handler.
func serve(env *funnelEnv, method, path, key string, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	r.Host = "insightd.test"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	env.h.ServeHTTP(w, r)
	return w
}
