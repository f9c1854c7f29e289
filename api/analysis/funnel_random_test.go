package analysis_test

// Random event sets, many of them tied in time and merged by $identify,
// where every funnel mode must agree with the reference.

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// randomEvents are seeded random events of 30 persons over two days,
// with many events at the same time, some persons starting anonymous and
// identifying part way.
func randomEvents(seed int64) []reference.Event {
	r := rand.New(rand.NewSource(seed))
	// uuids from the seed too, so that a run's ties are the next run's.
	id := func() string { return uuid.Must(uuid.NewRandomFromReader(r)).String() }
	var out []reference.Event
	for i := range 30 {
		user := fmt.Sprintf("s%d-user-%d", seed, i)
		anon := ""
		if r.Intn(3) == 0 {
			anon = user + "-anon"
		}
		n := 1 + r.Intn(10)
		at := analysistest.Fday.Add(-12 * h)
		for k := range n {
			if k == 0 || r.Intn(4) != 0 { // else the same time as the previous event
				at = analysistest.Fday.Add(-12*h + time.Duration(r.Intn(100))*20*mi)
			}
			who := user
			if anon != "" && k < n/2 {
				who = anon
			}
			if anon != "" && k == n/2 {
				out = append(out, reference.Event{UUID: id(), DistinctID: user, Event: "$identify", At: at,
					Props: map[string]any{"$anon_distinct_id": anon}})
			}
			props := map[string]any{}
			if v := []string{"free", "pro", "", "ent"}[r.Intn(4)]; v != "" {
				props["plan"] = v
			}
			out = append(out, reference.Event{UUID: id(), DistinctID: who,
				Event: []string{"A", "B", "C", "X", "A", "B", "C"}[r.Intn(7)], At: at, Props: props})
		}
	}
	return out
}

// TestFunnelMatchesTheReferenceOnRandomEvents compares every order type,
// window, exclusion, breakdown attribution and visualisation with the
// reference on random events (with ties, repeats and merged persons).
func TestFunnelMatchesTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	for _, seed := range []int64{1, 2, 3} {
		events := randomEvents(seed)
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
// to the random test's event sets (randomEvents): every order type, a
// step with properties, global properties, breakdowns and trends.
func TestOneStepFunnelsMatchTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	for _, seed := range []int64{1, 2, 3} {
		events := randomEvents(seed)
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
