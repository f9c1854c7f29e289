package api

import (
	"encoding/csv"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// mar is the offset from fday of a UTC hour in March 2026 (February
// for day 0 and below).
func mar(day, hour int) time.Duration {
	return time.Date(2026, 3, day, hour, 0, 0, 0, time.UTC).Sub(fday)
}

// TestRetentionByHand: worked examples of both retention types, groups,
// and each result field.
func TestRetentionByHand(t *testing.T) {
	env := newFunnelEnv(t)
	events := []refEvent{
		fev("u1", "A", mar(1, 9), "$group_1", "org1"), fev("u1", "A", mar(2, 9), "$group_1", "org1"), fev("u1", "B", mar(3, 9)),
		fev("u2", "A", mar(2, 10), "$group_1", "org2"), fev("u2", "B", mar(2, 11)), fev("u2", "A", mar(4, 10), "$group_1", "org1"),
		fev("u3", "A", mar(-3, 10)), fev("u3", "A", mar(3, 23)),
	}
	p := env.project(t, events)
	ask := func(extra map[string]any) [][]int {
		t.Helper()
		body := map[string]any{"target_entity": map[string]any{"id": "A"}, "returning_entity": map[string]any{"id": "A"},
			"total_intervals": 4, "date_to": "2026-03-04"}
		for k, v := range extra {
			body[k] = v
		}
		var rows []apiRetentionRow
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
		p.calendar(t, "Europe/Paris", 1)
		defer p.calendar(t, "UTC", 0)
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

// TestPeriodKindsAsSavedInsightsAndCSV: saved RETENTION, LIFECYCLE and
// STICKINESS insights compute and cache, and each kind's CSV is its table.
func TestPeriodKindsAsSavedInsightsAndCSV(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, []refEvent{fev("u1", "A", mar(1, 9)), fev("u1", "A", mar(2, 9)), fev("u2", "A", mar(2, 10))})
	filters := map[string]map[string]any{
		"RETENTION": {"insight": "RETENTION", "target_entity": map[string]any{"id": "A"}, "total_intervals": 3, "date_to": "2026-03-03"},
		"LIFECYCLE": {"insight": "LIFECYCLE", "events": []any{map[string]any{"id": "A"}}, "date_from": "2026-03-01", "date_to": "2026-03-03"},
		"STICKINESS": {"insight": "STICKINESS", "events": []any{map[string]any{"id": "A"}}, "date_from": "2026-03-01",
			"date_to": "2026-03-03"},
	}
	csvHeaders := map[string][]string{
		"RETENTION":  {"cohort", "date", "Day 0", "Day 1", "Day 2"},
		"LIFECYCLE":  {"series", "1-Mar-2026", "2-Mar-2026", "3-Mar-2026"},
		"STICKINESS": {"series", "1 day", "2 days", "3 days"},
	}
	// By hand: u1 did A on 1 and 2 March, u2 on 2 March. Retention: the
	// cohort of 1 March (u1) is back on 2 March; that of 2 March (u1, u2)
	// not on 3 March; each later cohort has one cell fewer, left blank.
	// Lifecycle: u1 new on 1 March, returning on 2 March; u2 new on 2
	// March; both dormant on 3 March. Stickiness: u1 2 days, u2 1.
	csvCells := map[string][][]string{
		"RETENTION": {{"Day 0", "2026-03-01T00:00:00Z", "1", "1", "0"}, {"Day 1", "2026-03-02T00:00:00Z", "2", "0", ""},
			{"Day 2", "2026-03-03T00:00:00Z", "0", "", ""}},
		"LIFECYCLE": {{"A - new", "1", "1", "0"}, {"A - returning", "0", "1", "0"}, {"A - resurrecting", "0", "0", "0"},
			{"A - dormant", "0", "0", "-2"}},
		"STICKINESS": {{"A", "1", "1", "0"}},
	}
	for insight, f := range filters {
		t.Run(insight+" insights compute, then answer from the cache", func(t *testing.T) {
			st, created := call(t, env.h, "POST", fmt.Sprintf("/api/projects/%d/insights/", p.id), p.key, map[string]any{"filters": f})
			if st != 201 {
				t.Fatalf("%d %v", st, created)
			}
			path := fmt.Sprintf("/api/projects/%d/insights/%v/", p.id, created["id"])
			for i, cached := range []bool{false, true} {
				st, out := call(t, env.h, "GET", path, p.key, nil)
				if st != 200 || out["result"] == nil || out["is_cached"] != cached || out["query_status"] != nil {
					t.Fatalf("retrieve %d: %d %v", i, st, out)
				}
			}
		})
		t.Run(insight+" as CSV", func(t *testing.T) {
			route := "trend"
			if insight == "RETENTION" {
				route = "retention"
			}
			r := httptest.NewRequest("POST", fmt.Sprintf("/api/projects/%d/insights/%s/?format=csv", p.id, route), strings.NewReader(string(mustJSON(t, f))))
			r.Header.Set("Authorization", "Bearer "+p.key)
			w := httptest.NewRecorder()
			env.h.ServeHTTP(w, r)
			rows, err := csv.NewReader(w.Body).ReadAll()
			if w.Code != 200 || err != nil || len(rows) < 2 || !reflect.DeepEqual(rows[0], csvHeaders[insight]) ||
				!reflect.DeepEqual(rows[1:], csvCells[insight]) {
				t.Fatalf("%d %q %v", w.Code, rows, err)
			}
		})
	}
	t.Run("GET insights/retention with the filter in the query string answers as POST", func(t *testing.T) {
		f := map[string]any{"target_entity": map[string]any{"id": "A", "type": "events"}, "returning_entity": map[string]any{"id": "A"},
			"total_intervals": 3, "date_to": "2026-03-03", "period": "Day", "retention_type": "retention_recurring"}
		stPost, post := p.ask(t, "POST", "retention", f)
		stGet, get := p.ask(t, "GET", "retention", f)
		if stPost != 200 || stGet != 200 || string(get["result"]) != string(post["result"]) || !strings.Contains(string(get["result"]), `"count":2`) {
			t.Fatalf("POST %d %s\nGET %d %s", stPost, post["result"], stGet, get["result"])
		}
		// Another value in the query string is another answer.
		f["total_intervals"] = 2
		if _, get := p.ask(t, "GET", "retention", f); string(get["result"]) == string(post["result"]) {
			t.Fatal("total_intervals in the query string was not read")
		}
	})
}
