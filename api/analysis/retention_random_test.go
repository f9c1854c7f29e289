package analysis_test

// Retention, lifecycle and stickiness on random events (ties, merged
// persons, several timezones across a DST change, both week starts),
// compared with the reference (retention_reference_test.go).

import (
	"fmt"
	"reflect"
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
