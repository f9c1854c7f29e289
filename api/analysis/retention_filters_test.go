package analysis_test

// Retention and lifecycle with filters (properties, the project's test
// account filters, entity properties), groups, and retention past 64
// intervals (the statement's 128-bit path), on the random events of
// retention_random_test.go, against the reference.

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// notFree is the project's test account filters in these tests: persons
// whose plan is free are test accounts (a person without a plan is not).
var notFree = []any{map[string]any{"key": "plan", "value": "free", "operator": "is_not", "type": "person"}}

func keepNotFree(_ reference.Event, person map[string]any) bool {
	return reference.String(person["plan"]) != "free"
}

// testAccounts sets the project's test_account_filters.
func (p *funnelProject) testAccounts(t *testing.T, filters []any) {
	t.Helper()
	p.Set(t, map[string]any{"test_account_filters": filters})
}

// filteredRetentionCases are the cases with filters and those past 64
// intervals, at(d, hour) being 30 minutes past that hour of March d.
func filteredRetentionCases(at func(d, hour int) time.Time) map[string]reference.Retention {
	// Global properties: the event's browser is Chrome or Firefox, and
	// its person's plan is not pro (a person without a plan passes).
	properties := map[string]any{"properties": []any{
		map[string]any{"key": "browser", "value": []any{"Chrome", "Firefox"}, "type": "event"},
		map[string]any{"key": "plan", "value": "pro", "operator": "is_not", "type": "person"}}}
	keepProps := func(e reference.Event, person map[string]any) bool {
		b := reference.String(e.Props["browser"])
		return (b == "Chrome" || b == "Firefox") && reference.String(person["plan"]) != "pro"
	}
	chrome := func(e reference.Event, _ map[string]any) bool {
		return reference.String(e.Props["browser"]) == "Chrome"
	}
	notSafari := func(e reference.Event, _ map[string]any) bool {
		return reference.String(e.Props["browser"]) != "Safari"
	}
	entities := map[string]any{
		"target_entity":    map[string]any{"id": "A", "type": "events", "properties": []any{map[string]any{"key": "browser", "value": "Chrome"}}},
		"returning_entity": map[string]any{"id": "A", "type": "events", "properties": []any{map[string]any{"key": "browser", "value": "Safari", "operator": "is_not"}}},
	}
	tests := map[string]any{"filter_test_accounts": true}
	return map[string]reference.Retention{
		"properties": {Target: "A", Returning: "B", Period: "day", Intervals: 9, DateTo: at(10, 12), Keep: keepProps, Extra: properties},
		"first time with properties": {Target: "A", Returning: "A", Period: "day", Intervals: 9, DateTo: at(10, 12), FirstTime: true,
			Keep: keepProps, Extra: properties},
		"test accounts filtered": {Target: "A", Returning: "A", Period: "week", Intervals: 3, DateTo: at(11, 12), Keep: keepNotFree, Extra: tests},
		// The same event with different properties as target and as
		// returning entity: each event is judged as both.
		"entity properties": {Target: "A", Returning: "A", Period: "day", Intervals: 8, DateTo: at(10, 12),
			TargetKeep: chrome, ReturningKeep: notSafari, Extra: entities},
		"first time by entity properties": {Target: "A", Returning: "A", Period: "day", Intervals: 8, DateTo: at(10, 12), FirstTime: true,
			TargetKeep: chrome, ReturningKeep: notSafari, Extra: entities},
		// 100 hours: past 64 periods the bitmaps are 128-bit numbers.
		"hourly 100 intervals":            {Target: "A", Returning: "B", Period: "hour", Intervals: 100, DateTo: at(10, 12)},
		"first time hourly 100 intervals": {Target: "A", Returning: "A", Period: "hour", Intervals: 100, DateTo: at(9, 20), FirstTime: true},
		"hourly 100 intervals by browser": {Target: "A", Returning: "A", Period: "hour", Intervals: 100, DateTo: at(9, 20), Breakdown: "browser",
			Limit: 2, Keep: keepNotFree, Extra: tests},
	}
}

// withGroups gives each event but $identify an organization ($group_1)
// and most a team ($group_2), from its uuid: a group's events come from
// several persons.
func withGroups(events []reference.Event) []reference.Event {
	out := make([]reference.Event, len(events))
	for i, e := range events {
		props := map[string]any{}
		for k, v := range e.Props {
			props[k] = v
		}
		if e.Event != "$identify" {
			props["$group_1"] = fmt.Sprintf("org%d", e.UUID[0]%3)
			if e.UUID[1]%4 != 0 {
				props["$group_2"] = fmt.Sprintf("team%d", e.UUID[2]%5)
			}
		}
		e.Props = props
		out[i] = e
	}
	return out
}

// refLifecycleOf is the lifecycle of actors: actorOf names an event's
// actor ("" for none), active says whether the event counts as activity
// (the entity and the filters). An actor's creation is its earliest event
// of any kind.
func refLifecycleOf(all []reference.Event, cal reference.Calendar, unit string, from, to time.Time, actorOf func(reference.Event) string,
	active func(reference.Event) bool) map[string][]int {
	bounds := reference.Buckets(cal, unit, from, to)
	n := len(bounds) - 1
	before := cal.Add(unit, bounds[0], -1)
	withBefore := append([]time.Time{before}, bounds...) // index 0: the bucket before
	out := map[string][]int{}
	for _, st := range []string{"new", "returning", "resurrecting", "dormant"} {
		out[st] = make([]int, n)
	}
	created := map[string]time.Time{}
	acts := map[string]map[int]bool{}
	for _, e := range all {
		a := actorOf(e)
		if a == "" {
			continue
		}
		if c, ok := created[a]; !ok || e.At.Before(c) {
			created[a] = e.At
		}
		if acts[a] == nil {
			acts[a] = map[int]bool{}
		}
		if k := reference.PeriodIndex(withBefore, e.At); k >= 0 && active(e) {
			acts[a][k] = true
		}
	}
	for a, act := range acts {
		c := reference.PeriodIndex(withBefore, created[a]) // -1 before the bucket before
		for b := 1; b <= n; b++ {
			switch {
			case act[b] && b == c:
				out["new"][b-1]++
			case act[b] && act[b-1]:
				out["returning"][b-1]++
			case act[b]:
				out["resurrecting"][b-1]++
			case act[b-1]:
				out["dormant"][b-1]--
			}
		}
	}
	return out
}

func TestLifecycleWithFiltersAndGroupsMatchesTheReference(t *testing.T) {
	env := newFunnelEnv(t)
	events := withGroups(analysistest.PeriodEvents(5))
	p := env.project(t, events)
	p.testAccounts(t, notFree)
	personOf, props := reference.Identities(events)
	person := func(e reference.Event) string { return personOf(e.DistinctID) }
	group := func(k string) func(reference.Event) string {
		return func(e reference.Event) string { return reference.String(e.Props[k]) }
	}
	isA := func(e reference.Event) bool { return e.Event == "A" }
	// The request's properties: not Safari, and the person's plan is not
	// pro; the test accounts: the person's plan is not free.
	props1 := []any{map[string]any{"key": "browser", "value": "Safari", "operator": "is_not"},
		map[string]any{"key": "plan", "value": "pro", "operator": "is_not", "type": "person"}}
	filtered := func(e reference.Event) bool {
		return isA(e) && reference.String(e.Props["browser"]) != "Safari" && reference.String(props[personOf(e.DistinctID)]["plan"]) != "pro"
	}
	chrome := func(e reference.Event) bool { return isA(e) && reference.String(e.Props["browser"]) == "Chrome" }
	notFreeA := func(e reference.Event) bool { return isA(e) && keepNotFree(e, props[personOf(e.DistinctID)]) }
	entity := map[string]any{"id": "A"}
	chromeEntity := map[string]any{"id": "A", "properties": []any{map[string]any{"key": "browser", "value": "Chrome"}}}
	for _, c := range []struct {
		tz   string
		week int
	}{{"UTC", 0}, {"America/New_York", 1}} {
		cal := analysistest.SetCalendar(t, p, c.tz, c.week)
		day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, cal.Loc) }
		days := map[string]any{"date_from": "2026-03-01", "date_to": "2026-03-10"}
		dayTo := day(11).Add(-time.Microsecond)
		for _, tc := range []struct {
			name    string
			extra   map[string]any
			unit    string
			from    time.Time
			actorOf func(reference.Event) string
			active  func(reference.Event) bool
		}{
			{"persons, properties", map[string]any{"properties": props1}, "day", day(1), person, filtered},
			{"persons, test accounts", map[string]any{"filter_test_accounts": true}, "day", day(1), person, notFreeA},
			{"persons, entity properties", map[string]any{"events": []any{chromeEntity}}, "day", day(1), person, chrome},
			{"organizations", map[string]any{"aggregation_group_type_index": 1}, "day", day(1), group("$group_1"), isA},
			{"teams with properties", map[string]any{"aggregation_group_type_index": 2, "properties": props1}, "day", day(1),
				group("$group_2"), filtered},
			{"teams weekly", map[string]any{"aggregation_group_type_index": 2, "interval": "week"}, "week", cal.Start("week", day(1)),
				group("$group_2"), isA},
		} {
			t.Run(fmt.Sprintf("%s week %d %s", c.tz, c.week, tc.name), func(t *testing.T) {
				body := map[string]any{"insight": "LIFECYCLE", "events": []any{entity}}
				for k, v := range days {
					body[k] = v
				}
				for k, v := range tc.extra {
					body[k] = v
				}
				to := dayTo
				if tc.unit == "week" {
					to = cal.Add("week", cal.Start("week", day(10)), 1).Add(-time.Microsecond)
				}
				var got []analysistest.APITrendSeries
				p.result(t, "trend", body, &got)
				want := refLifecycleOf(events, cal, tc.unit, tc.from, to, tc.actorOf, tc.active)
				if len(got) != 4 {
					t.Fatalf("%d series", len(got))
				}
				zero := true
				for i, st := range []string{"new", "returning", "resurrecting", "dormant"} {
					var data []int
					for _, v := range got[i].Data {
						data = append(data, int(v))
						zero = zero && v == 0
					}
					if got[i].Status != st || !reflect.DeepEqual(data, want[st]) {
						t.Fatalf("%s: got %s %v, want %v", st, got[i].Status, data, want[st])
					}
				}
				if zero {
					t.Fatal("every status is 0: the case checks nothing")
				}
			})
		}
	}
}
