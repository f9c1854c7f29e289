package api

// Optional funnel steps (optionalInFunnel): the reference's attempt with
// optional steps, hand-worked cases, random events against the
// reference, and the requests refused.

import (
	"fmt"
	"testing"
)

// prevRequired is the required step before step j (-1 for none).
func (f refFunnel) prevRequired(j int) int {
	for i := j - 1; i >= 0; i-- {
		if !f.Steps[i].Optional {
			return i
		}
	}
	return -1
}

// hasOptional reports whether a step is optional.
func (f refFunnel) hasOptional() bool {
	for _, s := range f.Steps {
		if s.Optional {
			return true
		}
	}
	return false
}

// optionalAttempt is an ordered attempt with optional steps, by the
// text of querybuilder/funnel_optional.go: the required steps as a
// funnel of their own, then each optional step's first event after the
// required step before it and before the required step after it (inside
// the window when that one is not reached). The path ends at its
// furthest step.
func (f refFunnel) optionalAttempt(evs []refEvent, start int) []int {
	if !f.Steps[0].matches(evs[start]) {
		return nil
	}
	n := len(f.Steps)
	path := make([]int, n)
	for j := range path {
		path[j] = -1
	}
	path[0] = start
	prev := start
	for j := 1; j < n; j++ {
		if f.Steps[j].Optional {
			continue
		}
		next := -1
		for k := prev + 1; k < len(evs) && f.inWindow(evs, start, k); k++ {
			if f.Steps[j].matches(evs[k]) {
				next = k
				break
			}
		}
		if next < 0 {
			break
		}
		path[j], prev = next, next
	}
	for j := 1; j < n; j++ {
		r := f.prevRequired(j)
		if !f.Steps[j].Optional || path[r] < 0 {
			continue
		}
		end := len(evs)
		for q := j + 1; q < n; q++ {
			if !f.Steps[q].Optional {
				if path[q] >= 0 {
					end = path[q]
				}
				break
			}
		}
		for k := path[r] + 1; k < end && f.inWindow(evs, start, k); k++ {
			if f.Steps[j].matches(evs[k]) {
				path[j] = k
				break
			}
		}
	}
	last := 0
	for j := range path {
		if path[j] >= 0 {
			last = j
		}
	}
	return path[:last+1]
}

func optionalOf(steps ...string) refFunnel {
	f := funnelOf("ordered")
	for _, s := range steps {
		opt := s[len(s)-1] == '?'
		if opt {
			s = s[:len(s)-1]
		}
		f.Steps = append(f.Steps, refStep{Event: s, Optional: opt})
	}
	return f
}

func TestFunnelOptionalSteps(t *testing.T) {
	runStepsCases(t, []stepsCase{
		{
			name: "an optional step may be skipped, counts only when done between its neighbours, and times from the required step before",
			events: []refEvent{
				fev("p1", "A", 0), fev("p1", "B", h), fev("p1", "C", 3*h),
				fev("p2", "A", 0), fev("p2", "C", 2*h),
				fev("p3", "A", 0), fev("p3", "C", h), fev("p3", "B", 2*h),
				fev("p4", "A", 0), fev("p4", "B", h),
				fev("p5", "A", 0),
			},
			f: optionalOf("A", "B?", "C"),
			// B: p1 and p4 (3600 each; p3's B is after its C). C from A:
			// p1 10800, p2 7200, p3 3600.
			hand: []refStepResult{st(5), st(2, 3600, 3600), st(3, 7200, 7200)},
		},
		{
			name: "an optional step after the last required one reached counts inside the window only",
			events: []refEvent{
				fev("r1", "A", 0), fev("r1", "B", 90*mi),
				fev("r2", "A", 0), fev("r2", "B", 30*mi), fev("r2", "C", 2*h),
			},
			f:    optionalOf("A", "B?", "C").hours(1),
			hand: []refStepResult{st(2), st(1, 1800, 1800), st(0)},
		},
		{
			name: "the counted attempt is the one reaching an optional step past the last required one",
			events: []refEvent{
				fev("q1", "A", 0), fev("q1", "B", 10*mi), fev("q1", "A", 20*mi),
			},
			// The first A reaches B; the later one reaches A only.
			f:    optionalOf("A", "B?", "C"),
			hand: []refStepResult{st(1), st(1, 600, 600), st(0)},
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
				f := optionalOf(steps...).hours(hours)
				t.Run(fmt.Sprintf("seed %d %v within %dh", seed, steps, hours), func(t *testing.T) {
					checkSteps(t, p, events, f, nil, nil)
				})
			}
		}
		base := optionalOf("A", "B?", "C").hours(6)
		for _, a := range []struct {
			attribution string
			step        int
		}{{"first_touch", 0}, {"last_touch", 0}, {"step", 1}, {"step", 2}} {
			f := base
			f.Breakdown, f.Attribution, f.AttributionStep = "plan", a.attribution, a.step
			t.Run(fmt.Sprintf("seed %d breakdown %s %d", seed, a.attribution, a.step), func(t *testing.T) {
				checkBreakdown(t, p, events, f, nil)
			})
		}
	}
}

// Optional steps where PostHog does not define them, or insightd does
// not compute them, are a 400 naming the field.
func TestFunnelOptionalStepsRefused(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, []refEvent{fev("p1", "A", 0)})
	strict := optionalOf("A", "B?", "C")
	strict.Order = "strict"
	unordered := optionalOf("A", "B?", "C")
	unordered.Order = "unordered"
	excluding := optionalOf("A", "B?", "C")
	excluding.Exclusions = []refExclusion{{"X", 1, 2}}
	for _, tc := range []struct {
		name  string
		f     refFunnel
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
			p.wantInvalid(t, "funnel", tc.f.filter(tc.extra), tc.attr)
		})
	}
}
