package api

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// funnelCSV runs a funnel analysis with format=csv and reads the table.
func (p *funnelProject) funnelCSV(t *testing.T, kind string, filter map[string]any) [][]string {
	t.Helper()
	r := httptest.NewRequest("POST", fmt.Sprintf("/api/projects/%d/insights/%s/?format=csv", p.id, kind), bytes.NewReader(mustJSON(t, filter)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+p.key)
	w := httptest.NewRecorder()
	p.env.h.ServeHTTP(w, r)
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("%s csv: %d %s %s", kind, w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	rows, err := csv.NewReader(w.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestFunnelCSVIsOneRowPerStep(t *testing.T) {
	env := newFunnelEnv(t)
	events := []reference.Event{
		analysistest.Fev("p1", "A", 0, "src", "ads"), analysistest.Fev("p1", "B", 10*sc), analysistest.Fev("p1", "C", 40*sc),
		analysistest.Fev("p2", "A", 0, "src", "mail"), analysistest.Fev("p2", "B", 30*sc),
		analysistest.Fev("p3", "A", 0, "src", "ads"),
	}
	p := env.project(t, events)
	f := analysistest.FunnelOf("", "A", "B", "C")
	steps := p.funnelCSV(t, "funnel", f.Filter(nil))
	want := [][]string{
		{"step", "name", "action_id", "count", "average_conversion_time", "median_conversion_time"},
		{"1", "A", "A", "3", "", ""},
		{"2", "B", "B", "2", "20", "20"},
		{"3", "C", "C", "1", "30", "30"},
	}
	if !reflect.DeepEqual(steps, want) {
		t.Fatalf("steps csv:\n%v\nwant\n%v", steps, want)
	}

	f.Breakdown = "src"
	broken := p.funnelCSV(t, "funnel", f.Filter(nil))
	if len(broken) != 7 || broken[0][0] != "breakdown_value" || broken[1][0] != "ads" || broken[1][4] != "2" ||
		broken[4][0] != "mail" || broken[5][4] != "1" {
		t.Fatalf("broken-down csv: %v", broken)
	}

	bins := p.funnelCSV(t, "funnel", f.Filter(map[string]any{"breakdown": nil, "funnel_viz_type": "time_to_convert",
		"funnel_from_step": 0, "funnel_to_step": 1, "bin_count": 2}))
	if !reflect.DeepEqual(bins, [][]string{{"from_seconds", "persons"}, {"10", "1"}, {"20", "1"}}) {
		t.Fatalf("time to convert csv: %v", bins)
	}
}
