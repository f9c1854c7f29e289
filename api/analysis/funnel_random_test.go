package analysis_test

// Random event sets, many of them tied in time and merged by $identify,
// where every funnel mode must agree with the reference.

import (
	"fmt"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// TestFunnelMatchesTheReferenceOnRandomEvents compares every order type,
// window, exclusion, breakdown attribution and visualisation with the
// reference on random events (with ties, repeats and merged persons).
func TestFunnelMatchesTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	for _, seed := range []int64{1, 2, 3} {
		events := analysistest.FunnelEvents(seed)
		p := env.project(t, events)
		for _, order := range []string{"ordered", "strict", "unordered"} {
			for _, steps := range [][]string{{"A", "B", "C"}, {"A", "A", "B"}, {"B", "A"}} {
				for _, hours := range []int{1, 6} {
					f := analysistest.FunnelOf(order, steps...).Hours(hours)
					t.Run(fmt.Sprintf("seed %d %s %v within %dh", seed, order, steps, hours), func(t *testing.T) {
						analysistest.CheckSteps(t, p, events, f, nil, nil)
					})
				}
			}
			narrow := analysistest.FunnelOf(order, "A", "B", "C").Hours(6)
			narrow.Steps[1].Props = map[string]string{"plan": "pro"}
			anyNext := analysistest.FunnelOf(order, "A", "B").Hours(2)
			anyNext.Steps[1] = reference.Step{Any: true}
			global := analysistest.FunnelOf(order, "A", "B").Hours(6)
			global.Properties = map[string]string{"plan": "pro"}
			for name, f := range map[string]reference.Funnel{"a step with properties": narrow, "a step of any event": anyNext, "global properties": global} {
				t.Run(fmt.Sprintf("seed %d %s %s", seed, order, name), func(t *testing.T) {
					analysistest.CheckSteps(t, p, events, f, nil, nil)
				})
			}
			base := analysistest.FunnelOf(order, "A", "B", "C").Hours(6)
			for _, x := range []reference.Exclusion{{Event: "X", From: 0, To: 1}, {Event: "X", From: 1, To: 2}, {Event: "X", From: 0, To: 2}} {
				f := base
				f.Exclusions = []reference.Exclusion{x}
				t.Run(fmt.Sprintf("seed %d %s excluding X from %d to %d", seed, order, x.From, x.To), func(t *testing.T) {
					analysistest.CheckSteps(t, p, events, f, nil, nil)
				})
			}
			for _, a := range []struct {
				attribution string
				step, limit int
			}{{"first_touch", 0, 0}, {"last_touch", 0, 0}, {"step", 1, 0}, {"step", 2, 0}, {"first_touch", 0, 2}} {
				f := base
				f.Breakdown, f.Attribution, f.AttributionStep, f.BreakdownLimit = "plan", a.attribution, a.step, a.limit
				t.Run(fmt.Sprintf("seed %d %s breakdown %s %d limit %d", seed, order, a.attribution, a.step, a.limit), func(t *testing.T) {
					analysistest.CheckBreakdown(t, p, events, f, nil)
				})
			}
			t.Run(fmt.Sprintf("seed %d %s time to convert", seed, order), func(t *testing.T) {
				analysistest.CheckTimeToConvert(t, p, events, base, 0, nil)
				f := base
				f.FromStep, f.ToStep = 1, 2
				analysistest.CheckTimeToConvert(t, p, events, f, 4, nil)
				f.Exclusions = []reference.Exclusion{{Event: "X", From: 0, To: 1}}
				analysistest.CheckTimeToConvert(t, p, events, f, 3, nil)
			})
			t.Run(fmt.Sprintf("seed %d %s timing", seed, order), func(t *testing.T) {
				analysistest.CheckTiming(t, p, events, base, 0)
			})
			t.Run(fmt.Sprintf("seed %d %s breakdown with an exclusion", seed, order), func(t *testing.T) {
				f := base
				f.Breakdown, f.Attribution, f.Exclusions = "plan", "last_touch", []reference.Exclusion{{Event: "X", From: 1, To: 2}}
				analysistest.CheckBreakdown(t, p, events, f, nil)
			})
			t.Run(fmt.Sprintf("seed %d %s on 3 March only", seed, order), func(t *testing.T) {
				f := base
				f.DateFrom, f.DateTo = "2026-03-03", "2026-03-03"
				analysistest.CheckSteps(t, p, events, f, nil, nil)
			})
		}
		for _, order := range []string{"ordered", "strict", "unordered"} {
			f := analysistest.FunnelOf(order, "A", "B").Hours(6)
			f.DateFrom, f.DateTo = "2026-03-02", "2026-03-05"
			t.Run(fmt.Sprintf("seed %d %s trends", seed, order), func(t *testing.T) { analysistest.CheckTrends(t, p, events, f, nil) })
			g := analysistest.FunnelOf(order, "A", "B", "C").Hours(6)
			g.DateFrom, g.DateTo, g.FromStep, g.ToStep = "2026-03-02", "2026-03-05", 1, 2
			t.Run(fmt.Sprintf("seed %d %s trends from step 1 to 2", seed, order), func(t *testing.T) { analysistest.CheckTrends(t, p, events, g, nil) })
			x := analysistest.FunnelOf(order, "A", "B", "C").Hours(6)
			x.DateFrom, x.DateTo, x.Exclusions = "2026-03-02", "2026-03-05", []reference.Exclusion{{Event: "X", From: 0, To: 1}}
			t.Run(fmt.Sprintf("seed %d %s trends with an exclusion", seed, order), func(t *testing.T) { analysistest.CheckTrends(t, p, events, x, nil) })
		}
	}
}

// TestOneStepFunnelsMatchTheReferenceOnRandomEvents adds one-step cases
// to the random test's event sets (analysistest.FunnelEvents): every order type, a
// step with properties, global properties, breakdowns and trends.
func TestOneStepFunnelsMatchTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	for _, seed := range []int64{1, 2, 3} {
		events := analysistest.FunnelEvents(seed)
		p := env.project(t, events)
		for _, order := range []string{"ordered", "strict", "unordered"} {
			for _, step := range []string{"A", "X"} {
				t.Run(fmt.Sprintf("seed %d %s %s", seed, order, step), func(t *testing.T) {
					analysistest.CheckSteps(t, p, events, analysistest.FunnelOf(order, step).Hours(1), nil, nil)
				})
			}
			narrow := analysistest.FunnelOf(order, "B")
			narrow.Steps[0].Props = map[string]string{"plan": "pro"}
			global := analysistest.FunnelOf(order, "C")
			global.Properties = map[string]string{"plan": "free"}
			for name, f := range map[string]reference.Funnel{"a step with properties": narrow, "global properties": global} {
				t.Run(fmt.Sprintf("seed %d %s %s", seed, order, name), func(t *testing.T) { analysistest.CheckSteps(t, p, events, f, nil, nil) })
			}
			for _, a := range []string{"first_touch", "last_touch", "step"} {
				f := analysistest.FunnelOf(order, "A")
				f.Breakdown, f.Attribution, f.BreakdownLimit = "plan", a, 2
				t.Run(fmt.Sprintf("seed %d %s breakdown %s", seed, order, a), func(t *testing.T) { analysistest.CheckBreakdown(t, p, events, f, nil) })
			}
			f := analysistest.FunnelOf(order, "B")
			f.DateFrom, f.DateTo = "2026-03-02", "2026-03-05"
			t.Run(fmt.Sprintf("seed %d %s trends", seed, order), func(t *testing.T) { analysistest.CheckTrends(t, p, events, f, nil) })
		}
	}
}

// Optional funnel steps (optionalInFunnel): the reference's attempt with
// optional steps, hand-worked cases, random events against the
// reference, and the requests refused.

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
		events := analysistest.FunnelEvents(seed)
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

// Funnel conversion times over HTTP (the steps' average and median times,
// time to convert, the timing endpoint), against the brute-force reference
// (funnel_reference_test.go) and numbers worked out by hand.

// fourConverters convert from A to B in 10, 20, 40 and 100 seconds; a
// fifth only does A.
var fourConverters = []reference.Event{
	analysistest.Fev("c1", "A", 0), analysistest.Fev("c1", "B", 10*sc),
	analysistest.Fev("c2", "A", 0), analysistest.Fev("c2", "B", 20*sc),
	analysistest.Fev("c3", "A", 0), analysistest.Fev("c3", "B", 40*sc),
	analysistest.Fev("c4", "A", 0), analysistest.Fev("c4", "B", 100*sc),
	analysistest.Fev("c5", "A", 0),
}

func TestFunnelConversionTimes(t *testing.T) {
	runStepsCases(t, []stepsCase{
		{name: "average and median over an even number of persons (the median interpolates)",
			events: fourConverters, f: analysistest.FunnelOf("", "A", "B"), hand: []reference.StepResult{analysistest.St(5), analysistest.St(4, 42.5, 30)}},
		{name: "times keep microseconds",
			events: []reference.Event{analysistest.Fev("m1", "A", 0), analysistest.Fev("m1", "B", 1500*time.Millisecond), analysistest.Fev("m2", "A", 0), analysistest.Fev("m2", "B", 2*sc+us)},
			f:      analysistest.FunnelOf("", "A", "B"), hand: []reference.StepResult{analysistest.St(2), analysistest.St(2, 1.7500005, 1.7500005)}},
		{name: "nobody at a step gives null times",
			events: []reference.Event{analysistest.Fev("n1", "A", 0)}, f: analysistest.FunnelOf("", "A", "B"), hand: []reference.StepResult{analysistest.St(1), analysistest.St(0)}},
	})
}

func TestFunnelTimeToConvert(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, fourConverters)
	ab := analysistest.FunnelOf("", "A", "B")
	t.Run("bin_count 3: lo 10, width 30, the last bin holds its upper end", func(t *testing.T) {
		analysistest.CheckTimeToConvert(t, p, fourConverters, ab, 3, [][2]float64{{10, 2}, {40, 1}, {70, 1}})
	})
	t.Run("the default bin count is the cube root of the persons, rounded up", func(t *testing.T) {
		analysistest.CheckTimeToConvert(t, p, fourConverters, ab, 0, [][2]float64{{10, 3}, {55, 1}})
	})
	t.Run("one bin holds everyone", func(t *testing.T) {
		analysistest.CheckTimeToConvert(t, p, fourConverters, ab, 1, [][2]float64{{10, 4}})
	})
	t.Run("fractional times: lo is floored, width at least 1", func(t *testing.T) {
		events := []reference.Event{analysistest.Fev("f1", "A", 0), analysistest.Fev("f1", "B", 500*time.Millisecond), analysistest.Fev("f2", "A", 0), analysistest.Fev("f2", "B", 3250*time.Millisecond)}
		analysistest.CheckTimeToConvert(t, env.project(t, events), events, ab, 2, [][2]float64{{0, 1}, {2, 1}})
	})
	t.Run("between funnel_from_step and funnel_to_step", func(t *testing.T) {
		events := []reference.Event{
			analysistest.Fev("s1", "A", 0), analysistest.Fev("s1", "B", 10*sc), analysistest.Fev("s1", "C", 70*sc),
			analysistest.Fev("s2", "A", 0), analysistest.Fev("s2", "B", 100*sc), analysistest.Fev("s2", "C", 105*sc),
			analysistest.Fev("s3", "A", 0), analysistest.Fev("s3", "B", 5*sc),
		}
		f := analysistest.FunnelOf("", "A", "B", "C")
		f.FromStep, f.ToStep = 1, 2
		analysistest.CheckTimeToConvert(t, env.project(t, events), events, f, 2, [][2]float64{{5, 1}, {33, 1}})
		f.FromStep, f.ToStep = 0, 1
		analysistest.CheckTimeToConvert(t, env.project(t, events), events, f, 0, [][2]float64{{5, 2}, {53, 1}})
	})
	t.Run("nobody converting gives no bins and a null average", func(t *testing.T) {
		events := []reference.Event{analysistest.Fev("z", "A", 0)}
		analysistest.CheckTimeToConvert(t, env.project(t, events), events, ab, 0, [][2]float64{})
	})
}

func TestFunnelTimingEndpoint(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, fourConverters)
	f := analysistest.FunnelOf("", "A", "B")
	ts := f.ConversionTimes(fourConverters)
	if q := [3]float64{reference.Quantile(ts, 0.5), reference.Quantile(ts, 0.9), reference.Quantile(ts, 0.99)}; !analysistest.SameFloats(q[:], []float64{30, 82, 98.2}) {
		t.Errorf("the reference quantiles %v disagree with the hand-written [30 82 98.2]", q)
	}
	var got analysistest.Timing
	p.result(t, "timing", f.Filter(nil), &got)
	want := reference.Bins(ts, 0)
	if !analysistest.SameBins(got.Bins, want) || !analysistest.SamePtr(got.Avg, analysistest.Ptr(42.5)) || !analysistest.SamePtr(got.Median, analysistest.Ptr(30)) ||
		!analysistest.SamePtr(got.P90, analysistest.Ptr(82)) || !analysistest.SamePtr(got.P99, analysistest.Ptr(98.2)) || !analysistest.SamePtr(got.Persons, analysistest.Ptr(4)) {
		t.Errorf("timing: bins %v avg %s median %s p90 %s p99 %s persons %s\nwant bins %v avg 42.5 median 30 p90 82 p99 98.2 persons 4",
			got.Bins, analysistest.FmtPtr(got.Avg), analysistest.FmtPtr(got.Median), analysistest.FmtPtr(got.P90), analysistest.FmtPtr(got.P99), analysistest.FmtPtr(got.Persons), want)
	}
	t.Run("with bin_count and steps 1 to 2", func(t *testing.T) {
		events := []reference.Event{
			analysistest.Fev("s1", "A", 0), analysistest.Fev("s1", "B", 10*sc), analysistest.Fev("s1", "C", 70*sc),
			analysistest.Fev("s2", "A", 0), analysistest.Fev("s2", "B", 100*sc), analysistest.Fev("s2", "C", 105*sc),
		}
		f := analysistest.FunnelOf("", "A", "B", "C")
		f.FromStep, f.ToStep = 1, 2
		ts := f.ConversionTimes(events)
		filter := f.Filter(map[string]any{"bin_count": 2})
		var got analysistest.Timing
		env.project(t, events).result(t, "timing", filter, &got)
		if !analysistest.SameBins(got.Bins, [][2]float64{{5, 1}, {33, 1}}) || !analysistest.SamePtr(got.Median, analysistest.Ptr(reference.Quantile(ts, 0.5))) ||
			!analysistest.SamePtr(got.P99, analysistest.Ptr(reference.Quantile(ts, 0.99))) || !analysistest.SamePtr(got.Persons, analysistest.Ptr(2)) {
			t.Errorf("timing %+v median %s p99 %s persons %s", got.Bins, analysistest.FmtPtr(got.Median), analysistest.FmtPtr(got.P99), analysistest.FmtPtr(got.Persons))
		}
	})
}
