package analysis_test

// Funnel and timing results over HTTP against PostgreSQL and the embedded
// ClickHouse: small event sets sent through /batch/, compared with the
// brute-force reference (funnel_reference_test.go) and, for the key cases,
// with numbers worked out by hand (which also checks the reference).

import (
	"fmt"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

func TestFunnelOrderTypes(t *testing.T) {
	withSteps := func(f reference.Funnel, props map[string]string, i int) reference.Funnel {
		f.Steps = append([]reference.Step(nil), f.Steps...)
		f.Steps[i].Props = props
		return f
	}
	anyStep := analysistest.FunnelOf("", "A", "B")
	anyStep.Steps[1] = reference.Step{Any: true}
	anyUnordered := anyStep
	anyUnordered.Order = "unordered"
	webOnly := analysistest.FunnelOf("strict", "A", "B")
	webOnly.Properties = map[string]string{"src": "web"}
	runStepsCases(t, []stepsCase{
		{
			name: "ordered: a person counts once, at the furthest step, timed by the latest best attempt",
			events: []reference.Event{
				analysistest.Fev("p1", "A", 0), analysistest.Fev("p1", "B", h), analysistest.Fev("p1", "C", 3*h),
				analysistest.Fev("p2", "A", 0), analysistest.Fev("p2", "C", h), analysistest.Fev("p2", "B", 2*h),
				analysistest.Fev("p3", "B", 0), analysistest.Fev("p3", "A", h),
				analysistest.Fev("p4", "A", 0), analysistest.Fev("p4", "A", h), analysistest.Fev("p4", "B", 90*mi),
			},
			f: analysistest.FunnelOf("", "A", "B", "C"),
			// B after A: p1 3600, p2 7200, p4 1800 (from its second A).
			hand: []reference.StepResult{analysistest.St(4), analysistest.St(3, 4200, 3600), analysistest.St(1, 7200, 7200)},
		},
		{
			name: "ordered: A -> A -> B needs two A events, one event advancing one step",
			events: []reference.Event{
				analysistest.Fev("p1", "A", 0), analysistest.Fev("p1", "B", 10*mi),
				analysistest.Fev("p2", "A", 0), analysistest.Fev("p2", "A", 5*mi), analysistest.Fev("p2", "B", 20*mi),
				analysistest.Fev("p3", "A", 0), analysistest.Fev("p3", "B", mi), analysistest.Fev("p3", "A", 2*mi), analysistest.Fev("p3", "B", 3*mi),
			},
			f:    analysistest.FunnelOf("ordered", "A", "A", "B"),
			hand: []reference.StepResult{analysistest.St(3), analysistest.St(2, 210, 210), analysistest.St(2, 480, 480)},
		},
		{
			name: "among the best attempts starting at the same time, the one later by uuid is counted",
			events: []reference.Event{
				analysistest.FevID("p1", "A", 0, "10000000-0000-4000-8000-000000000000"), analysistest.FevID("p1", "A", 0, "20000000-0000-4000-8000-000000000000"),
				analysistest.Fev("p1", "A", 20*mi),
			},
			// A1 -> A2 (0 s) and A2 -> A3 (1200 s) both reach step 2: A2 starts later.
			f:    analysistest.FunnelOf("", "A", "A", "B"),
			hand: []reference.StepResult{analysistest.St(1), analysistest.St(1, 1200, 1200), analysistest.St(0)},
		},
		{
			name: "strict: each step must be the person's very next event",
			events: []reference.Event{
				analysistest.Fev("p1", "A", 0), analysistest.Fev("p1", "X", mi), analysistest.Fev("p1", "B", 2*mi),
				analysistest.Fev("p2", "A", 0), analysistest.Fev("p2", "B", 2*mi),
				analysistest.Fev("p3", "A", 0), analysistest.Fev("p3", "A", mi), analysistest.Fev("p3", "B", 3*mi),
				analysistest.Fev("p4", "A", 0), analysistest.Fev("p4", "B", mi),
			},
			f:    analysistest.FunnelOf("strict", "A", "B"),
			hand: []reference.StepResult{analysistest.St(4), analysistest.St(3, 100, 120)},
		},
		{
			name: "strict: events the global filters drop are not read, so they do not break the sequence",
			events: []reference.Event{
				analysistest.Fev("p1", "A", 0, "src", "web"), analysistest.Fev("p1", "X", mi, "src", "app"), analysistest.Fev("p1", "B", 2*mi, "src", "web"),
				analysistest.Fev("p2", "A", 0, "src", "web"), analysistest.Fev("p2", "X", mi, "src", "web"), analysistest.Fev("p2", "B", 2*mi, "src", "web"),
				analysistest.Fev("p3", "A", 0, "src", "app"), analysistest.Fev("p3", "B", mi, "src", "web"),
			},
			f:    webOnly,
			hand: []reference.StepResult{analysistest.St(2), analysistest.St(1, 120, 120)},
		},
		{
			name: "unordered: steps in any order inside the window from the entry",
			events: []reference.Event{
				analysistest.Fev("p1", "C", 0), analysistest.Fev("p1", "B", 10*mi), analysistest.Fev("p1", "A", 30*mi),
				analysistest.Fev("p2", "B", 0), analysistest.Fev("p2", "A", 20*mi), analysistest.Fev("p2", "C", 2*h),
				analysistest.Fev("p3", "A", 0),
				analysistest.Fev("p4", "A", 0), analysistest.Fev("p4", "C", 61*mi), analysistest.Fev("p4", "B", 70*mi),
			},
			f:    analysistest.FunnelOf("unordered", "A", "B", "C").Hours(1),
			hand: []reference.StepResult{analysistest.St(4), analysistest.St(3, 780, 600), analysistest.St(1, 1200, 1200)},
		},
		{
			name: "unordered: a step definition repeated twice needs two events",
			events: []reference.Event{
				analysistest.Fev("p1", "A", 0), analysistest.Fev("p1", "B", mi),
				analysistest.Fev("p2", "A", 0), analysistest.Fev("p2", "B", mi), analysistest.Fev("p2", "A", 2*mi),
				analysistest.Fev("p3", "B", 0), analysistest.Fev("p3", "B", mi),
			},
			f:    analysistest.FunnelOf("unordered", "A", "A", "B"),
			hand: []reference.StepResult{analysistest.St(3), analysistest.St(2, 60, 60), analysistest.St(1, 60, 60)},
		},
		{
			name: "events at the same time are ordered by their uuid's hex text",
			events: []reference.Event{
				// The halves disagree: ordered by the second half first, p1 and p2 would swap.
				analysistest.FevID("p1", "A", 0, "10000000-0000-4000-8000-000000000002"), analysistest.FevID("p1", "B", 0, "20000000-0000-4000-8000-000000000001"),
				analysistest.FevID("p2", "A", 0, "20000000-0000-4000-8000-000000000003"), analysistest.FevID("p2", "B", 0, "10000000-0000-4000-8000-000000000004"),
				// Differing in the last bytes only: 0000000000ff < 000000000100.
				analysistest.FevID("p3", "A", 0, "00000000-0000-4000-8000-0000000000ff"), analysistest.FevID("p3", "B", 0, "00000000-0000-4000-8000-000000000100"),
				analysistest.FevID("p4", "A", 0, "00000000-0000-4000-8000-000000000201"), analysistest.FevID("p4", "B", 0, "00000000-0000-4000-8000-0000000002ff"),
				analysistest.FevID("p5", "B", 0, "00000000-0000-4000-9000-000000000000"), analysistest.FevID("p5", "A", 0, "00000000-0000-4000-a000-000000000000"),
			},
			f:    analysistest.FunnelOf("", "A", "B"),
			hand: []reference.StepResult{analysistest.St(5), analysistest.St(3, 0, 0)},
		},
		{
			name: "strict: an event at the same time but an earlier uuid sits between the steps",
			events: []reference.Event{
				analysistest.FevID("p1", "A", 0, "a0000000-0000-4000-8000-000000000000"), analysistest.FevID("p1", "X", 0, "b0000000-0000-4000-8000-000000000000"),
				analysistest.FevID("p1", "B", 0, "c0000000-0000-4000-8000-000000000000"),
				analysistest.FevID("p2", "A", 0, "a1000000-0000-4000-8000-000000000000"), analysistest.FevID("p2", "X", 0, "c1000000-0000-4000-8000-000000000000"),
				analysistest.FevID("p2", "B", 0, "b1000000-0000-4000-8000-000000000000"),
			},
			f:    analysistest.FunnelOf("strict", "A", "B"),
			hand: []reference.StepResult{analysistest.St(2), analysistest.St(1, 0, 0)},
		},
		{
			name: "a step's own properties narrow its events",
			events: []reference.Event{
				analysistest.Fev("p1", "A", 0), analysistest.Fev("p1", "B", mi, "plan", "free"), analysistest.Fev("p1", "B", 3*mi, "plan", "pro"),
				analysistest.Fev("p2", "A", 0), analysistest.Fev("p2", "B", mi, "plan", "free"),
			},
			f:    withSteps(analysistest.FunnelOf("", "A", "B"), map[string]string{"plan": "pro"}, 1),
			hand: []reference.StepResult{analysistest.St(2), analysistest.St(1, 180, 180)},
		},
		{
			name: "a step with id null is any event",
			events: []reference.Event{
				analysistest.Fev("p1", "A", 0), analysistest.Fev("p1", "Z", 5*mi),
				analysistest.Fev("p2", "A", 0),
			},
			f:    anyStep,
			hand: []reference.StepResult{analysistest.St(2), analysistest.St(1, 300, 300)},
		},
		{
			name: "unordered: one event matching two different definitions counts for both",
			events: []reference.Event{
				analysistest.Fev("p1", "A", 0),
				analysistest.Fev("p2", "Z", 0),
			},
			// p1's A is both "A" and "any event"; p2's Z is only "any event".
			f:    anyUnordered,
			hand: []reference.StepResult{analysistest.St(2), analysistest.St(1, 0, 0)},
		},
		{
			name: "events after date_to are not read, even inside the window",
			events: []reference.Event{
				analysistest.Fev("p1", "A", 11*h), analysistest.Fev("p1", "B", 13*h),
				analysistest.Fev("p2", "A", 0), analysistest.Fev("p2", "B", h),
			},
			f:    reference.Funnel{Steps: []reference.Step{{Event: "A"}, {Event: "B"}}, DateFrom: "2026-03-01", DateTo: "2026-03-03"},
			hand: []reference.StepResult{analysistest.St(2), analysistest.St(1, 3600, 3600)},
		},
	})
}

func TestFunnelConversionWindowEdges(t *testing.T) {
	// Each case: B exactly at the window converts, one second (and one
	// microsecond) past does not.
	edge := func(w time.Duration) []reference.Event {
		return []reference.Event{
			analysistest.Fev("at", "A", 0), analysistest.Fev("at", "B", w),
			analysistest.Fev("second-past", "A", 0), analysistest.Fev("second-past", "B", w+sc),
			analysistest.Fev("micro-past", "A", 0), analysistest.Fev("micro-past", "B", w+us),
			analysistest.Fev("micro-before", "A", 0), analysistest.Fev("micro-before", "B", w-us),
		}
	}
	win := func(n int, unit string) reference.Funnel {
		f := analysistest.FunnelOf("", "A", "B")
		f.WindowInterval, f.WindowUnit = n, unit
		f.DateTo = "2026-04-10"
		return f
	}
	days := func(n int) reference.Funnel {
		f := win(5, "minute")
		f.WindowDays = n
		return f
	}
	secs := func(w time.Duration) float64 { return w.Seconds() }
	hand := func(w time.Duration) []reference.StepResult {
		return []reference.StepResult{analysistest.St(4), analysistest.St(2, (secs(w)+secs(w-us))/2, (secs(w)+secs(w-us))/2)}
	}
	typeSynonym := win(2, "HOUR")
	ordered := func(f reference.Funnel, order string) reference.Funnel {
		f.Order = order
		return f
	}
	runStepsCases(t, []stepsCase{
		{name: "30 seconds", events: edge(30 * sc), f: win(30, "second"), hand: hand(30 * sc)},
		{name: "5 minutes", events: edge(5 * mi), f: win(5, "minute"), hand: hand(5 * mi)},
		{name: "1 hour", events: edge(h), f: win(1, "hour"), hand: hand(h)},
		{name: "1 hour, strict", events: edge(h), f: ordered(win(1, "hour"), "strict"), hand: hand(h)},
		{name: "1 hour, unordered", events: edge(h), f: ordered(win(1, "hour"), "unordered"), hand: hand(h)},
		{name: "2 days", events: edge(2 * dy), f: win(2, "day"), hand: hand(2 * dy)},
		{name: "1 week is 7 days", events: edge(7 * dy), f: win(1, "week"), hand: hand(7 * dy)},
		{name: "1 month is 30 days", events: edge(30 * dy), f: win(1, "month"), hand: hand(30 * dy)},
		{name: "the default is 14 days", events: edge(14 * dy), f: win(0, ""), hand: hand(14 * dy)},
		{name: "funnel_window_days overrides interval and unit", events: edge(dy), f: days(1), hand: hand(dy)},
		{name: "funnel_window_interval_type is a synonym, in any case", events: edge(2 * h), f: typeSynonym,
			extra: map[string]any{"funnel_window_interval_unit": nil, "funnel_window_interval_type": "HOUR"}, hand: hand(2 * h)},
	})
}

func TestFunnelExclusions(t *testing.T) {
	excl := func(f reference.Funnel, x ...reference.Exclusion) reference.Funnel {
		f.Exclusions = x
		return f
	}
	runStepsCases(t, []stepsCase{
		{
			name: "an excluded event between steps 0 and 1 removes the person from the whole funnel",
			events: []reference.Event{
				analysistest.Fev("p1", "A", 0), analysistest.Fev("p1", "X", mi), analysistest.Fev("p1", "B", 2*mi), analysistest.Fev("p1", "C", 3*mi), // X inside: removed
				analysistest.Fev("p2", "A", 0), analysistest.Fev("p2", "B", mi), analysistest.Fev("p2", "X", 2*mi), analysistest.Fev("p2", "C", 3*mi), // X after step 1: kept
				analysistest.Fev("p3", "A", 0), analysistest.Fev("p3", "X", mi), // B never reached, X inside the window: removed
				analysistest.Fev("p4", "A", 0), analysistest.Fev("p4", "X", 2*dy), // X past the window: kept
				analysistest.Fev("p5", "X", 0), analysistest.Fev("p5", "A", mi), analysistest.Fev("p5", "B", 2*mi), // X before step 0: kept
			},
			f:    excl(analysistest.FunnelOf("", "A", "B", "C").Hours(24), reference.Exclusion{Event: "X", From: 0, To: 1}),
			hand: []reference.StepResult{analysistest.St(3), analysistest.St(2, 60, 60), analysistest.St(1, 120, 120)},
		},
		{
			name: "an exclusion from step 1 to step 2 looks only after the step-1 event",
			events: []reference.Event{
				analysistest.Fev("q1", "A", 0), analysistest.Fev("q1", "X", mi), analysistest.Fev("q1", "B", 2*mi), analysistest.Fev("q1", "C", 3*mi), // kept
				analysistest.Fev("q2", "A", 0), analysistest.Fev("q2", "B", mi), analysistest.Fev("q2", "X", 2*mi), analysistest.Fev("q2", "C", 3*mi), // removed
				analysistest.Fev("q3", "A", 0), analysistest.Fev("q3", "B", mi), analysistest.Fev("q3", "X", 2*mi), // removed: C not reached, X in the window
				analysistest.Fev("q4", "A", 0), analysistest.Fev("q4", "X", mi), // kept: step 1 not reached
			},
			f:    excl(analysistest.FunnelOf("", "A", "B", "C").Hours(24), reference.Exclusion{Event: "X", From: 1, To: 2}),
			hand: []reference.StepResult{analysistest.St(2), analysistest.St(1, 120, 120), analysistest.St(1, 60, 60)},
		},
		{
			name: "a later step's event may be excluded between earlier steps",
			events: []reference.Event{
				analysistest.Fev("r1", "A", 0), analysistest.Fev("r1", "C", mi), analysistest.Fev("r1", "B", 2*mi), analysistest.Fev("r1", "C", 3*mi), // removed
				analysistest.Fev("r2", "A", 0), analysistest.Fev("r2", "B", mi), analysistest.Fev("r2", "C", 2*mi), // kept
			},
			f:    excl(analysistest.FunnelOf("", "A", "B", "C"), reference.Exclusion{Event: "C", From: 0, To: 1}),
			hand: []reference.StepResult{analysistest.St(1), analysistest.St(1, 60, 60), analysistest.St(1, 60, 60)},
		},
		{
			name: "unordered: exclusions look between the counted attempt's sorted step events",
			events: []reference.Event{
				analysistest.Fev("u1", "B", 0), analysistest.Fev("u1", "X", mi), analysistest.Fev("u1", "A", 2*mi),
				analysistest.Fev("u2", "B", 0), analysistest.Fev("u2", "A", mi), analysistest.Fev("u2", "X", 2*mi),
			},
			f:    excl(analysistest.FunnelOf("unordered", "A", "B").Hours(1), reference.Exclusion{Event: "X", From: 0, To: 1}),
			hand: []reference.StepResult{analysistest.St(1), analysistest.St(1, 60, 60)},
		},
		{
			name: "with the last step not reached, an excluded event exactly at the window's end counts, one microsecond past does not",
			events: []reference.Event{
				analysistest.Fev("e1", "A", 0), analysistest.Fev("e1", "X", h), // removed
				analysistest.Fev("e2", "A", 0), analysistest.Fev("e2", "X", h+us), // kept
				analysistest.Fev("e3", "A", 0), analysistest.Fev("e3", "B", 30*mi), analysistest.Fev("e3", "X", 40*mi), // kept: X after step 1
			},
			f:    excl(analysistest.FunnelOf("", "A", "B").Hours(1), reference.Exclusion{Event: "X", From: 0, To: 1}),
			hand: []reference.StepResult{analysistest.St(2), analysistest.St(1, 1800, 1800)},
		},
		{
			// uuids are unique in a project: ingestion keeps one event per uuid.
			name: "an excluded event at the same time as a step is between them only if the uuid order puts it there",
			events: []reference.Event{
				analysistest.FevID("t1", "X", 0, "10000000-0000-4000-8000-000000000001"), analysistest.FevID("t1", "A", 0, "20000000-0000-4000-8000-000000000001"),
				analysistest.Fev("t1", "B", mi), // X sorts before A: kept
				analysistest.FevID("t2", "A", 0, "10000000-0000-4000-8000-000000000002"), analysistest.FevID("t2", "X", 0, "20000000-0000-4000-8000-000000000002"),
				analysistest.Fev("t2", "B", mi), // X sorts after A: removed
				analysistest.Fev("t3", "A", 0), analysistest.FevID("t3", "B", mi, "10000000-0000-4000-8000-000000000003"),
				analysistest.FevID("t3", "X", mi, "20000000-0000-4000-8000-000000000003"), // X sorts after B: kept
				analysistest.Fev("t4", "A", 0), analysistest.FevID("t4", "X", mi, "10000000-0000-4000-8000-000000000004"),
				analysistest.FevID("t4", "B", mi, "20000000-0000-4000-8000-000000000004"), // X sorts before B: removed
			},
			f:    excl(analysistest.FunnelOf("", "A", "B"), reference.Exclusion{Event: "X", From: 0, To: 1}),
			hand: []reference.StepResult{analysistest.St(2), analysistest.St(2, 60, 60)},
		},
	})
	t.Run("bad exclusions are a 400 naming exclusions", func(t *testing.T) {
		p := newFunnelEnv(t).project(t, []reference.Event{analysistest.Fev("p", "A", 0)})
		for name, x := range map[string]reference.Exclusion{
			"from equal to to":                   {Event: "X", From: 1, To: 1},
			"from after to":                      {Event: "X", From: 2, To: 1},
			"to beyond the last step":            {Event: "X", From: 0, To: 3},
			"a negative from":                    {Event: "X", From: -1, To: 1},
			"an event identical to a step in it": {Event: "B", From: 0, To: 1},
		} {
			t.Run(name, func(t *testing.T) {
				p.wantInvalid(t, "funnel", excl(analysistest.FunnelOf("", "A", "B", "C"), x).Filter(nil), "exclusions")
			})
		}
	})
}

func TestFunnelBreakdowns(t *testing.T) {
	events := []reference.Event{
		analysistest.Fev("p1", "A", 0, "plan", "free"), analysistest.Fev("p1", "B", mi, "plan", "pro"), analysistest.Fev("p1", "C", 2*mi, "plan", "ent"),
		analysistest.Fev("p2", "A", 0, "plan", "free"), analysistest.Fev("p2", "B", mi, "plan", "free"),
		analysistest.Fev("p3", "A", 0, "plan", "pro"),
		analysistest.Fev("p4", "A", 0), analysistest.Fev("p4", "B", mi, "plan", "pro"),
	}
	tiers := map[string]string{"p1": "gold", "p2": "gold", "p3": "silver"}
	for _, e := range events {
		if tier, ok := tiers[e.DistinctID]; ok && e.Event == "A" {
			e.Props["$set"] = map[string]any{"tier": tier}
		}
	}
	by := func(attribution string, step, limit int) reference.Funnel {
		f := analysistest.FunnelOf("", "A", "B", "C")
		f.Breakdown, f.Attribution, f.AttributionStep, f.BreakdownLimit = "plan", attribution, step, limit
		return f
	}
	person := analysistest.FunnelOf("", "A", "B", "C")
	person.Breakdown, person.BreakdownType = "tier", "person"
	one, both := analysistest.St(1, 60, 60), analysistest.St(2, 60, 60)
	cases := []struct {
		name string
		f    reference.Funnel
		hand []reference.Series
	}{
		{"first_touch (the default) takes the step-0 event's value; values rank by step-1 count, then by value", by("", 0, 0), []reference.Series{
			{Value: "free", Steps: []reference.StepResult{analysistest.St(2), both, one}}, {Value: reference.Null, Steps: []reference.StepResult{analysistest.St(1), one, analysistest.St(0)}}, {Value: "pro", Steps: []reference.StepResult{analysistest.St(1), analysistest.St(0), analysistest.St(0)}}}},
		{"last_touch takes the furthest step's event value", by("last_touch", 0, 0), []reference.Series{
			{Value: "pro", Steps: []reference.StepResult{analysistest.St(2), one, analysistest.St(0)}}, {Value: "ent", Steps: []reference.StepResult{analysistest.St(1), one, one}}, {Value: "free", Steps: []reference.StepResult{analysistest.St(1), one, analysistest.St(0)}}}},
		{"step takes the given step's value, null when not reached", by("step", 1, 0), []reference.Series{
			{Value: "pro", Steps: []reference.StepResult{analysistest.St(2), both, one}}, {Value: reference.Null, Steps: []reference.StepResult{analysistest.St(1), analysistest.St(0), analysistest.St(0)}}, {Value: "free", Steps: []reference.StepResult{analysistest.St(1), one, analysistest.St(0)}}}},
		{"breakdown_limit folds the rest into other, last", by("first_touch", 0, 1), []reference.Series{
			{Value: "free", Steps: []reference.StepResult{analysistest.St(2), both, one}}, {Value: reference.Other, Steps: []reference.StepResult{analysistest.St(2), one, analysistest.St(0)}}}},
		{"a person breakdown takes the person's property", person, []reference.Series{
			{Value: "gold", Steps: []reference.StepResult{analysistest.St(2), both, one}}, {Value: reference.Null, Steps: []reference.StepResult{analysistest.St(1), one, analysistest.St(0)}}, {Value: "silver", Steps: []reference.StepResult{analysistest.St(1), analysistest.St(0), analysistest.St(0)}}}},
	}
	env := newFunnelEnv(t)
	p := env.project(t, events)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { analysistest.CheckBreakdown(t, p, events, tc.f, tc.hand) })
	}
	// Two attempts starting at the same time reach the same level: the
	// counted one, and so the first_touch value, is the later by uuid.
	tied := []reference.Event{
		analysistest.FevID("t1", "A", 0, "10000000-0000-4000-8000-000000000000", "plan", "earlier"),
		analysistest.FevID("t1", "A", 0, "20000000-0000-4000-8000-000000000000", "plan", "later"),
	}
	converted := append(append([]reference.Event(nil), tied...), analysistest.Fev("t1", "B", mi))
	pTied, pConverted := env.project(t, tied), env.project(t, converted)
	for _, order := range []string{"ordered", "strict", "unordered"} {
		f := analysistest.FunnelOf(order, "A", "B")
		f.Breakdown = "plan"
		t.Run(order+": first_touch of tied best attempts that reach step 1 is the later one's", func(t *testing.T) {
			analysistest.CheckBreakdown(t, pTied, tied, f, []reference.Series{{Value: "later", Steps: []reference.StepResult{analysistest.St(1), analysistest.St(0)}}})
		})
		t.Run(order+": first_touch of tied best attempts that reach step 2 is the later one's", func(t *testing.T) {
			analysistest.CheckBreakdown(t, pConverted, converted, f, []reference.Series{{Value: "later", Steps: []reference.StepResult{analysistest.St(1), analysistest.St(1, 60, 60)}}})
		})
	}
}

func TestFunnelPersonsMergedByIdentify(t *testing.T) {
	groups := analysistest.FunnelOf("", "A", "B")
	groups.GroupIndex = 1
	runStepsCases(t, []stepsCase{{
		name: "aggregation_group_type_index counts the events' $group_1 values, not persons",
		events: []reference.Event{
			analysistest.Fev("u1", "A", 0, "$group_1", "acme"), analysistest.Fev("u2", "B", mi, "$group_1", "acme"),
			analysistest.Fev("u3", "A", 0, "$group_1", "beta"), analysistest.Fev("u3", "B", mi),
			analysistest.Fev("u4", "A", 0),
		},
		f:    groups,
		hand: []reference.StepResult{analysistest.St(2), analysistest.St(1, 60, 60)},
	}, {
		name: "anonymous events before (and after) $identify count for the identified person",
		events: []reference.Event{
			analysistest.Fev("anon-1", "A", 0), analysistest.Fident("user-1", "anon-1", mi), analysistest.Fev("user-1", "B", 2*mi),
			analysistest.Fev("anon-2", "A", 0), analysistest.Fev("user-2", "B", mi), // never identified: two persons
			analysistest.Fev("anon-3", "A", 0), analysistest.Fident("user-3", "anon-3", mi), analysistest.Fev("anon-3", "B", 2*mi),
		},
		f:    analysistest.FunnelOf("", "A", "B"),
		hand: []reference.StepResult{analysistest.St(3), analysistest.St(2, 120, 120)},
	}})
}

func TestFunnelTrends(t *testing.T) {
	events := []reference.Event{
		analysistest.Fev("p1", "A", -12*h-30*mi), analysistest.Fev("p1", "B", -11*h-30*mi), // 2 Mar 23:30 -> 3 Mar 00:30
		analysistest.Fev("p2", "A", -26*h),
		analysistest.Fev("p3", "A", -3*h), analysistest.Fev("p3", "B", -2*h),
		analysistest.Fev("p4", "A", 21*h),
		analysistest.Fev("p5", "A", -28*h), analysistest.Fev("p5", "A", 20*h), analysistest.Fev("p5", "B", 21*h),
	}
	f := analysistest.FunnelOf("", "A", "B").Hours(24)
	f.DateFrom, f.DateTo = "2026-03-02", "2026-03-05"
	p := newFunnelEnv(t).project(t, events)
	t.Run("rates per entry day; an attempt converting after its day counts on its entry day", func(t *testing.T) {
		analysistest.CheckTrends(t, p, events, f, []float64{100.0 / 3, 100, 50, 0})
	})
	t.Run("entry days are the project's timezone's days", func(t *testing.T) {
		ny, err := time.LoadLocation("America/New_York")
		if err != nil {
			t.Fatal(err)
		}
		// n1 enters at 22:00 on 2 March in New York (03:00 on the 3rd in UTC).
		events := []reference.Event{analysistest.Fev("n1", "A", -9*h), analysistest.Fev("n1", "B", -8*h), analysistest.Fev("n2", "A", h)}
		p := newFunnelEnv(t).project(t, events)
		p.Set(t, map[string]any{"timezone": "America/New_York"})
		f := analysistest.FunnelOf("", "A", "B").Hours(24)
		f.DateFrom, f.DateTo, f.Loc = "2026-03-02", "2026-03-04", ny
		analysistest.CheckTrends(t, p, events, f, []float64{100, 0, 0})
	})
	t.Run("broken down, an actor who only enters counts on each entry day under that day's value", func(t *testing.T) {
		// p1 enters on 3 March with k=v1 and on 5 March with k=v2; p2
		// enters and converts on 3 March with k=v1. By hand: v1 on the
		// 3rd is 2 entered, 1 converted (50); v2 on the 5th 1 entered.
		events := []reference.Event{analysistest.Fev("p1", "A", 0, "k", "v1"), analysistest.Fev("p1", "A", 2*dy, "k", "v2"),
			analysistest.Fev("p2", "A", h, "k", "v1"), analysistest.Fev("p2", "B", 2*h)}
		p := newFunnelEnv(t).project(t, events)
		f := analysistest.FunnelOf("", "A", "B")
		f.DateFrom, f.DateTo, f.Breakdown = "2026-03-02", "2026-03-05", "k"
		var got []struct {
			Data           []float64 `json:"data"`
			BreakdownValue string    `json:"breakdown_value"`
		}
		p.result(t, "funnel", f.Filter(map[string]any{"funnel_viz_type": "trends"}), &got)
		want := map[string][]float64{"v1": {0, 50, 0, 0}, "v2": {0, 0, 0, 0}}
		if len(got) != 2 || got[0].BreakdownValue != "v1" || got[1].BreakdownValue != "v2" {
			t.Fatalf("series %+v, want v1 then v2", got)
		}
		for _, g := range got {
			if !analysistest.SameFloats(g.Data, want[g.BreakdownValue]) {
				t.Errorf("%s: %v, want %v", g.BreakdownValue, g.Data, want[g.BreakdownValue])
			}
		}
	})
}

func TestFunnelStepLimits(t *testing.T) {
	var names []string
	var events []reference.Event
	for i := range 20 {
		names = append(names, fmt.Sprintf("step %02d", i+1))
		events = append(events, analysistest.Fev("all", names[i], time.Duration(i)*mi))
		if i < 12 {
			events = append(events, analysistest.Fev("twelve", names[i], time.Duration(i)*mi))
		}
	}
	var hand []reference.StepResult
	for i := range 20 {
		switch {
		case i == 0:
			hand = append(hand, analysistest.St(2))
		case i < 12:
			hand = append(hand, analysistest.St(2, 60, 60))
		default:
			hand = append(hand, analysistest.St(1, 60, 60))
		}
	}
	env := newFunnelEnv(t)
	p := env.project(t, events)
	for _, order := range []string{"ordered", "strict", "unordered"} {
		t.Run("20 steps, "+order, func(t *testing.T) {
			analysistest.CheckSteps(t, p, events, analysistest.FunnelOf(order, names...), nil, hand)
		})
	}
	// The same event twenty times: twenty distinct events in every order type.
	var repeated []reference.Event
	for i := range 20 {
		repeated = append(repeated, analysistest.Fev("all", "A", time.Duration(i)*mi))
		if i < 12 {
			repeated = append(repeated, analysistest.Fev("twelve", "A", time.Duration(i)*mi))
		}
	}
	twenty := make([]string, 20)
	for i := range twenty {
		twenty[i] = "A"
	}
	pRepeated := env.project(t, repeated)
	for _, order := range []string{"ordered", "strict", "unordered"} {
		t.Run("the same step 20 times, "+order, func(t *testing.T) {
			analysistest.CheckSteps(t, pRepeated, repeated, analysistest.FunnelOf(order, twenty...), nil, hand)
		})
	}
	t.Run("21 steps are a 400 naming events", func(t *testing.T) {
		p.wantInvalid(t, "funnel", analysistest.FunnelOf("", append(names, "one more")...).Filter(nil), "events")
	})
	t.Run("1 step counts the persons who did it, as PostHog allows", func(t *testing.T) {
		analysistest.CheckSteps(t, p, events, analysistest.FunnelOf("", "step 01"), nil, []reference.StepResult{analysistest.St(2)})
	})
	t.Run("no steps is a 400 naming events", func(t *testing.T) {
		p.wantInvalid(t, "funnel", analysistest.FunnelOf("").Filter(map[string]any{"events": []any{}}), "events")
	})
	t.Run("the timing endpoint has the same limits, and times no one-step funnel", func(t *testing.T) {
		p.wantInvalid(t, "timing", analysistest.FunnelOf("", append(names, "one more")...).Filter(nil), "events")
		p.wantInvalid(t, "timing", analysistest.FunnelOf("", "step 01").Filter(nil), "events")
	})
}

func TestFunnelHostileStringsAreData(t *testing.T) {
	first, second := `'; DROP TABLE events; --`, `quote"d \ back\slash`
	key, val := `{p0:String}'"`, `ünïcödé 🦔 \N`
	bkey := `it's "the" \plan`
	events := []reference.Event{
		analysistest.Fev("h1", first, 0, bkey, `O'Brien`, `'); DROP`, "--"), analysistest.Fev("h1", second, mi, key, val, `'); DROP`, "--"),
		analysistest.Fev("h2", first, 0, bkey, "tab\there"), analysistest.Fev("h2", second, mi, key, "other"),
		analysistest.Fev("h3", first, 0, bkey, `O'Brien`), analysistest.Fev("h3", second, 2*mi, key, val),
		analysistest.Fev("h4", first, 0),
	}
	f := analysistest.FunnelOf("", first, second)
	f.Steps[1].Props = map[string]string{key: val}
	env := newFunnelEnv(t)
	p := env.project(t, events)
	t.Run("in event names and step properties", func(t *testing.T) {
		analysistest.CheckSteps(t, p, events, f, nil, []reference.StepResult{analysistest.St(4), analysistest.St(2, 90, 90)})
	})
	t.Run("in a breakdown key and its values", func(t *testing.T) {
		b := f
		b.Breakdown = bkey
		analysistest.CheckBreakdown(t, p, events, b, []reference.Series{
			{Value: `O'Brien`, Steps: []reference.StepResult{analysistest.St(2), analysistest.St(2, 90, 90)}}, {Value: reference.Null, Steps: []reference.StepResult{analysistest.St(1), analysistest.St(0)}}, {Value: "tab\there", Steps: []reference.StepResult{analysistest.St(1), analysistest.St(0)}}})
	})
	t.Run("in exclusions and global properties", func(t *testing.T) {
		x := f
		x.Exclusions = []reference.Exclusion{{Event: `\'; --`, From: 0, To: 1}}
		x.Properties = map[string]string{`'); DROP`: `--`}
		analysistest.CheckSteps(t, p, events, x, nil, []reference.StepResult{analysistest.St(1), analysistest.St(1, 60, 60)})
	})
	// A NUL is data too (querybuilder/README.md: it matches nothing and is
	// not refused, as in trends): no event here holds one.
	t.Run("a NUL in an event name matches nothing", func(t *testing.T) {
		analysistest.CheckSteps(t, p, events, analysistest.FunnelOf("", first, second+"\x00"), nil, []reference.StepResult{analysistest.St(4), analysistest.St(0)})
	})
	t.Run("a NUL in a property value matches nothing", func(t *testing.T) {
		n := analysistest.FunnelOf("", first, second)
		n.Steps[1].Props = map[string]string{key: val + "\x00"}
		analysistest.CheckSteps(t, p, events, n, nil, []reference.StepResult{analysistest.St(4), analysistest.St(0)})
	})
	t.Run("a NUL in a breakdown key is a key no event has", func(t *testing.T) {
		n := f
		n.Breakdown = bkey + "\x00"
		analysistest.CheckBreakdown(t, p, events, n, []reference.Series{{Value: reference.Null, Steps: []reference.StepResult{analysistest.St(4), analysistest.St(2, 90, 90)}}})
	})
}
