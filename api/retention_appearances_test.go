package api

// persons/retention/ lists each person of a retention row with their
// appearances (issue 21): per interval of the row, 1 when the person counts
// in that cell. Checked against the reference's members.

import (
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
