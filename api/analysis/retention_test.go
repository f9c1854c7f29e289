package analysis_test

// Retention, lifecycle and stickiness on random events (ties, merged
// persons, several timezones across a DST change, both week starts),
// compared with the reference (retention_reference_test.go).

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

func TestRetentionMatchesTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	calendars := []struct {
		tz   string
		week int
	}{{"UTC", 0}, {"America/New_York", 1}, {"Europe/Berlin", 0}}
	for _, seed := range []int64{1, 2} {
		events := analysistest.PeriodEvents(seed)
		p := env.project(t, events)
		p.testAccounts(t, notFree)
		for _, c := range calendars {
			cal := analysistest.SetCalendar(t, p, c.tz, c.week)
			at := func(d, hour int) time.Time { return time.Date(2026, 3, d, hour, 30, 0, 0, cal.Loc) }
			cases := map[string]reference.Retention{
				"daily A to A":            {Target: "A", Returning: "A", Period: "day", Intervals: 11, DateTo: at(10, 12)},
				"daily A to B":            {Target: "A", Returning: "B", Period: "day", Intervals: 8, DateTo: at(12, 0)},
				"weekly":                  {Target: "A", Returning: "B", Period: "week", Intervals: 4, DateTo: at(11, 9)},
				"monthly":                 {Target: "A", Returning: "A", Period: "month", Intervals: 2, DateTo: at(12, 9)},
				"hourly across DST":       {Target: "A", Returning: "X", Period: "hour", Intervals: 30, DateTo: at(9, 2)},
				"first time daily":        {Target: "A", Returning: "B", Period: "day", Intervals: 7, DateTo: at(10, 12), FirstTime: true},
				"first time weekly":       {Target: "B", Returning: "A", Period: "week", Intervals: 2, DateTo: at(12, 12), FirstTime: true},
				"event breakdown":         {Target: "A", Returning: "A", Period: "day", Intervals: 9, DateTo: at(10, 12), Breakdown: "browser"},
				"first time by event":     {Target: "A", Returning: "B", Period: "week", Intervals: 3, DateTo: at(10, 12), Breakdown: "browser", FirstTime: true},
				"person breakdown":        {Target: "A", Returning: "B", Period: "day", Intervals: 6, DateTo: at(11, 12), Breakdown: "plan", PersonBreakdown: true},
				"breakdown folded past 2": {Target: "A", Returning: "A", Period: "day", Intervals: 5, DateTo: at(11, 12), Breakdown: "browser", Limit: 2},
				"first time hourly":       {Target: "B", Returning: "A", Period: "hour", Intervals: 40, DateTo: at(8, 12), FirstTime: true},
				"first time monthly":      {Target: "A", Returning: "B", Period: "month", Intervals: 3, DateTo: at(12, 9), FirstTime: true},
			}
			for name, r := range filteredRetentionCases(at) {
				cases[name] = r
			}
			for name, r := range cases {
				t.Run(fmt.Sprintf("seed %d %s week %d %s", seed, c.tz, c.week, name), func(t *testing.T) {
					analysistest.CheckRetention(t, p, events, cal, r)
				})
			}
		}
	}
}

func TestLifecycleAndStickinessMatchTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	for _, seed := range []int64{3, 4} {
		events := analysistest.PeriodEvents(seed)
		p := env.project(t, events)
		for _, c := range []struct {
			tz   string
			week int
		}{{"UTC", 0}, {"America/New_York", 1}} {
			cal := analysistest.SetCalendar(t, p, c.tz, c.week)
			day := func(d, hour int) time.Time { return time.Date(2026, 3, d, hour, 0, 0, 0, cal.Loc) }
			ranges := []struct {
				unit     string
				from, to time.Time
				body     map[string]any
			}{
				{"day", day(1, 0), day(10, 0).AddDate(0, 0, 1).Add(-time.Microsecond), map[string]any{"date_from": "2026-03-01", "date_to": "2026-03-10"}},
				{"week", cal.Start("week", day(1, 0)), cal.Add("week", cal.Start("week", day(11, 0)), 1).Add(-time.Microsecond),
					map[string]any{"date_from": "2026-03-01", "date_to": "2026-03-11", "interval": "week"}},
				{"hour", day(7, 20), day(8, 10), map[string]any{"date_from": "2026-03-07T20:00:00", "date_to": "2026-03-08T10:00:00", "interval": "hour"}},
				// 70 hours: past 63 buckets, the statement keeps each
				// person's active buckets in an array instead of bits.
				{"hour", day(6, 12), day(9, 9), map[string]any{"date_from": "2026-03-06T12:00:00", "date_to": "2026-03-09T09:00:00", "interval": "hour"}},
			}
			for _, rg := range ranges {
				for _, event := range []string{"A", "B"} {
					name := fmt.Sprintf("seed %d %s week %d %s %v %s", seed, c.tz, c.week, rg.unit, rg.body["date_from"], event)
					t.Run("lifecycle "+name, func(t *testing.T) {
						body := map[string]any{"insight": "LIFECYCLE", "events": []any{map[string]any{"id": event}}}
						for k, v := range rg.body {
							body[k] = v
						}
						var got []analysistest.APITrendSeries
						p.result(t, "trend", body, &got)
						want := reference.Lifecycle(events, cal, rg.unit, event, rg.from, rg.to)
						if len(got) != 4 {
							t.Fatalf("%d series", len(got))
						}
						for i, st := range []string{"new", "returning", "resurrecting", "dormant"} {
							g := got[i]
							var data []int
							for _, v := range g.Data {
								data = append(data, int(v))
							}
							if g.Status != st || g.Label != event+" - "+st || !reflect.DeepEqual(data, want[st]) {
								t.Fatalf("%s: got %s %v, want %v", st, g.Status, data, want[st])
							}
						}
					})
					t.Run("stickiness "+name, func(t *testing.T) {
						body := map[string]any{"shown_as": "Stickiness", "events": []any{map[string]any{"id": event}}}
						for k, v := range rg.body {
							body[k] = v
						}
						var got []analysistest.APITrendSeries
						p.result(t, "trend", body, &got)
						want := reference.Stickiness(events, cal, rg.unit, event, rg.from, rg.to)
						var data []int
						for _, v := range got[0].Data {
							data = append(data, int(v))
						}
						if len(got) != 1 || !reflect.DeepEqual(data, want) {
							t.Fatalf("got %v, want %v", data, want)
						}
					})
					if rg.unit != "day" {
						continue
					}
					t.Run("stickiness compared "+name, func(t *testing.T) {
						body := map[string]any{"insight": "STICKINESS", "events": []any{map[string]any{"id": event}}, "compare": true}
						for k, v := range rg.body {
							body[k] = v
						}
						var got []analysistest.APITrendSeries
						p.result(t, "trend", body, &got)
						// The ten days before 1 March.
						want := reference.Stickiness(events, cal, "day", event, rg.from.AddDate(0, 0, -10), rg.from.Add(-time.Microsecond))
						var data []int
						for _, v := range got[1].Data {
							data = append(data, int(v))
						}
						if len(got) != 2 || !reflect.DeepEqual(data, want) {
							t.Fatalf("previous period: got %v, want %v", data, want)
						}
					})
				}
			}
		}
	}
}

// Retention and lifecycle with filters (properties, the project's test
// account filters, entity properties), groups, and retention past 64
// intervals (the statement's 128-bit path), on the random events of
// retention_random_test.go, against the reference.

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

// TestRetentionByHand: worked examples of both retention types, groups,
// and each result field.
func TestRetentionByHand(t *testing.T) {
	env := newFunnelEnv(t)
	events := []reference.Event{
		analysistest.Fev("u1", "A", analysistest.Mar(1, 9), "$group_1", "org1"), analysistest.Fev("u1", "A", analysistest.Mar(2, 9), "$group_1", "org1"), analysistest.Fev("u1", "B", analysistest.Mar(3, 9)),
		analysistest.Fev("u2", "A", analysistest.Mar(2, 10), "$group_1", "org2"), analysistest.Fev("u2", "B", analysistest.Mar(2, 11)), analysistest.Fev("u2", "A", analysistest.Mar(4, 10), "$group_1", "org1"),
		analysistest.Fev("u3", "A", analysistest.Mar(-3, 10)), analysistest.Fev("u3", "A", analysistest.Mar(3, 23)),
	}
	p := env.project(t, events)
	ask := func(extra map[string]any) [][]int {
		t.Helper()
		body := map[string]any{"target_entity": map[string]any{"id": "A"}, "returning_entity": map[string]any{"id": "A"},
			"total_intervals": 4, "date_to": "2026-03-04"}
		for k, v := range extra {
			body[k] = v
		}
		var rows []analysistest.APIRetentionRow
		p.result(t, "retention", body, &rows)
		var out [][]int
		for _, r := range rows {
			var c []int
			for _, v := range r.Values {
				c = append(c, v.Count)
			}
			out = append(out, c)
		}
		return out
	}
	for name, tc := range map[string]struct {
		extra map[string]any
		want  [][]int
	}{
		"recurring: a person is in every day's cohort they did A": {nil, [][]int{{1, 1, 0, 0}, {2, 0, 1}, {1, 0}, {1}}},
		"first time: only the first A ever, which for u3 is before the window": {map[string]any{"retention_type": "retention_first_time"},
			[][]int{{1, 1, 0, 0}, {1, 0, 1}, {0, 0}, {0}}},
		"returning B": {map[string]any{"returning_entity": map[string]any{"id": "B"}}, [][]int{{1, 0, 1, 0}, {2, 1, 0}, {1, 0}, {1}}},
		"groups: org1 on days 1, 2 and 4, org2 on day 2": {map[string]any{"aggregation_group_type_index": 1},
			[][]int{{1, 1, 0, 1}, {2, 0, 1}, {0, 0}, {1}}},
		"the window ends at date_to's period; date_from is ignored": {map[string]any{"date_to": "2026-03-02T05:00:00", "total_intervals": 2,
			"date_from": "2020-01-01"}, [][]int{{1, 1}, {2}}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := ask(tc.extra); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("rows carry labels, dates, people URLs, and the weeks start on the project's day", func(t *testing.T) {
		analysistest.SetCalendar(t, p, "Europe/Paris", 1)
		defer analysistest.SetCalendar(t, p, "UTC", 0)
		var rows []struct {
			Label     string `json:"label"`
			Date      string `json:"date"`
			PeopleURL string `json:"people_url"`
			Values    []struct {
				Count     int    `json:"count"`
				People    []any  `json:"people"`
				PeopleURL string `json:"people_url"`
			} `json:"values"`
		}
		p.result(t, "retention", map[string]any{"target_entity": map[string]any{"id": "A"}, "period": "Week", "total_intervals": 2,
			"date_to": "2026-03-04"}, &rows)
		if len(rows) != 2 || rows[0].Label != "Week 0" || rows[0].Date != "2026-02-23T00:00:00+01:00" || rows[1].Date != "2026-03-02T00:00:00+01:00" ||
			rows[0].Values[0].People == nil || !strings.Contains(rows[1].Values[0].PeopleURL, "/persons/retention/?") ||
			!strings.Contains(rows[1].Values[0].PeopleURL, "selected_interval=1") {
			t.Fatalf("%+v", rows)
		}
		// In Paris, u1's A of Sunday 1 March and u3's of 25 February fall in
		// the week of Monday 23 February; u1, u2 and u3 (3 March 23:00 UTC
		// is 4 March in Paris) did A in the week of 2 March.
		if rows[0].Values[0].Count != 2 || rows[0].Values[1].Count != 2 || rows[1].Values[0].Count != 3 {
			t.Fatalf("%+v", rows)
		}
	})
}

func TestPeriodKindsRefuseWhatTheyCannotAnswer(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, nil)
	two := []any{map[string]any{"id": "A"}, map[string]any{"id": "B"}}
	for _, tc := range []struct {
		name, kind string
		body       map[string]any
		attr       string
	}{
		{"a retention type that does not exist", "retention", map[string]any{"retention_type": "retention_sometimes"}, "retention_type"},
		{"no intervals", "retention", map[string]any{"total_intervals": 0}, "total_intervals"},
		{"more than 100 intervals", "retention", map[string]any{"total_intervals": 101}, "total_intervals"},
		{"a period of years", "retention", map[string]any{"period": "Year"}, "period"},
		{"a target that is not an entity", "retention", map[string]any{"target_entity": "[1, 2]"}, "target_entity"},
		{"a bad date_to", "retention", map[string]any{"date_to": "soon"}, "date_to"},
		{"a group type past 4", "retention", map[string]any{"aggregation_group_type_index": 5}, "aggregation_group_type_index"},
		{"a lifecycle of two events", "trend", map[string]any{"insight": "LIFECYCLE", "events": two}, "events"},
		{"a lifecycle broken down", "trend", map[string]any{"insight": "LIFECYCLE", "events": two[:1], "breakdown": "$browser"}, "breakdown"},
		{"a lifecycle compared", "trend", map[string]any{"shown_as": "Lifecycle", "events": two[:1], "compare": true}, "compare"},
		{"stickiness with a formula", "trend", map[string]any{"insight": "STICKINESS", "events": two, "formula": "A+B"}, "formula"},
		{"stickiness broken down", "trend", map[string]any{"insight": "STICKINESS", "events": two, "breakdown": "x"}, "breakdown"},
	} {
		t.Run(tc.name+" is a 400 naming "+tc.attr, func(t *testing.T) { p.wantInvalid(t, tc.kind, tc.body, tc.attr) })
	}
}
