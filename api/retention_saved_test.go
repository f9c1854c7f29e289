package api

import (
	"encoding/csv"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// TestPeriodKindsAsSavedInsightsAndCSV: saved RETENTION, LIFECYCLE and
// STICKINESS insights compute and cache, and each kind's CSV is its table.
func TestPeriodKindsAsSavedInsightsAndCSV(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, []reference.Event{analysistest.Fev("u1", "A", analysistest.Mar(1, 9)), analysistest.Fev("u1", "A", analysistest.Mar(2, 9)), analysistest.Fev("u2", "A", analysistest.Mar(2, 10))})
	filters := map[string]map[string]any{
		"RETENTION": {"insight": "RETENTION", "target_entity": map[string]any{"id": "A"}, "total_intervals": 3, "date_to": "2026-03-03"},
		"LIFECYCLE": {"insight": "LIFECYCLE", "events": []any{map[string]any{"id": "A"}}, "date_from": "2026-03-01", "date_to": "2026-03-03"},
		"STICKINESS": {"insight": "STICKINESS", "events": []any{map[string]any{"id": "A"}}, "date_from": "2026-03-01",
			"date_to": "2026-03-03"},
	}
	csvHeaders := map[string][]string{
		"RETENTION":  {"cohort", "date", "Day 0", "Day 1", "Day 2"},
		"LIFECYCLE":  {"series", "1-Mar-2026", "2-Mar-2026", "3-Mar-2026"},
		"STICKINESS": {"series", "1 day", "2 days", "3 days"},
	}
	// By hand: u1 did A on 1 and 2 March, u2 on 2 March. Retention: the
	// cohort of 1 March (u1) is back on 2 March; that of 2 March (u1, u2)
	// not on 3 March; each later cohort has one cell fewer, left blank.
	// Lifecycle: u1 new on 1 March, returning on 2 March; u2 new on 2
	// March; both dormant on 3 March. Stickiness: u1 2 days, u2 1.
	csvCells := map[string][][]string{
		"RETENTION": {{"Day 0", "2026-03-01T00:00:00Z", "1", "1", "0"}, {"Day 1", "2026-03-02T00:00:00Z", "2", "0", ""},
			{"Day 2", "2026-03-03T00:00:00Z", "0", "", ""}},
		"LIFECYCLE": {{"A - new", "1", "1", "0"}, {"A - returning", "0", "1", "0"}, {"A - resurrecting", "0", "0", "0"},
			{"A - dormant", "0", "0", "-2"}},
		"STICKINESS": {{"A", "1", "1", "0"}},
	}
	for insight, f := range filters {
		t.Run(insight+" insights compute, then answer from the cache", func(t *testing.T) {
			st, created := call(t, env.h, "POST", fmt.Sprintf("/api/projects/%d/insights/", p.id), p.key, map[string]any{"filters": f})
			if st != 201 {
				t.Fatalf("%d %v", st, created)
			}
			path := fmt.Sprintf("/api/projects/%d/insights/%v/", p.id, created["id"])
			for i, cached := range []bool{false, true} {
				st, out := call(t, env.h, "GET", path, p.key, nil)
				if st != 200 || out["result"] == nil || out["is_cached"] != cached || out["query_status"] != nil {
					t.Fatalf("retrieve %d: %d %v", i, st, out)
				}
			}
		})
		t.Run(insight+" as CSV", func(t *testing.T) {
			route := "trend"
			if insight == "RETENTION" {
				route = "retention"
			}
			r := httptest.NewRequest("POST", fmt.Sprintf("/api/projects/%d/insights/%s/?format=csv", p.id, route), strings.NewReader(string(mustJSON(t, f))))
			r.Header.Set("Authorization", "Bearer "+p.key)
			w := httptest.NewRecorder()
			env.h.ServeHTTP(w, r)
			rows, err := csv.NewReader(w.Body).ReadAll()
			if w.Code != 200 || err != nil || len(rows) < 2 || !reflect.DeepEqual(rows[0], csvHeaders[insight]) ||
				!reflect.DeepEqual(rows[1:], csvCells[insight]) {
				t.Fatalf("%d %q %v", w.Code, rows, err)
			}
		})
	}
	t.Run("GET insights/retention with the filter in the query string answers as POST", func(t *testing.T) {
		f := map[string]any{"target_entity": map[string]any{"id": "A", "type": "events"}, "returning_entity": map[string]any{"id": "A"},
			"total_intervals": 3, "date_to": "2026-03-03", "period": "Day", "retention_type": "retention_recurring"}
		stPost, post := p.Ask(t, "POST", "retention", f)
		stGet, get := p.Ask(t, "GET", "retention", f)
		if stPost != 200 || stGet != 200 || string(get["result"]) != string(post["result"]) || !strings.Contains(string(get["result"]), `"count":2`) {
			t.Fatalf("POST %d %s\nGET %d %s", stPost, post["result"], stGet, get["result"])
		}
		// Another value in the query string is another answer.
		f["total_intervals"] = 2
		if _, get := p.Ask(t, "GET", "retention", f); string(get["result"]) == string(post["result"]) {
			t.Fatal("total_intervals in the query string was not read")
		}
	})
}
