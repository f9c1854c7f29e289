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

func TestFunnelGETAndPOSTAgree(t *testing.T) {
	events := []reference.Event{
		analysistest.Fev("p1", "A", 0, "plan", "free"), analysistest.Fev("p1", "B", h), analysistest.Fev("p1", "C", 3*h),
		analysistest.Fev("p2", "A", 0, "plan", "pro"), analysistest.Fev("p2", "C", h), analysistest.Fev("p2", "B", 2*h),
		analysistest.Fev("p3", "B", 0), analysistest.Fev("p3", "X", 10*mi), analysistest.Fev("p3", "A", h),
	}
	p := newFunnelEnv(t).project(t, events)
	bd := analysistest.FunnelOf("strict", "A", "B", "C").Hours(4)
	bd.Breakdown, bd.Exclusions = "plan", []reference.Exclusion{{Event: "X", From: 0, To: 1}}
	for name, filter := range map[string]map[string]any{
		"steps":           analysistest.FunnelOf("", "A", "B", "C").Filter(nil),
		"breakdown":       bd.Filter(nil),
		"trends":          analysistest.FunnelOf("", "A", "B").Filter(map[string]any{"funnel_viz_type": "trends"}),
		"time_to_convert": analysistest.FunnelOf("", "A", "B").Filter(map[string]any{"funnel_viz_type": "time_to_convert", "bin_count": 2}),
	} {
		t.Run(name, func(t *testing.T) {
			pc, post := p.Ask(t, "POST", "funnel", filter)
			gc, get := p.Ask(t, "GET", "funnel", filter)
			if pc != 200 || gc != 200 || string(post["result"]) != string(get["result"]) {
				t.Fatalf("POST %d %s\nGET  %d %s", pc, post["result"], gc, mustJSON(t, get))
			}
			for _, k := range []string{"result", "is_cached", "last_refresh", "timezone"} {
				if _, ok := post[k]; !ok {
					t.Errorf("the envelope lacks %s: %s", k, mustJSON(t, post))
				}
			}
		})
	}
	t.Run("timing", func(t *testing.T) {
		filter := analysistest.FunnelOf("", "A", "B").Filter(nil)
		pc, post := p.Ask(t, "POST", "timing", filter)
		gc, get := p.Ask(t, "GET", "timing", filter)
		if pc != 200 || gc != 200 || string(post["result"]) != string(get["result"]) {
			t.Fatalf("POST %d %s\nGET  %d %s", pc, post["result"], gc, mustJSON(t, get))
		}
	})
	t.Run("the filter may sit under filters", func(t *testing.T) {
		filter := analysistest.FunnelOf("", "A", "B", "C").Filter(nil)
		_, top := p.Ask(t, "POST", "funnel", filter)
		_, under := p.Ask(t, "POST", "funnel", map[string]any{"filters": filter})
		if string(top["result"]) != string(under["result"]) {
			t.Fatalf("top level %s\nunder filters %s", top["result"], under["result"])
		}
	})
}
