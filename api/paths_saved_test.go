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

// Saved PATHS insights compute, then answer from the cache; as CSV a
// paths answer is one row per edge.
func TestPathsAsSavedInsightsAndCSV(t *testing.T) {
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
