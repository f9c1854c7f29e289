package querybuilder

import (
	"path/filepath"
	"strings"
	"testing"
)

// One-step funnels count the actors who did the step: nobody is hot (no
// step 2 to reach), so every entrant is counted as a cold actor is.
func TestOneStepFunnelGoldenSQL(t *testing.T) {
	build := func(p Params) (Statement, error) {
		q, err := ParseFunnel(p, Env{Project: goldenProject, Now: testNow})
		if err != nil {
			return Statement{}, err
		}
		return BuildFunnel(q, Facts{})
	}
	checkGolden(t, filepath.Join("testdata", "funnels"), map[string]string{
		"one_step":           `{"events": [{"id": "$pageview"}], "date_from": "2026-03-01", "date_to": "2026-03-31"}`,
		"one_step_breakdown": `{"events": [{"id": "$pageview"}], "breakdown": "$browser", "date_from": "2026-03-01", "date_to": "2026-03-31"}`,
		"one_step_trends":    `{"events": [{"id": "$pageview"}], "funnel_viz_type": "trends", "date_from": "2026-03-01", "date_to": "2026-03-07"}`,
	}, build)
}

func TestOneStepFunnelsRefuseWhatHasNoConversion(t *testing.T) {
	one := `"events": [{"id": "$pageview"}], "date_from": "-7d"`
	for _, tc := range []struct{ name, body, attr string }{
		{"time to convert", `{` + one + `, "funnel_viz_type": "time_to_convert"}`, "funnel_viz_type"},
		{"a from step past the only one", `{` + one + `, "funnel_viz_type": "trends", "funnel_from_step": 1}`, "funnel_from_step"},
		{"a to step past the only one", `{` + one + `, "funnel_viz_type": "trends", "funnel_to_step": 1}`, "funnel_to_step"},
		{"an exclusion", `{` + one + `, "exclusions": [{"id": "x", "funnel_from_step": 0, "funnel_to_step": 1}]}`, "exclusions"},
		{"no step at all", `{"events": [], "date_from": "-7d"}`, "events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseBody([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseFunnel(p, Env{Project: goldenProject, Now: testNow})
			ves := ValidationErrors(err)
			if len(ves) == 0 || ves[0].Attr != tc.attr {
				t.Fatalf("want a problem naming %s, got %v", tc.attr, err)
			}
		})
	}
	p, _ := ParseBody([]byte(`{` + one + `}`))
	if _, err := ParseTiming(p, Env{Project: goldenProject, Now: testNow}); err == nil || !strings.Contains(err.Error(), "one-step") {
		t.Fatalf("timing of one step: %v", err)
	}
	if _, err := ParseCorrelation(p, Env{Project: goldenProject, Now: testNow}); err == nil || ValidationErrors(err)[0].Attr != "events" {
		t.Fatalf("correlation of one step: %v", err)
	}
	// The persons of its only step, and no drop-off before it.
	q, err := ParseFunnel(p, Env{Project: goldenProject, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Actors(Params{"funnel_step": []byte("1")}, Facts{}, Page{Limit: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Actors(Params{"funnel_step": []byte("-2")}, Facts{}, Page{Limit: 100}); len(ValidationErrors(err)) == 0 {
		t.Fatalf("dropped before step 2 of one: %v", err)
	}
}
