package api

// Random event sets, many of them tied in time and merged by $identify,
// where every funnel mode must agree with the reference.

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/google/uuid"
)

// randomEvents are seeded random events of 30 persons over two days,
// with many events at the same time, some persons starting anonymous and
// identifying part way.
func randomEvents(seed int64) []refEvent {
	r := rand.New(rand.NewSource(seed))
	// uuids from the seed too, so that a run's ties are the next run's.
	id := func() string { return uuid.Must(uuid.NewRandomFromReader(r)).String() }
	var out []refEvent
	for i := range 30 {
		user := fmt.Sprintf("s%d-user-%d", seed, i)
		anon := ""
		if r.Intn(3) == 0 {
			anon = user + "-anon"
		}
		n := 1 + r.Intn(10)
		at := fday.Add(-12 * h)
		for k := range n {
			if k == 0 || r.Intn(4) != 0 { // else the same time as the previous event
				at = fday.Add(-12*h + time.Duration(r.Intn(100))*20*mi)
			}
			who := user
			if anon != "" && k < n/2 {
				who = anon
			}
			if anon != "" && k == n/2 {
				out = append(out, refEvent{UUID: id(), DistinctID: user, Event: "$identify", At: at,
					Props: map[string]any{"$anon_distinct_id": anon}})
			}
			props := map[string]any{}
			if v := []string{"free", "pro", "", "ent"}[r.Intn(4)]; v != "" {
				props["plan"] = v
			}
			out = append(out, refEvent{UUID: id(), DistinctID: who,
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
					f := funnelOf(order, steps...).hours(hours)
					t.Run(fmt.Sprintf("seed %d %s %v within %dh", seed, order, steps, hours), func(t *testing.T) {
						checkSteps(t, p, events, f, nil, nil)
					})
				}
			}
			narrow := funnelOf(order, "A", "B", "C").hours(6)
			narrow.Steps[1].Props = map[string]string{"plan": "pro"}
			anyNext := funnelOf(order, "A", "B").hours(2)
			anyNext.Steps[1] = refStep{Any: true}
			global := funnelOf(order, "A", "B").hours(6)
			global.Properties = map[string]string{"plan": "pro"}
			for name, f := range map[string]refFunnel{"a step with properties": narrow, "a step of any event": anyNext, "global properties": global} {
				t.Run(fmt.Sprintf("seed %d %s %s", seed, order, name), func(t *testing.T) {
					checkSteps(t, p, events, f, nil, nil)
				})
			}
			base := funnelOf(order, "A", "B", "C").hours(6)
			for _, x := range []refExclusion{{"X", 0, 1}, {"X", 1, 2}, {"X", 0, 2}} {
				f := base
				f.Exclusions = []refExclusion{x}
				t.Run(fmt.Sprintf("seed %d %s excluding X from %d to %d", seed, order, x.From, x.To), func(t *testing.T) {
					checkSteps(t, p, events, f, nil, nil)
				})
			}
			for _, a := range []struct {
				attribution string
				step, limit int
			}{{"first_touch", 0, 0}, {"last_touch", 0, 0}, {"step", 1, 0}, {"step", 2, 0}, {"first_touch", 0, 2}} {
				f := base
				f.Breakdown, f.Attribution, f.AttributionStep, f.BreakdownLimit = "plan", a.attribution, a.step, a.limit
				t.Run(fmt.Sprintf("seed %d %s breakdown %s %d limit %d", seed, order, a.attribution, a.step, a.limit), func(t *testing.T) {
					checkBreakdown(t, p, events, f, nil)
				})
			}
			t.Run(fmt.Sprintf("seed %d %s time to convert", seed, order), func(t *testing.T) {
				checkTimeToConvert(t, p, events, base, 0, nil)
				f := base
				f.FromStep, f.ToStep = 1, 2
				checkTimeToConvert(t, p, events, f, 4, nil)
				f.Exclusions = []refExclusion{{"X", 0, 1}}
				checkTimeToConvert(t, p, events, f, 3, nil)
			})
			t.Run(fmt.Sprintf("seed %d %s timing", seed, order), func(t *testing.T) {
				checkTiming(t, p, events, base, 0)
			})
			t.Run(fmt.Sprintf("seed %d %s breakdown with an exclusion", seed, order), func(t *testing.T) {
				f := base
				f.Breakdown, f.Attribution, f.Exclusions = "plan", "last_touch", []refExclusion{{"X", 1, 2}}
				checkBreakdown(t, p, events, f, nil)
			})
			t.Run(fmt.Sprintf("seed %d %s on 3 March only", seed, order), func(t *testing.T) {
				f := base
				f.DateFrom, f.DateTo = "2026-03-03", "2026-03-03"
				checkSteps(t, p, events, f, nil, nil)
			})
		}
		for _, order := range []string{"ordered", "strict", "unordered"} {
			f := funnelOf(order, "A", "B").hours(6)
			f.DateFrom, f.DateTo = "2026-03-02", "2026-03-05"
			t.Run(fmt.Sprintf("seed %d %s trends", seed, order), func(t *testing.T) { checkTrends(t, p, events, f, nil) })
			g := funnelOf(order, "A", "B", "C").hours(6)
			g.DateFrom, g.DateTo, g.FromStep, g.ToStep = "2026-03-02", "2026-03-05", 1, 2
			t.Run(fmt.Sprintf("seed %d %s trends from step 1 to 2", seed, order), func(t *testing.T) { checkTrends(t, p, events, g, nil) })
			x := funnelOf(order, "A", "B", "C").hours(6)
			x.DateFrom, x.DateTo, x.Exclusions = "2026-03-02", "2026-03-05", []refExclusion{{"X", 0, 1}}
			t.Run(fmt.Sprintf("seed %d %s trends with an exclusion", seed, order), func(t *testing.T) { checkTrends(t, p, events, x, nil) })
		}
	}
}
