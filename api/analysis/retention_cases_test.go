package analysis_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

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
