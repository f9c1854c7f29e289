package analysis_test

// Optional funnel steps (optionalInFunnel): the reference's attempt with
// optional steps, hand-worked cases, random events against the
// reference, and the requests refused.

import (
	"fmt"
	"testing"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

func optionalOf(steps ...string) reference.Funnel {
	f := analysistest.FunnelOf("ordered")
	for _, s := range steps {
		opt := s[len(s)-1] == '?'
		if opt {
			s = s[:len(s)-1]
		}
		f.Steps = append(f.Steps, reference.Step{Event: s, Optional: opt})
	}
	return f
}

func TestFunnelOptionalSteps(t *testing.T) {
	runStepsCases(t, []stepsCase{
		{
			name: "an optional step may be skipped, counts only when done between its neighbours, and times from the required step before",
			events: []reference.Event{
				analysistest.Fev("p1", "A", 0), analysistest.Fev("p1", "B", h), analysistest.Fev("p1", "C", 3*h),
				analysistest.Fev("p2", "A", 0), analysistest.Fev("p2", "C", 2*h),
				analysistest.Fev("p3", "A", 0), analysistest.Fev("p3", "C", h), analysistest.Fev("p3", "B", 2*h),
				analysistest.Fev("p4", "A", 0), analysistest.Fev("p4", "B", h),
				analysistest.Fev("p5", "A", 0),
			},
			f: optionalOf("A", "B?", "C"),
			// B: p1 and p4 (3600 each; p3's B is after its C). C from A:
			// p1 10800, p2 7200, p3 3600.
			hand: []reference.StepResult{analysistest.St(5), analysistest.St(2, 3600, 3600), analysistest.St(3, 7200, 7200)},
		},
		{
			name: "an optional step after the last required one reached counts inside the window only",
			events: []reference.Event{
				analysistest.Fev("r1", "A", 0), analysistest.Fev("r1", "B", 90*mi),
				analysistest.Fev("r2", "A", 0), analysistest.Fev("r2", "B", 30*mi), analysistest.Fev("r2", "C", 2*h),
			},
			f:    optionalOf("A", "B?", "C").Hours(1),
			hand: []reference.StepResult{analysistest.St(2), analysistest.St(1, 1800, 1800), analysistest.St(0)},
		},
		{
			name: "the counted attempt is the one reaching an optional step past the last required one",
			events: []reference.Event{
				analysistest.Fev("q1", "A", 0), analysistest.Fev("q1", "B", 10*mi), analysistest.Fev("q1", "A", 20*mi),
			},
			// The first A reaches B; the later one reaches A only.
			f:    optionalOf("A", "B?", "C"),
			hand: []reference.StepResult{analysistest.St(1), analysistest.St(1, 600, 600), analysistest.St(0)},
		},
	})
}

// Every optional-step funnel the server computes agrees with the
// reference on random events, with breakdowns attributed to optional
// steps too.
func TestFunnelOptionalStepsMatchTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	for _, seed := range []int64{1, 2, 3} {
		events := randomEvents(seed)
		p := env.project(t, events)
		for _, steps := range [][]string{{"A", "B?", "C"}, {"A", "B?", "C?"}, {"A", "X?", "B", "C?"}, {"A", "C?", "B?", "C"}, {"B", "A?", "C?", "A"}} {
			for _, hours := range []int{1, 6} {
				f := optionalOf(steps...).Hours(hours)
				t.Run(fmt.Sprintf("seed %d %v within %dh", seed, steps, hours), func(t *testing.T) {
					analysistest.CheckSteps(t, p, events, f, nil, nil)
				})
			}
		}
		base := optionalOf("A", "B?", "C").Hours(6)
		for _, a := range []struct {
			attribution string
			step        int
		}{{"first_touch", 0}, {"last_touch", 0}, {"step", 1}, {"step", 2}} {
			f := base
			f.Breakdown, f.Attribution, f.AttributionStep = "plan", a.attribution, a.step
			t.Run(fmt.Sprintf("seed %d breakdown %s %d", seed, a.attribution, a.step), func(t *testing.T) {
				analysistest.CheckBreakdown(t, p, events, f, nil)
			})
		}
	}
}

// Optional steps where PostHog does not define them, or insightd does
// not compute them, are a 400 naming the field.
func TestFunnelOptionalStepsRefused(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, []reference.Event{analysistest.Fev("p1", "A", 0)})
	strict := optionalOf("A", "B?", "C")
	strict.Order = "strict"
	unordered := optionalOf("A", "B?", "C")
	unordered.Order = "unordered"
	excluding := optionalOf("A", "B?", "C")
	excluding.Exclusions = []reference.Exclusion{{Event: "X", From: 1, To: 2}}
	for _, tc := range []struct {
		name  string
		f     reference.Funnel
		extra map[string]any
		attr  string
	}{
		{"an optional first step", optionalOf("A?", "B"), nil, "events"},
		{"an optional step followed by the same required one", optionalOf("A", "B?", "B"), nil, "events"},
		{"a strict funnel", strict, nil, "funnel_order_type"},
		{"an unordered funnel", unordered, nil, "funnel_order_type"},
		{"funnel trends", optionalOf("A", "B?", "C"), map[string]any{"funnel_viz_type": "trends"}, "funnel_viz_type"},
		{"time to convert", optionalOf("A", "B?", "C"), map[string]any{"funnel_viz_type": "time_to_convert"}, "funnel_viz_type"},
		{"an exclusion bounded by an optional step", excluding, nil, "exclusions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.wantInvalid(t, "funnel", tc.f.Filter(tc.extra), tc.attr)
		})
	}
}
