package api

// Funnel and timing results over HTTP against PostgreSQL and the embedded
// ClickHouse: small event sets sent through /batch/, compared with the
// brute-force reference (funnel_reference_test.go) and, for the key cases,
// with numbers worked out by hand (which also checks the reference).

import (
	"fmt"
	"testing"
	"time"
)

func TestFunnelOrderTypes(t *testing.T) {
	withSteps := func(f refFunnel, props map[string]string, i int) refFunnel {
		f.Steps = append([]refStep(nil), f.Steps...)
		f.Steps[i].Props = props
		return f
	}
	anyStep := funnelOf("", "A", "B")
	anyStep.Steps[1] = refStep{Any: true}
	anyUnordered := anyStep
	anyUnordered.Order = "unordered"
	webOnly := funnelOf("strict", "A", "B")
	webOnly.Properties = map[string]string{"src": "web"}
	runStepsCases(t, []stepsCase{
		{
			name: "ordered: a person counts once, at the furthest step, timed by the latest best attempt",
			events: []refEvent{
				fev("p1", "A", 0), fev("p1", "B", h), fev("p1", "C", 3*h),
				fev("p2", "A", 0), fev("p2", "C", h), fev("p2", "B", 2*h),
				fev("p3", "B", 0), fev("p3", "A", h),
				fev("p4", "A", 0), fev("p4", "A", h), fev("p4", "B", 90*mi),
			},
			f: funnelOf("", "A", "B", "C"),
			// B after A: p1 3600, p2 7200, p4 1800 (from its second A).
			hand: []refStepResult{st(4), st(3, 4200, 3600), st(1, 7200, 7200)},
		},
		{
			name: "ordered: A -> A -> B needs two A events, one event advancing one step",
			events: []refEvent{
				fev("p1", "A", 0), fev("p1", "B", 10*mi),
				fev("p2", "A", 0), fev("p2", "A", 5*mi), fev("p2", "B", 20*mi),
				fev("p3", "A", 0), fev("p3", "B", mi), fev("p3", "A", 2*mi), fev("p3", "B", 3*mi),
			},
			f:    funnelOf("ordered", "A", "A", "B"),
			hand: []refStepResult{st(3), st(2, 210, 210), st(2, 480, 480)},
		},
		{
			name: "among the best attempts starting at the same time, the one later by uuid is counted",
			events: []refEvent{
				fevID("p1", "A", 0, "10000000-0000-4000-8000-000000000000"), fevID("p1", "A", 0, "20000000-0000-4000-8000-000000000000"),
				fev("p1", "A", 20*mi),
			},
			// A1 -> A2 (0 s) and A2 -> A3 (1200 s) both reach step 2: A2 starts later.
			f:    funnelOf("", "A", "A", "B"),
			hand: []refStepResult{st(1), st(1, 1200, 1200), st(0)},
		},
		{
			name: "strict: each step must be the person's very next event",
			events: []refEvent{
				fev("p1", "A", 0), fev("p1", "X", mi), fev("p1", "B", 2*mi),
				fev("p2", "A", 0), fev("p2", "B", 2*mi),
				fev("p3", "A", 0), fev("p3", "A", mi), fev("p3", "B", 3*mi),
				fev("p4", "A", 0), fev("p4", "B", mi),
			},
			f:    funnelOf("strict", "A", "B"),
			hand: []refStepResult{st(4), st(3, 100, 120)},
		},
		{
			name: "strict: events the global filters drop are not read, so they do not break the sequence",
			events: []refEvent{
				fev("p1", "A", 0, "src", "web"), fev("p1", "X", mi, "src", "app"), fev("p1", "B", 2*mi, "src", "web"),
				fev("p2", "A", 0, "src", "web"), fev("p2", "X", mi, "src", "web"), fev("p2", "B", 2*mi, "src", "web"),
				fev("p3", "A", 0, "src", "app"), fev("p3", "B", mi, "src", "web"),
			},
			f:    webOnly,
			hand: []refStepResult{st(2), st(1, 120, 120)},
		},
		{
			name: "unordered: steps in any order inside the window from the entry",
			events: []refEvent{
				fev("p1", "C", 0), fev("p1", "B", 10*mi), fev("p1", "A", 30*mi),
				fev("p2", "B", 0), fev("p2", "A", 20*mi), fev("p2", "C", 2*h),
				fev("p3", "A", 0),
				fev("p4", "A", 0), fev("p4", "C", 61*mi), fev("p4", "B", 70*mi),
			},
			f:    funnelOf("unordered", "A", "B", "C").hours(1),
			hand: []refStepResult{st(4), st(3, 780, 600), st(1, 1200, 1200)},
		},
		{
			name: "unordered: a step definition repeated twice needs two events",
			events: []refEvent{
				fev("p1", "A", 0), fev("p1", "B", mi),
				fev("p2", "A", 0), fev("p2", "B", mi), fev("p2", "A", 2*mi),
				fev("p3", "B", 0), fev("p3", "B", mi),
			},
			f:    funnelOf("unordered", "A", "A", "B"),
			hand: []refStepResult{st(3), st(2, 60, 60), st(1, 60, 60)},
		},
		{
			name: "events at the same time are ordered by their uuid's hex text",
			events: []refEvent{
				// The halves disagree: ordered by the second half first, p1 and p2 would swap.
				fevID("p1", "A", 0, "10000000-0000-4000-8000-000000000002"), fevID("p1", "B", 0, "20000000-0000-4000-8000-000000000001"),
				fevID("p2", "A", 0, "20000000-0000-4000-8000-000000000003"), fevID("p2", "B", 0, "10000000-0000-4000-8000-000000000004"),
				// Differing in the last bytes only: 0000000000ff < 000000000100.
				fevID("p3", "A", 0, "00000000-0000-4000-8000-0000000000ff"), fevID("p3", "B", 0, "00000000-0000-4000-8000-000000000100"),
				fevID("p4", "A", 0, "00000000-0000-4000-8000-000000000201"), fevID("p4", "B", 0, "00000000-0000-4000-8000-0000000002ff"),
				fevID("p5", "B", 0, "00000000-0000-4000-9000-000000000000"), fevID("p5", "A", 0, "00000000-0000-4000-a000-000000000000"),
			},
			f:    funnelOf("", "A", "B"),
			hand: []refStepResult{st(5), st(3, 0, 0)},
		},
		{
			name: "strict: an event at the same time but an earlier uuid sits between the steps",
			events: []refEvent{
				fevID("p1", "A", 0, "a0000000-0000-4000-8000-000000000000"), fevID("p1", "X", 0, "b0000000-0000-4000-8000-000000000000"),
				fevID("p1", "B", 0, "c0000000-0000-4000-8000-000000000000"),
				fevID("p2", "A", 0, "a1000000-0000-4000-8000-000000000000"), fevID("p2", "X", 0, "c1000000-0000-4000-8000-000000000000"),
				fevID("p2", "B", 0, "b1000000-0000-4000-8000-000000000000"),
			},
			f:    funnelOf("strict", "A", "B"),
			hand: []refStepResult{st(2), st(1, 0, 0)},
		},
		{
			name: "a step's own properties narrow its events",
			events: []refEvent{
				fev("p1", "A", 0), fev("p1", "B", mi, "plan", "free"), fev("p1", "B", 3*mi, "plan", "pro"),
				fev("p2", "A", 0), fev("p2", "B", mi, "plan", "free"),
			},
			f:    withSteps(funnelOf("", "A", "B"), map[string]string{"plan": "pro"}, 1),
			hand: []refStepResult{st(2), st(1, 180, 180)},
		},
		{
			name: "a step with id null is any event",
			events: []refEvent{
				fev("p1", "A", 0), fev("p1", "Z", 5*mi),
				fev("p2", "A", 0),
			},
			f:    anyStep,
			hand: []refStepResult{st(2), st(1, 300, 300)},
		},
		{
			name: "unordered: one event matching two different definitions counts for both",
			events: []refEvent{
				fev("p1", "A", 0),
				fev("p2", "Z", 0),
			},
			// p1's A is both "A" and "any event"; p2's Z is only "any event".
			f:    anyUnordered,
			hand: []refStepResult{st(2), st(1, 0, 0)},
		},
		{
			name: "events after date_to are not read, even inside the window",
			events: []refEvent{
				fev("p1", "A", 11*h), fev("p1", "B", 13*h),
				fev("p2", "A", 0), fev("p2", "B", h),
			},
			f:    refFunnel{Steps: []refStep{{Event: "A"}, {Event: "B"}}, DateFrom: "2026-03-01", DateTo: "2026-03-03"},
			hand: []refStepResult{st(2), st(1, 3600, 3600)},
		},
	})
}

func TestFunnelConversionWindowEdges(t *testing.T) {
	// Each case: B exactly at the window converts, one second (and one
	// microsecond) past does not.
	edge := func(w time.Duration) []refEvent {
		return []refEvent{
			fev("at", "A", 0), fev("at", "B", w),
			fev("second-past", "A", 0), fev("second-past", "B", w+sc),
			fev("micro-past", "A", 0), fev("micro-past", "B", w+us),
			fev("micro-before", "A", 0), fev("micro-before", "B", w-us),
		}
	}
	win := func(n int, unit string) refFunnel {
		f := funnelOf("", "A", "B")
		f.WindowInterval, f.WindowUnit = n, unit
		f.DateTo = "2026-04-10"
		return f
	}
	days := func(n int) refFunnel {
		f := win(5, "minute")
		f.WindowDays = n
		return f
	}
	secs := func(w time.Duration) float64 { return w.Seconds() }
	hand := func(w time.Duration) []refStepResult {
		return []refStepResult{st(4), st(2, (secs(w)+secs(w-us))/2, (secs(w)+secs(w-us))/2)}
	}
	typeSynonym := win(2, "HOUR")
	ordered := func(f refFunnel, order string) refFunnel {
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
	excl := func(f refFunnel, x ...refExclusion) refFunnel {
		f.Exclusions = x
		return f
	}
	runStepsCases(t, []stepsCase{
		{
			name: "an excluded event between steps 0 and 1 removes the person from the whole funnel",
			events: []refEvent{
				fev("p1", "A", 0), fev("p1", "X", mi), fev("p1", "B", 2*mi), fev("p1", "C", 3*mi), // X inside: removed
				fev("p2", "A", 0), fev("p2", "B", mi), fev("p2", "X", 2*mi), fev("p2", "C", 3*mi), // X after step 1: kept
				fev("p3", "A", 0), fev("p3", "X", mi), // B never reached, X inside the window: removed
				fev("p4", "A", 0), fev("p4", "X", 2*dy), // X past the window: kept
				fev("p5", "X", 0), fev("p5", "A", mi), fev("p5", "B", 2*mi), // X before step 0: kept
			},
			f:    excl(funnelOf("", "A", "B", "C").hours(24), refExclusion{"X", 0, 1}),
			hand: []refStepResult{st(3), st(2, 60, 60), st(1, 120, 120)},
		},
		{
			name: "an exclusion from step 1 to step 2 looks only after the step-1 event",
			events: []refEvent{
				fev("q1", "A", 0), fev("q1", "X", mi), fev("q1", "B", 2*mi), fev("q1", "C", 3*mi), // kept
				fev("q2", "A", 0), fev("q2", "B", mi), fev("q2", "X", 2*mi), fev("q2", "C", 3*mi), // removed
				fev("q3", "A", 0), fev("q3", "B", mi), fev("q3", "X", 2*mi), // removed: C not reached, X in the window
				fev("q4", "A", 0), fev("q4", "X", mi), // kept: step 1 not reached
			},
			f:    excl(funnelOf("", "A", "B", "C").hours(24), refExclusion{"X", 1, 2}),
			hand: []refStepResult{st(2), st(1, 120, 120), st(1, 60, 60)},
		},
		{
			name: "a later step's event may be excluded between earlier steps",
			events: []refEvent{
				fev("r1", "A", 0), fev("r1", "C", mi), fev("r1", "B", 2*mi), fev("r1", "C", 3*mi), // removed
				fev("r2", "A", 0), fev("r2", "B", mi), fev("r2", "C", 2*mi), // kept
			},
			f:    excl(funnelOf("", "A", "B", "C"), refExclusion{"C", 0, 1}),
			hand: []refStepResult{st(1), st(1, 60, 60), st(1, 60, 60)},
		},
		{
			name: "unordered: exclusions look between the counted attempt's sorted step events",
			events: []refEvent{
				fev("u1", "B", 0), fev("u1", "X", mi), fev("u1", "A", 2*mi),
				fev("u2", "B", 0), fev("u2", "A", mi), fev("u2", "X", 2*mi),
			},
			f:    excl(funnelOf("unordered", "A", "B").hours(1), refExclusion{"X", 0, 1}),
			hand: []refStepResult{st(1), st(1, 60, 60)},
		},
		{
			name: "with the last step not reached, an excluded event exactly at the window's end counts, one microsecond past does not",
			events: []refEvent{
				fev("e1", "A", 0), fev("e1", "X", h), // removed
				fev("e2", "A", 0), fev("e2", "X", h+us), // kept
				fev("e3", "A", 0), fev("e3", "B", 30*mi), fev("e3", "X", 40*mi), // kept: X after step 1
			},
			f:    excl(funnelOf("", "A", "B").hours(1), refExclusion{"X", 0, 1}),
			hand: []refStepResult{st(2), st(1, 1800, 1800)},
		},
		{
			// uuids are unique in a project: ingestion keeps one event per uuid.
			name: "an excluded event at the same time as a step is between them only if the uuid order puts it there",
			events: []refEvent{
				fevID("t1", "X", 0, "10000000-0000-4000-8000-000000000001"), fevID("t1", "A", 0, "20000000-0000-4000-8000-000000000001"),
				fev("t1", "B", mi), // X sorts before A: kept
				fevID("t2", "A", 0, "10000000-0000-4000-8000-000000000002"), fevID("t2", "X", 0, "20000000-0000-4000-8000-000000000002"),
				fev("t2", "B", mi), // X sorts after A: removed
				fev("t3", "A", 0), fevID("t3", "B", mi, "10000000-0000-4000-8000-000000000003"),
				fevID("t3", "X", mi, "20000000-0000-4000-8000-000000000003"), // X sorts after B: kept
				fev("t4", "A", 0), fevID("t4", "X", mi, "10000000-0000-4000-8000-000000000004"),
				fevID("t4", "B", mi, "20000000-0000-4000-8000-000000000004"), // X sorts before B: removed
			},
			f:    excl(funnelOf("", "A", "B"), refExclusion{"X", 0, 1}),
			hand: []refStepResult{st(2), st(2, 60, 60)},
		},
	})
	t.Run("bad exclusions are a 400 naming exclusions", func(t *testing.T) {
		p := newFunnelEnv(t).project(t, []refEvent{fev("p", "A", 0)})
		for name, x := range map[string]refExclusion{
			"from equal to to":                   {"X", 1, 1},
			"from after to":                      {"X", 2, 1},
			"to beyond the last step":            {"X", 0, 3},
			"a negative from":                    {"X", -1, 1},
			"an event identical to a step in it": {"B", 0, 1},
		} {
			t.Run(name, func(t *testing.T) {
				p.wantInvalid(t, "funnel", excl(funnelOf("", "A", "B", "C"), x).filter(nil), "exclusions")
			})
		}
	})
}

func TestFunnelBreakdowns(t *testing.T) {
	events := []refEvent{
		fev("p1", "A", 0, "plan", "free"), fev("p1", "B", mi, "plan", "pro"), fev("p1", "C", 2*mi, "plan", "ent"),
		fev("p2", "A", 0, "plan", "free"), fev("p2", "B", mi, "plan", "free"),
		fev("p3", "A", 0, "plan", "pro"),
		fev("p4", "A", 0), fev("p4", "B", mi, "plan", "pro"),
	}
	tiers := map[string]string{"p1": "gold", "p2": "gold", "p3": "silver"}
	for _, e := range events {
		if tier, ok := tiers[e.DistinctID]; ok && e.Event == "A" {
			e.Props["$set"] = map[string]any{"tier": tier}
		}
	}
	by := func(attribution string, step, limit int) refFunnel {
		f := funnelOf("", "A", "B", "C")
		f.Breakdown, f.Attribution, f.AttributionStep, f.BreakdownLimit = "plan", attribution, step, limit
		return f
	}
	person := funnelOf("", "A", "B", "C")
	person.Breakdown, person.BreakdownType = "tier", "person"
	one, both := st(1, 60, 60), st(2, 60, 60)
	cases := []struct {
		name string
		f    refFunnel
		hand []refSeries
	}{
		{"first_touch (the default) takes the step-0 event's value; values rank by step-1 count, then by value", by("", 0, 0), []refSeries{
			{"free", []refStepResult{st(2), both, one}}, {refNull, []refStepResult{st(1), one, st(0)}}, {"pro", []refStepResult{st(1), st(0), st(0)}}}},
		{"last_touch takes the furthest step's event value", by("last_touch", 0, 0), []refSeries{
			{"pro", []refStepResult{st(2), one, st(0)}}, {"ent", []refStepResult{st(1), one, one}}, {"free", []refStepResult{st(1), one, st(0)}}}},
		{"step takes the given step's value, null when not reached", by("step", 1, 0), []refSeries{
			{"pro", []refStepResult{st(2), both, one}}, {refNull, []refStepResult{st(1), st(0), st(0)}}, {"free", []refStepResult{st(1), one, st(0)}}}},
		{"breakdown_limit folds the rest into other, last", by("first_touch", 0, 1), []refSeries{
			{"free", []refStepResult{st(2), both, one}}, {refOther, []refStepResult{st(2), one, st(0)}}}},
		{"a person breakdown takes the person's property", person, []refSeries{
			{"gold", []refStepResult{st(2), both, one}}, {refNull, []refStepResult{st(1), one, st(0)}}, {"silver", []refStepResult{st(1), st(0), st(0)}}}},
	}
	env := newFunnelEnv(t)
	p := env.project(t, events)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkBreakdown(t, p, events, tc.f, tc.hand) })
	}
	// Two attempts starting at the same time reach the same level: the
	// counted one, and so the first_touch value, is the later by uuid.
	tied := []refEvent{
		fevID("t1", "A", 0, "10000000-0000-4000-8000-000000000000", "plan", "earlier"),
		fevID("t1", "A", 0, "20000000-0000-4000-8000-000000000000", "plan", "later"),
	}
	converted := append(append([]refEvent(nil), tied...), fev("t1", "B", mi))
	pTied, pConverted := env.project(t, tied), env.project(t, converted)
	for _, order := range []string{"ordered", "strict", "unordered"} {
		f := funnelOf(order, "A", "B")
		f.Breakdown = "plan"
		t.Run(order+": first_touch of tied best attempts that reach step 1 is the later one's", func(t *testing.T) {
			checkBreakdown(t, pTied, tied, f, []refSeries{{"later", []refStepResult{st(1), st(0)}}})
		})
		t.Run(order+": first_touch of tied best attempts that reach step 2 is the later one's", func(t *testing.T) {
			checkBreakdown(t, pConverted, converted, f, []refSeries{{"later", []refStepResult{st(1), st(1, 60, 60)}}})
		})
	}
}

func TestFunnelPersonsMergedByIdentify(t *testing.T) {
	groups := funnelOf("", "A", "B")
	groups.GroupIndex = 1
	runStepsCases(t, []stepsCase{{
		name: "aggregation_group_type_index counts the events' $group_1 values, not persons",
		events: []refEvent{
			fev("u1", "A", 0, "$group_1", "acme"), fev("u2", "B", mi, "$group_1", "acme"),
			fev("u3", "A", 0, "$group_1", "beta"), fev("u3", "B", mi),
			fev("u4", "A", 0),
		},
		f:    groups,
		hand: []refStepResult{st(2), st(1, 60, 60)},
	}, {
		name: "anonymous events before (and after) $identify count for the identified person",
		events: []refEvent{
			fev("anon-1", "A", 0), fident("user-1", "anon-1", mi), fev("user-1", "B", 2*mi),
			fev("anon-2", "A", 0), fev("user-2", "B", mi), // never identified: two persons
			fev("anon-3", "A", 0), fident("user-3", "anon-3", mi), fev("anon-3", "B", 2*mi),
		},
		f:    funnelOf("", "A", "B"),
		hand: []refStepResult{st(3), st(2, 120, 120)},
	}})
}

func TestFunnelTrends(t *testing.T) {
	events := []refEvent{
		fev("p1", "A", -12*h-30*mi), fev("p1", "B", -11*h-30*mi), // 2 Mar 23:30 -> 3 Mar 00:30
		fev("p2", "A", -26*h),
		fev("p3", "A", -3*h), fev("p3", "B", -2*h),
		fev("p4", "A", 21*h),
		fev("p5", "A", -28*h), fev("p5", "A", 20*h), fev("p5", "B", 21*h),
	}
	f := funnelOf("", "A", "B").hours(24)
	f.DateFrom, f.DateTo = "2026-03-02", "2026-03-05"
	p := newFunnelEnv(t).project(t, events)
	t.Run("rates per entry day; an attempt converting after its day counts on its entry day", func(t *testing.T) {
		checkTrends(t, p, events, f, []float64{100.0 / 3, 100, 50, 0})
	})
	t.Run("entry days are the project's timezone's days", func(t *testing.T) {
		ny, err := time.LoadLocation("America/New_York")
		if err != nil {
			t.Fatal(err)
		}
		// n1 enters at 22:00 on 2 March in New York (03:00 on the 3rd in UTC).
		events := []refEvent{fev("n1", "A", -9*h), fev("n1", "B", -8*h), fev("n2", "A", h)}
		p := newFunnelEnv(t).project(t, events)
		if st, out := call(t, p.env.h, "PATCH", fmt.Sprintf("/api/organizations/%s/projects/%d/", p.org, p.id), p.key,
			map[string]any{"timezone": "America/New_York"}); st != 200 {
			t.Fatalf("%d %v", st, out)
		}
		f := funnelOf("", "A", "B").hours(24)
		f.DateFrom, f.DateTo, f.Loc = "2026-03-02", "2026-03-04", ny
		checkTrends(t, p, events, f, []float64{100, 0, 0})
	})
	t.Run("broken down, an actor who only enters counts on each entry day under that day's value", func(t *testing.T) {
		// p1 enters on 3 March with k=v1 and on 5 March with k=v2; p2
		// enters and converts on 3 March with k=v1. By hand: v1 on the
		// 3rd is 2 entered, 1 converted (50); v2 on the 5th 1 entered.
		events := []refEvent{fev("p1", "A", 0, "k", "v1"), fev("p1", "A", 2*dy, "k", "v2"),
			fev("p2", "A", h, "k", "v1"), fev("p2", "B", 2*h)}
		p := newFunnelEnv(t).project(t, events)
		f := funnelOf("", "A", "B")
		f.DateFrom, f.DateTo, f.Breakdown = "2026-03-02", "2026-03-05", "k"
		var got []struct {
			Data           []float64 `json:"data"`
			BreakdownValue string    `json:"breakdown_value"`
		}
		p.result(t, "funnel", f.filter(map[string]any{"funnel_viz_type": "trends"}), &got)
		want := map[string][]float64{"v1": {0, 50, 0, 0}, "v2": {0, 0, 0, 0}}
		if len(got) != 2 || got[0].BreakdownValue != "v1" || got[1].BreakdownValue != "v2" {
			t.Fatalf("series %+v, want v1 then v2", got)
		}
		for _, g := range got {
			if !sameFloats(g.Data, want[g.BreakdownValue]) {
				t.Errorf("%s: %v, want %v", g.BreakdownValue, g.Data, want[g.BreakdownValue])
			}
		}
	})
}

func TestFunnelStepLimits(t *testing.T) {
	var names []string
	var events []refEvent
	for i := range 20 {
		names = append(names, fmt.Sprintf("step %02d", i+1))
		events = append(events, fev("all", names[i], time.Duration(i)*mi))
		if i < 12 {
			events = append(events, fev("twelve", names[i], time.Duration(i)*mi))
		}
	}
	var hand []refStepResult
	for i := range 20 {
		switch {
		case i == 0:
			hand = append(hand, st(2))
		case i < 12:
			hand = append(hand, st(2, 60, 60))
		default:
			hand = append(hand, st(1, 60, 60))
		}
	}
	env := newFunnelEnv(t)
	p := env.project(t, events)
	for _, order := range []string{"ordered", "strict", "unordered"} {
		t.Run("20 steps, "+order, func(t *testing.T) { checkSteps(t, p, events, funnelOf(order, names...), nil, hand) })
	}
	// The same event twenty times: twenty distinct events in every order type.
	var repeated []refEvent
	for i := range 20 {
		repeated = append(repeated, fev("all", "A", time.Duration(i)*mi))
		if i < 12 {
			repeated = append(repeated, fev("twelve", "A", time.Duration(i)*mi))
		}
	}
	twenty := make([]string, 20)
	for i := range twenty {
		twenty[i] = "A"
	}
	pRepeated := env.project(t, repeated)
	for _, order := range []string{"ordered", "strict", "unordered"} {
		t.Run("the same step 20 times, "+order, func(t *testing.T) {
			checkSteps(t, pRepeated, repeated, funnelOf(order, twenty...), nil, hand)
		})
	}
	t.Run("21 steps are a 400 naming events", func(t *testing.T) {
		p.wantInvalid(t, "funnel", funnelOf("", append(names, "one more")...).filter(nil), "events")
	})
	t.Run("1 step counts the persons who did it, as PostHog allows", func(t *testing.T) {
		checkSteps(t, p, events, funnelOf("", "step 01"), nil, []refStepResult{st(2)})
	})
	t.Run("no steps is a 400 naming events", func(t *testing.T) {
		p.wantInvalid(t, "funnel", funnelOf("").filter(map[string]any{"events": []any{}}), "events")
	})
	t.Run("the timing endpoint has the same limits, and times no one-step funnel", func(t *testing.T) {
		p.wantInvalid(t, "timing", funnelOf("", append(names, "one more")...).filter(nil), "events")
		p.wantInvalid(t, "timing", funnelOf("", "step 01").filter(nil), "events")
	})
}

func TestFunnelGETAndPOSTAgree(t *testing.T) {
	events := []refEvent{
		fev("p1", "A", 0, "plan", "free"), fev("p1", "B", h), fev("p1", "C", 3*h),
		fev("p2", "A", 0, "plan", "pro"), fev("p2", "C", h), fev("p2", "B", 2*h),
		fev("p3", "B", 0), fev("p3", "X", 10*mi), fev("p3", "A", h),
	}
	p := newFunnelEnv(t).project(t, events)
	bd := funnelOf("strict", "A", "B", "C").hours(4)
	bd.Breakdown, bd.Exclusions = "plan", []refExclusion{{"X", 0, 1}}
	for name, filter := range map[string]map[string]any{
		"steps":           funnelOf("", "A", "B", "C").filter(nil),
		"breakdown":       bd.filter(nil),
		"trends":          funnelOf("", "A", "B").filter(map[string]any{"funnel_viz_type": "trends"}),
		"time_to_convert": funnelOf("", "A", "B").filter(map[string]any{"funnel_viz_type": "time_to_convert", "bin_count": 2}),
	} {
		t.Run(name, func(t *testing.T) {
			pc, post := p.ask(t, "POST", "funnel", filter)
			gc, get := p.ask(t, "GET", "funnel", filter)
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
		filter := funnelOf("", "A", "B").filter(nil)
		pc, post := p.ask(t, "POST", "timing", filter)
		gc, get := p.ask(t, "GET", "timing", filter)
		if pc != 200 || gc != 200 || string(post["result"]) != string(get["result"]) {
			t.Fatalf("POST %d %s\nGET  %d %s", pc, post["result"], gc, mustJSON(t, get))
		}
	})
	t.Run("the filter may sit under filters", func(t *testing.T) {
		filter := funnelOf("", "A", "B", "C").filter(nil)
		_, top := p.ask(t, "POST", "funnel", filter)
		_, under := p.ask(t, "POST", "funnel", map[string]any{"filters": filter})
		if string(top["result"]) != string(under["result"]) {
			t.Fatalf("top level %s\nunder filters %s", top["result"], under["result"])
		}
	})
}

func TestFunnelHostileStringsAreData(t *testing.T) {
	first, second := `'; DROP TABLE events; --`, `quote"d \ back\slash`
	key, val := `{p0:String}'"`, `ünïcödé 🦔 \N`
	bkey := `it's "the" \plan`
	events := []refEvent{
		fev("h1", first, 0, bkey, `O'Brien`, `'); DROP`, "--"), fev("h1", second, mi, key, val, `'); DROP`, "--"),
		fev("h2", first, 0, bkey, "tab\there"), fev("h2", second, mi, key, "other"),
		fev("h3", first, 0, bkey, `O'Brien`), fev("h3", second, 2*mi, key, val),
		fev("h4", first, 0),
	}
	f := funnelOf("", first, second)
	f.Steps[1].Props = map[string]string{key: val}
	env := newFunnelEnv(t)
	p := env.project(t, events)
	t.Run("in event names and step properties", func(t *testing.T) {
		checkSteps(t, p, events, f, nil, []refStepResult{st(4), st(2, 90, 90)})
	})
	t.Run("in a breakdown key and its values", func(t *testing.T) {
		b := f
		b.Breakdown = bkey
		checkBreakdown(t, p, events, b, []refSeries{
			{`O'Brien`, []refStepResult{st(2), st(2, 90, 90)}}, {refNull, []refStepResult{st(1), st(0)}}, {"tab\there", []refStepResult{st(1), st(0)}}})
	})
	t.Run("in exclusions and global properties", func(t *testing.T) {
		x := f
		x.Exclusions = []refExclusion{{`\'; --`, 0, 1}}
		x.Properties = map[string]string{`'); DROP`: `--`}
		checkSteps(t, p, events, x, nil, []refStepResult{st(1), st(1, 60, 60)})
	})
	// A NUL is data too (querybuilder/README.md: it matches nothing and is
	// not refused, as in trends): no event here holds one.
	t.Run("a NUL in an event name matches nothing", func(t *testing.T) {
		checkSteps(t, p, events, funnelOf("", first, second+"\x00"), nil, []refStepResult{st(4), st(0)})
	})
	t.Run("a NUL in a property value matches nothing", func(t *testing.T) {
		n := funnelOf("", first, second)
		n.Steps[1].Props = map[string]string{key: val + "\x00"}
		checkSteps(t, p, events, n, nil, []refStepResult{st(4), st(0)})
	})
	t.Run("a NUL in a breakdown key is a key no event has", func(t *testing.T) {
		n := f
		n.Breakdown = bkey + "\x00"
		checkBreakdown(t, p, events, n, []refSeries{{refNull, []refStepResult{st(4), st(2, 90, 90)}}})
	})
}
