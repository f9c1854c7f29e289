package api

// One-step funnels (issue 37 item 6): PostHog's legacy funnels allowed
// them and insightd refused them. A one-step funnel counts the persons
// who did the step; funnel trends are 100% of each day's entrants;
// time_to_convert has nothing to time (PostHog's own 400: funnel_to_step
// "can only be one of" no step). The reference (reference.Funnel) needs no
// change for them: an attempt is its step-1 event, the counted one the
// latest. These cases live apart so that they move with the reference.

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder"
	"github.com/insightd/insightd/querybuilder/reference"
)

// oneStepEvents, worked by hand over 1 to 10 March: ada does A twice
// (3 and 4 March, plan free then pro), cy does A as an anonymous id and
// again once identified (one person, plan ent on the second), bob only
// B, dee A outside the range.
func oneStepEvents() []reference.Event {
	return []reference.Event{
		analysistest.Fev("ada", "A", 0, "plan", "free"),
		analysistest.Fev("ada", "A", 24*time.Hour, "plan", "pro"),
		analysistest.Fev("bob", "B", time.Hour, "plan", "pro"),
		analysistest.Fev("cy-anon", "A", time.Hour),
		analysistest.Fident("cy", "cy-anon", 2*time.Hour),
		analysistest.Fev("cy", "A", 3*time.Hour, "plan", "ent"),
		analysistest.Fev("dee", "A", -10*24*time.Hour, "plan", "pro"),
	}
}

func TestOneStepFunnelsOnHandWorkedEvents(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := oneStepEvents()
	p := env.project(t, events)
	for _, order := range []string{"ordered", "strict", "unordered"} {
		t.Run(order+": the persons who did the step, each once", func(t *testing.T) {
			analysistest.CheckSteps(t, p, events, analysistest.FunnelOf(order, "A"), nil, []reference.StepResult{analysistest.St(2)})
		})
		t.Run(order+": a breakdown takes the latest entry's value", func(t *testing.T) {
			f := analysistest.FunnelOf(order, "A")
			f.Breakdown = "plan"
			analysistest.CheckBreakdown(t, p, events, f, []reference.Series{{Value: "ent", Steps: []reference.StepResult{analysistest.St(1)}}, {Value: "pro", Steps: []reference.StepResult{analysistest.St(1)}}})
		})
		t.Run(order+": trends are 100% of each day's entrants", func(t *testing.T) {
			analysistest.CheckTrends(t, p, events, analysistest.FunnelOf(order, "A"), []float64{0, 0, 100, 100, 0, 0, 0, 0, 0, 0})
		})
	}
	t.Run("a step of any event counts everyone active", func(t *testing.T) {
		f := analysistest.FunnelOf("ordered")
		f.Steps = []reference.Step{{Any: true}}
		analysistest.CheckSteps(t, p, events, f, nil, []reference.StepResult{analysistest.St(3)})
	})
	t.Run("time_to_convert has no conversion: a 400 naming funnel_viz_type", func(t *testing.T) {
		p.wantInvalid(t, "funnel", analysistest.FunnelOf("", "A").Filter(map[string]any{"funnel_viz_type": "time_to_convert"}), "funnel_viz_type")
	})
	t.Run("a to step past the only one is a 400 naming it", func(t *testing.T) {
		p.wantInvalid(t, "funnel", analysistest.FunnelOf("", "A").Filter(map[string]any{"funnel_viz_type": "trends", "funnel_to_step": 1}), "funnel_to_step")
	})
	t.Run("correlation has no drop-off to compare: a 400 naming events", func(t *testing.T) {
		p.wantInvalid(t, "funnel/correlation", analysistest.FunnelOf("", "A").Filter(nil), "events")
	})
	t.Run("the step's persons URL lists them", func(t *testing.T) {
		var steps []analysistest.APIStep
		p.result(t, "funnel", analysistest.FunnelOf("", "A").Filter(nil), &steps)
		if len(steps) != 1 || steps[0].DroppedURL != nil {
			t.Fatalf("%+v", steps)
		}
		got, count := p.follow(t, steps[0].ConvertedURL.(string))
		samePeople(t, "step 1", got, count, 2, personKeys(events, map[string]bool{"ada": true, "cy": true}))
	})
	t.Run("funnel trends' persons of a day", func(t *testing.T) {
		f := analysistest.FunnelOf("", "A")
		q := url.Values{}
		for k, v := range f.Filter(map[string]any{"funnel_viz_type": "trends"}) {
			q.Set(k, string(mustJSON(t, v)))
		}
		base := fmt.Sprintf("/api/projects/%d/persons/funnel/?%s&entrance_period_start=2026-03-04", p.id, q.Encode())
		converted, c1 := p.follow(t, base)
		samePeople(t, "4 March converted", converted, c1, 1, personKeys(events, map[string]bool{"ada": true}))
		dropped, c2 := p.follow(t, base+"&drop_off=true")
		samePeople(t, "4 March dropped", dropped, c2, 0, nil)
	})
	t.Run("a FunnelsQuery node of one step answers as the legacy request", func(t *testing.T) {
		node := map[string]any{"kind": "InsightVizNode", "source": map[string]any{"kind": "FunnelsQuery",
			"series":    []any{map[string]any{"kind": "EventsNode", "event": "A", "name": "A"}},
			"dateRange": map[string]any{"date_from": "2026-03-01", "date_to": "2026-03-10"}, "interval": "day"}}
		code, body := p.query(t, node)
		n, err := querybuilder.TranslateNode(mustJSON(t, node), "query")
		if err != nil {
			t.Fatal(err)
		}
		filter := map[string]any{}
		for k, v := range n.Params {
			filter[k] = v
		}
		_, legacy := p.Ask(t, "POST", "funnel", filter)
		var steps []analysistest.APIStep
		if err := json.Unmarshal(legacy["result"], &steps); err != nil || len(steps) != 1 || *steps[0].Count != 2 {
			t.Fatalf("legacy %s", legacy["result"])
		}
		if code != 200 || string(body["results"]) != string(legacy["result"]) {
			t.Fatalf("node %d %s\nlegacy %s", code, body["results"], legacy["result"])
		}
		r := httptest.NewRequest("POST", fmt.Sprintf("/api/projects/%d/insights/", p.id), bytesReader(mustJSON(t, map[string]any{"name": "One step", "query": node})))
		if code, created := p.send(t, r); code != 201 {
			t.Fatalf("%d %s", code, mustJSON(t, created))
		} else {
			code, got := p.send(t, httptest.NewRequest("GET", fmt.Sprintf("/api/projects/%d/insights/%s/?refresh=blocking", p.id, created["id"]), nil))
			if code != 200 || string(got["result"]) != string(legacy["result"]) {
				t.Fatalf("saved %d %s", code, got["result"])
			}
		}
	})
}
