package api

// Retention, lifecycle and stickiness on random events (ties, merged
// persons, several timezones across a DST change, both week starts),
// compared with the reference (retention_reference_test.go).

import (
	"fmt"
	"math/rand"
	"net/http"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
)

// periodEvents are seeded random events of 25 persons from 20 February to
// 12 March 2026, sorted by time as SDKs send them (so a person's first
// event is the first ingestion sees), many at the same instant, some
// persons anonymous until they identify, with browser and plan values.
func periodEvents(seed int64) []refEvent {
	r := rand.New(rand.NewSource(seed))
	id := func() string { return uuid.Must(uuid.NewRandomFromReader(r)).String() }
	start := time.Date(2026, 2, 20, 0, 0, 0, 0, time.UTC)
	var out []refEvent
	for i := range 25 {
		user := fmt.Sprintf("p%d-user-%d", seed, i)
		anon := ""
		if r.Intn(3) == 0 {
			anon = user + "-anon"
		}
		n := 1 + r.Intn(14)
		var times []time.Time
		at := start
		for k := range n {
			if k == 0 || r.Intn(4) != 0 {
				at = start.Add(time.Duration(r.Intn(21*24*4)) * 15 * time.Minute)
			}
			times = append(times, at)
		}
		sort.Slice(times, func(a, b int) bool { return times[a].Before(times[b]) })
		for k, at := range times {
			who := user
			if anon != "" && k < n/2 {
				who = anon
			}
			if anon != "" && k == n/2 {
				out = append(out, refEvent{UUID: id(), DistinctID: user, Event: "$identify", At: at,
					Props: map[string]any{"$anon_distinct_id": anon}})
			}
			props := map[string]any{}
			if v := []string{"Chrome", "Safari", "", "Firefox"}[r.Intn(4)]; v != "" {
				props["browser"] = v
			}
			if r.Intn(5) == 0 {
				props["$set"] = map[string]any{"plan": []string{"free", "pro"}[r.Intn(2)]}
			}
			out = append(out, refEvent{UUID: id(), DistinctID: who, Event: []string{"A", "B", "X", "A"}[r.Intn(4)], At: at, Props: props})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].At.Before(out[b].At) })
	return out
}

// calendar sets the project's timezone and week start and returns them.
func (p *funnelProject) calendar(t *testing.T, tz string, week int) refCalendar {
	t.Helper()
	st, out := call(t, p.env.h, "PATCH", fmt.Sprintf("/api/organizations/%s/projects/%d/", p.org, p.id), p.key,
		map[string]any{"timezone": tz, "week_start_day": week})
	if st != http.StatusOK {
		t.Fatalf("%d %v", st, out)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		t.Fatal(err)
	}
	return refCalendar{loc: loc, weekStart: time.Weekday(week)}
}

type apiRetentionRow struct {
	Label  string `json:"label"`
	Date   string `json:"date"`
	Values []struct {
		Count int `json:"count"`
	} `json:"values"`
	BreakdownValue *string `json:"breakdown_value"`
}

func checkRetention(t *testing.T, p *funnelProject, events []refEvent, cal refCalendar, r refRetention) {
	t.Helper()
	body := map[string]any{"target_entity": map[string]any{"id": r.Target, "type": "events"},
		"returning_entity": map[string]any{"id": r.Returning, "type": "events"},
		"period":           r.Period, "total_intervals": r.Intervals, "date_to": r.DateTo.In(cal.loc).Format("2006-01-02T15:04:05"),
		"date_from": "-1y"} // ignored
	if r.FirstTime {
		body["retention_type"] = "retention_first_time"
	}
	if r.Breakdown != "" {
		body["breakdown"] = r.Breakdown
		if r.PersonBreakdown {
			body["breakdown_type"] = "person"
		}
		if r.Limit > 0 {
			body["breakdown_limit"] = r.Limit
		} else {
			r.Limit = 25
		}
	}
	for k, v := range r.Extra {
		body[k] = v
	}
	var got []apiRetentionRow
	p.result(t, "retention", body, &got)
	want := r.rows(events, cal)
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d\n got %+v\nwant %+v", len(got), len(want), got, want)
	}
	for i, w := range want {
		g := got[i]
		var counts []int
		for _, v := range g.Values {
			counts = append(counts, v.Count)
		}
		date, err := time.Parse(time.RFC3339, g.Date)
		value := ""
		if g.BreakdownValue != nil {
			value = *g.BreakdownValue
		}
		if err != nil || !date.Equal(w.Date) || !reflect.DeepEqual(counts, w.Counts) || value != w.Value ||
			g.Label != fmt.Sprintf("%s %d", map[string]string{"hour": "Hour", "day": "Day", "week": "Week", "month": "Month"}[r.Period], i%r.Intervals) {
			t.Fatalf("row %d: got %s %s %q %v, want %s %q %v", i, g.Label, g.Date, value, counts, w.Date.Format(time.RFC3339), w.Value, w.Counts)
		}
	}
}

func TestRetentionMatchesTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	calendars := []struct {
		tz   string
		week int
	}{{"UTC", 0}, {"America/New_York", 1}, {"Europe/Berlin", 0}}
	for _, seed := range []int64{1, 2} {
		events := periodEvents(seed)
		p := env.project(t, events)
		p.testAccounts(t, notFree)
		for _, c := range calendars {
			cal := p.calendar(t, c.tz, c.week)
			at := func(d, hour int) time.Time { return time.Date(2026, 3, d, hour, 30, 0, 0, cal.loc) }
			cases := map[string]refRetention{
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
					checkRetention(t, p, events, cal, r)
				})
			}
		}
	}
}

type apiTrendSeries struct {
	Label  string    `json:"label"`
	Status string    `json:"status"`
	Data   []float64 `json:"data"`
	Count  float64   `json:"count"`
}

func TestLifecycleAndStickinessMatchTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	for _, seed := range []int64{3, 4} {
		events := periodEvents(seed)
		p := env.project(t, events)
		for _, c := range []struct {
			tz   string
			week int
		}{{"UTC", 0}, {"America/New_York", 1}} {
			cal := p.calendar(t, c.tz, c.week)
			day := func(d, hour int) time.Time { return time.Date(2026, 3, d, hour, 0, 0, 0, cal.loc) }
			ranges := []struct {
				unit     string
				from, to time.Time
				body     map[string]any
			}{
				{"day", day(1, 0), day(10, 0).AddDate(0, 0, 1).Add(-time.Microsecond), map[string]any{"date_from": "2026-03-01", "date_to": "2026-03-10"}},
				{"week", cal.start("week", day(1, 0)), cal.add("week", cal.start("week", day(11, 0)), 1).Add(-time.Microsecond),
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
						var got []apiTrendSeries
						p.result(t, "trend", body, &got)
						want := refLifecycle(events, cal, rg.unit, event, rg.from, rg.to)
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
						var got []apiTrendSeries
						p.result(t, "trend", body, &got)
						want := refStickiness(events, cal, rg.unit, event, rg.from, rg.to)
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
						var got []apiTrendSeries
						p.result(t, "trend", body, &got)
						// The ten days before 1 March.
						want := refStickiness(events, cal, "day", event, rg.from.AddDate(0, 0, -10), rg.from.Add(-time.Microsecond))
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
