package api

import (
	"testing"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

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
