package main

import (
	"encoding/json"
	"time"

	"github.com/insightd/insightd/benchmarks/loaded"
)

// personCases are the issue's: the 3-step 30-day funnel's step 2 (first
// page) and step 1 (the export), a retention cell and a trend day.
func personCases(from, to string, last time.Time) []*personCase {
	var events []any
	for i, e := range []string{"$pageview", "signup", "purchase"} {
		events = append(events, map[string]any{"id": e, "type": "events", "order": i})
	}
	funnel := map[string]any{"insight": "FUNNELS", "events": events, "date_from": from, "date_to": to, "interval": "day",
		"funnel_window_interval": 14, "funnel_window_interval_unit": "day"}
	step := func(i int) func(json.RawMessage) (string, int) {
		return func(raw json.RawMessage) (string, int) {
			var steps []struct {
				Count        int    `json:"count"`
				ConvertedURL string `json:"converted_people_url"`
			}
			loaded.Check(json.Unmarshal(raw, &steps))
			return steps[i].ConvertedURL, steps[i].Count
		}
	}
	pv := map[string]any{"id": "$pageview", "type": "events"}
	retention := map[string]any{"target_entity": pv, "returning_entity": pv, "total_intervals": 11, "date_to": last.Format(time.DateOnly)}
	cell := func(raw json.RawMessage) (string, int) {
		var rows []struct {
			Values []struct {
				Count     int    `json:"count"`
				PeopleURL string `json:"people_url"`
			} `json:"values"`
		}
		loaded.Check(json.Unmarshal(raw, &rows))
		v := rows[5].Values[1] // a cohort mid-range, its first return
		return v.PeopleURL, v.Count
	}
	trend := map[string]any{"events": []any{map[string]any{"id": "$pageview", "math": "dau"}}, "date_from": from, "date_to": to, "interval": "day"}
	day := func(raw json.RawMessage) (string, int) {
		var series []struct {
			Data        []float64           `json:"data"`
			PersonsURLs []map[string]string `json:"persons_urls"`
		}
		loaded.Check(json.Unmarshal(raw, &series))
		k := len(series[0].Data) / 2
		return series[0].PersonsURLs[k]["url"], int(series[0].Data[k])
	}
	return []*personCase{
		{name: "funnel step 2, first page", route: "funnel", body: funnel, people: step(1)},
		{name: "funnel step 1, full CSV export", route: "funnel", body: funnel, people: step(0), export: true},
		{name: "retention cell (cohort 5, interval 1), first page", route: "retention", body: retention, people: cell},
		{name: "trend day (daily active users, mid-range), first page", route: "trend", body: trend, people: day},
	}
}
