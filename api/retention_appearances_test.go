package api

// persons/retention/ lists each person of a retention row with their
// appearances (issue 21): per interval of the row, 1 when the person counts
// in that cell. Checked against the reference's members.

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// followAppearances reads every page of a retention people URL: each
// person (named by their sorted distinct ids, as follow does) with their
// appearances, and the count the first page announced.
func (p *funnelProject) followAppearances(t *testing.T, link string) (map[string][]int, int) {
	t.Helper()
	out, count := map[string][]int{}, 0
	for page := 0; link != ""; page++ {
		u, err := url.Parse(link)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("GET", u.RequestURI(), nil)
		r.Header.Set("Authorization", "Bearer "+p.key)
		w := httptest.NewRecorder()
		p.env.h.ServeHTTP(w, r)
		var body struct {
			Results []struct {
				People []struct {
					DistinctIDs []string `json:"distinct_ids"`
					Appearances []int    `json:"appearances"`
				} `json:"people"`
				Count int `json:"count"`
			} `json:"results"`
			Next *string `json:"next"`
		}
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &body) != nil || len(body.Results) != 1 {
			t.Fatalf("GET %s: %d %s", link, w.Code, w.Body)
		}
		if page == 0 {
			count = body.Results[0].Count
		}
		for _, person := range body.Results[0].People {
			ids := append([]string(nil), person.DistinctIDs...)
			sort.Strings(ids)
			out[strings.Join(ids, ",")] = person.Appearances
		}
		link = ""
		if body.Next != nil {
			link = *body.Next
		}
	}
	return out, count
}

func TestRetentionPeopleCarryTheirAppearances(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := analysistest.PeriodEvents(6)
	p := env.project(t, events)
	cal := analysistest.SetCalendar(t, p, "America/New_York", 1)
	at := func(d, hour int) time.Time { return time.Date(2026, 3, d, hour, 30, 0, 0, cal.Loc) }
	keys := map[string]string{} // reference person -> distinct ids as follow names them
	personOf, _ := reference.Identities(events)
	for _, e := range events {
		root := personOf(e.DistinctID)
		if _, ok := keys[root]; !ok {
			keys[root] = personKeys(events, map[string]bool{root: true})[0]
		}
	}
	for name, r := range map[string]reference.Retention{
		"recurring daily":            {Target: "A", Returning: "B", Period: "day", Intervals: 8, DateTo: at(10, 12)},
		"first time weekly":          {Target: "A", Returning: "A", Period: "week", Intervals: 3, DateTo: at(12, 12), FirstTime: true},
		"by browser":                 {Target: "A", Returning: "A", Period: "day", Intervals: 6, DateTo: at(9, 12), Breakdown: "browser"},
		"hourly past 64 (128 bits)":  {Target: "A", Returning: "X", Period: "hour", Intervals: 80, DateTo: at(9, 20)},
		"first time hourly past 64":  {Target: "B", Returning: "A", Period: "hour", Intervals: 90, DateTo: at(-4, 2), FirstTime: true},
		"recurring monthly, one row": {Target: "X", Returning: "X", Period: "month", Intervals: 1, DateTo: at(12, 2)},
		// Past 64 hours, the values past the first folded into other.
		"by browser past 64, folded": {Target: "A", Returning: "B", Period: "hour", Intervals: 70, DateTo: at(9, 20), Breakdown: "browser", Limit: 1},
	} {
		t.Run(name, func(t *testing.T) {
			body := map[string]any{"target_entity": map[string]any{"id": r.Target}, "returning_entity": map[string]any{"id": r.Returning},
				"period": r.Period, "total_intervals": r.Intervals, "date_to": r.DateTo.In(cal.Loc).Format("2006-01-02T15:04:05")}
			if r.FirstTime {
				body["retention_type"] = "retention_first_time"
			}
			if r.Breakdown != "" {
				body["breakdown"] = r.Breakdown
			}
			if r.Limit > 0 {
				body["breakdown_limit"] = r.Limit
			}
			var rows []struct {
				PeopleURL string `json:"people_url"`
				Values    []struct {
					Count     int    `json:"count"`
					PeopleURL string `json:"people_url"`
				} `json:"values"`
				BreakdownValue *string `json:"breakdown_value"`
			}
			p.result(t, "retention", body, &rows)
			want := map[string]map[string][]int{} // value/k -> person -> appearances
			members := r.Members(events, cal)
			folded := foldValues(members, r.Limit)
			for _, m := range members {
				m.Value = folded[m.Value]
				cell := fmt.Sprintf("%s/%d", m.Value, m.K)
				if want[cell] == nil {
					want[cell] = map[string][]int{}
				}
				want[cell][keys[m.Person]] = m.Appearances
			}
			listed := 0
			for i, row := range rows {
				k, value := i%r.Intervals, ""
				if row.BreakdownValue != nil {
					value = *row.BreakdownValue
				}
				w := want[fmt.Sprintf("%s/%d", value, k)]
				if w == nil && row.Values[0].Count == 0 {
					continue // an empty cohort, as the reference says: nothing to follow
				}
				if w == nil {
					w = map[string][]int{}
				}
				got, count := p.followAppearances(t, row.PeopleURL)
				if count != len(got) || count != row.Values[0].Count || !reflect.DeepEqual(got, w) {
					t.Fatalf("row %d (%q): count %d, shown %d\n got %v\nwant %v", i, value, count, row.Values[0].Count, got, w)
				}
				// Summed over the row's people, the appearances are the
				// row's cells.
				sums := make([]int, len(row.Values))
				for _, a := range got {
					for j := range sums {
						sums[j] += a[j]
					}
				}
				for j, v := range row.Values {
					if sums[j] != v.Count {
						t.Fatalf("row %d: appearances add up to %v, cells %+v", i, sums, row.Values)
					}
				}
				// A cell's people are the row's with a 1 at its interval.
				if j := len(row.Values) - 1; j > 0 && row.Values[j].Count > 0 {
					cell, n := p.followAppearances(t, row.Values[j].PeopleURL)
					for person, a := range cell {
						if !reflect.DeepEqual(a, got[person]) || a[j] != 1 {
							t.Fatalf("row %d cell %d: %s has %v, in the row %v", i, j, person, a, got[person])
						}
					}
					if n != row.Values[j].Count || len(cell) != n {
						t.Fatalf("row %d cell %d: %d listed of %d", i, j, len(cell), row.Values[j].Count)
					}
				}
				listed += count
			}
			if listed == 0 {
				t.Fatal("no one listed: the case checks nothing")
			}
		})
	}
}

// foldValues maps each breakdown value of members to itself, or past the
// top limit values by cohort memberships (then by value) to the other
// value; limit 0 keeps every value.
func foldValues(members []reference.Member, limit int) map[string]string {
	volume := map[string]int{}
	for _, m := range members {
		volume[m.Value]++
	}
	var values []string
	for v := range volume {
		values = append(values, v)
	}
	sort.Slice(values, func(a, b int) bool {
		if volume[values[a]] != volume[values[b]] {
			return volume[values[a]] > volume[values[b]]
		}
		return values[a] < values[b]
	})
	out := map[string]string{}
	for i, v := range values {
		out[v] = v
		if limit > 0 && i >= limit {
			out[v] = reference.Other
		}
	}
	return out
}

// TestPeriodKindsAsSavedInsightsAndCSV: saved RETENTION, LIFECYCLE and
// STICKINESS insights compute and cache, and each kind's CSV is its table.
func TestPeriodKindsAsSavedInsightsAndCSV(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, []reference.Event{analysistest.Fev("u1", "A", analysistest.Mar(1, 9)), analysistest.Fev("u1", "A", analysistest.Mar(2, 9)), analysistest.Fev("u2", "A", analysistest.Mar(2, 10))})
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
		stPost, post := p.Ask(t, "POST", "retention", f)
		stGet, get := p.Ask(t, "GET", "retention", f)
		if stPost != 200 || stGet != 200 || string(get["result"]) != string(post["result"]) || !strings.Contains(string(get["result"]), `"count":2`) {
			t.Fatalf("POST %d %s\nGET %d %s", stPost, post["result"], stGet, get["result"])
		}
		// Another value in the query string is another answer.
		f["total_intervals"] = 2
		if _, get := p.Ask(t, "GET", "retention", f); string(get["result"]) == string(post["result"]) {
			t.Fatal("total_intervals in the query string was not read")
		}
	})
}
