package api

// Every people URL an analysis answers lists the people behind its
// number: as many as it shows, and the right ones (computed here from the
// events, independently of the server).

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// follow reads every page of a people URL: the people's distinct ids
// (each person as its sorted list, joined) and the count the first page
// announced.
func (p *funnelProject) follow(t *testing.T, link string) (people []string, count int) {
	t.Helper()
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
			people = append(people, strings.Join(ids, ","))
		}
		link = ""
		if body.Next != nil {
			link = *body.Next
		}
	}
	sort.Strings(people)
	return people, count
}

// personKeys names reference persons (root distinct ids) as follow does:
// each person's distinct ids, sorted and joined.
func personKeys(all []reference.Event, roots map[string]bool) []string {
	personOf, _ := reference.Identities(all)
	ids := map[string][]string{}
	for _, e := range all {
		root := personOf(e.DistinctID)
		if roots[root] && !containsString(ids[root], e.DistinctID) {
			ids[root] = append(ids[root], e.DistinctID)
		}
		if anon, ok := e.Props["$anon_distinct_id"].(string); ok && roots[personOf(anon)] && !containsString(ids[personOf(anon)], anon) {
			ids[personOf(anon)] = append(ids[personOf(anon)], anon)
		}
	}
	var out []string
	for root := range roots {
		list := ids[root]
		sort.Strings(list)
		out = append(out, strings.Join(list, ","))
	}
	sort.Strings(out)
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func samePeople(t *testing.T, what string, got []string, count, shown int, want []string) {
	t.Helper()
	if count != shown || len(got) != shown || strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("%s: shows %d, the URL counts %d and lists %d\n got %v\nwant %v", what, shown, count, len(got), got, want)
	}
}

func TestEveryPeopleURLListsThePeopleCounted(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := analysistest.PeriodEvents(5)
	p := env.project(t, events)
	cal := analysistest.SetCalendar(t, p, "America/New_York", 1)
	byPerson := reference.EventsByPerson(events)
	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, cal.Loc) }

	t.Run("each trend point of daily active persons, by browser", func(t *testing.T) {
		var series []struct {
			Data           []float64           `json:"data"`
			BreakdownValue string              `json:"breakdown_value"`
			PersonsURLs    []map[string]string `json:"persons_urls"`
		}
		p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": "A", "math": "dau"}}, "breakdown": "browser",
			"breakdown_limit": 2, "date_from": "2026-03-01", "date_to": "2026-03-06"}, &series)
		top := map[string]bool{}
		for _, s := range series {
			top[s.BreakdownValue] = true
		}
		checked := 0
		for _, s := range series {
			for k, u := range s.PersonsURLs {
				roots := map[string]bool{}
				for root, evs := range byPerson {
					for _, e := range evs {
						v := reference.String(e.Props["browser"])
						if v == "" {
							v = reference.Null
						}
						if !top[v] {
							v = reference.Other
						}
						if e.Event == "A" && v == s.BreakdownValue && !e.At.Before(day(1+k)) && e.At.Before(day(2+k)) {
							roots[root] = true
						}
					}
				}
				got, count := p.follow(t, u["url"])
				samePeople(t, fmt.Sprintf("%s day %d", s.BreakdownValue, k), got, count, int(s.Data[k]), personKeys(events, roots))
				checked += len(got)
			}
		}
		if checked == 0 {
			t.Fatal("no one to check")
		}
	})

	t.Run("each funnel step and drop-off", func(t *testing.T) {
		f := analysistest.FunnelOf("ordered", "A", "B", "X").Hours(48)
		f.DateFrom, f.DateTo, f.Loc = "2026-02-20", "2026-03-12", cal.Loc
		var steps []analysistest.APIStep
		p.result(t, "funnel", f.Filter(nil), &steps)
		persons := f.Persons(events)
		for i, st := range steps {
			for _, drop := range []bool{false, true} {
				link := st.ConvertedURL
				if drop {
					if i == 0 {
						continue
					}
					link = st.DroppedURL
				}
				roots := map[string]bool{}
				for _, rp := range persons {
					if (!drop && rp.Level() >= i+1) || (drop && rp.Level() == i) {
						roots[rp.ID] = true
					}
				}
				got, count := p.follow(t, link.(string))
				if paged, _ := p.follow(t, link.(string)+"&limit=3"); strings.Join(paged, ";") != strings.Join(got, ";") {
					t.Fatalf("pages of 3 list %v, one page %v", paged, got)
				}
				shown := int(*st.Count)
				if drop {
					shown = int(*steps[i-1].Count) - shown
				}
				samePeople(t, fmt.Sprintf("step %d dropped %v", i+1, drop), got, count, shown, personKeys(events, roots))
			}
		}
	})

	t.Run("each point of funnel trends: its converted and dropped people make its rate", func(t *testing.T) {
		f := analysistest.FunnelOf("ordered", "A", "B").Hours(48)
		f.DateFrom, f.DateTo, f.Loc = "2026-03-01", "2026-03-08", cal.Loc
		filter := f.Filter(map[string]any{"funnel_viz_type": "trends"})
		var trends []struct {
			Data []float64 `json:"data"`
			Days []string  `json:"days"`
		}
		p.result(t, "funnel", filter, &trends)
		q := url.Values{}
		for k, v := range filter {
			q.Set(k, string(mustJSON(t, v)))
		}
		base := fmt.Sprintf("/api/projects/%d/persons/funnel/?%s", p.id, q.Encode())
		people := 0
		for i, day := range trends[0].Days {
			converted, c1 := p.follow(t, base+"&entrance_period_start="+day)
			dropped, c2 := p.follow(t, base+"&entrance_period_start="+day+"&drop_off=true")
			rate := 0.0
			if len(converted)+len(dropped) > 0 {
				rate = 100 * float64(len(converted)) / float64(len(converted)+len(dropped))
			}
			if c1 != len(converted) || c2 != len(dropped) || !analysistest.CloseTo(rate, trends[0].Data[i]) {
				t.Fatalf("%s: %d converted, %d dropped, rate %v shown", day, len(converted), len(dropped), trends[0].Data[i])
			}
			people += len(converted) + len(dropped)
		}
		if people == 0 {
			t.Fatal("no one to check")
		}
	})

	t.Run("each retention cell", func(t *testing.T) {
		var rows []struct {
			Values []struct {
				Count     int    `json:"count"`
				PeopleURL string `json:"people_url"`
			} `json:"values"`
		}
		p.result(t, "retention", map[string]any{"target_entity": map[string]any{"id": "A"}, "returning_entity": map[string]any{"id": "B"},
			"total_intervals": 6, "date_to": "2026-03-08"}, &rows)
		bounds := cal.Periods("day", day(3), 6)
		for k, row := range rows {
			for j, cell := range row.Values {
				roots := map[string]bool{}
				for root, evs := range byPerson {
					cohort, returned := false, j == 0
					for _, e := range evs {
						cohort = cohort || e.Event == "A" && reference.PeriodIndex(bounds, e.At) == k
						returned = returned || e.Event == "B" && reference.PeriodIndex(bounds, e.At) == k+j
					}
					if cohort && returned {
						roots[root] = true
					}
				}
				got, count := p.follow(t, cell.PeopleURL)
				samePeople(t, fmt.Sprintf("cohort %d interval %d", k, j), got, count, cell.Count, personKeys(events, roots))
			}
		}
	})

	t.Run("each stickiness bucket and lifecycle status", func(t *testing.T) {
		body := map[string]any{"events": []any{map[string]any{"id": "A"}}, "date_from": "2026-03-01", "date_to": "2026-03-10"}
		var sticky []struct {
			Data        []float64           `json:"data"`
			PersonsURLs []map[string]string `json:"persons_urls"`
		}
		body["insight"] = "STICKINESS"
		p.result(t, "trend", body, &sticky)
		bounds := reference.Buckets(cal, "day", day(1), day(11).Add(-time.Microsecond))
		for k, u := range sticky[0].PersonsURLs {
			roots := map[string]bool{}
			for root, evs := range byPerson {
				active := map[int]bool{}
				for _, e := range evs {
					if i := reference.PeriodIndex(bounds, e.At); e.Event == "A" && i >= 0 {
						active[i] = true
					}
				}
				if len(active) == k+1 {
					roots[root] = true
				}
			}
			got, count := p.follow(t, u["url"])
			samePeople(t, fmt.Sprintf("%d days", k+1), got, count, int(sticky[0].Data[k]), personKeys(events, roots))
		}
		// A number of days outside the range's 1 to 10 lists nobody: it is
		// refused naming stickiness_days (a negative one once read as 0).
		first, _ := url.Parse(sticky[0].PersonsURLs[0]["url"])
		for _, bad := range []string{"-3", "0", "11"} {
			q := first.Query()
			q.Set("stickiness_days", bad)
			r := httptest.NewRequest("GET", first.Path+"?"+q.Encode(), nil)
			r.Header.Set("Authorization", "Bearer "+p.key)
			w := httptest.NewRecorder()
			p.env.h.ServeHTTP(w, r)
			if w.Code != 400 || !strings.Contains(w.Body.String(), `"attr":"stickiness_days"`) {
				t.Fatalf("stickiness_days=%s: %d %s", bad, w.Code, w.Body)
			}
		}
		// A page past the end lists nobody and still counts them all.
		q := first.Query()
		q.Set("offset", "1000")
		r := httptest.NewRequest("GET", first.Path+"?"+q.Encode(), nil)
		r.Header.Set("Authorization", "Bearer "+p.key)
		w := httptest.NewRecorder()
		p.env.h.ServeHTTP(w, r)
		if want := fmt.Sprintf(`{"next":null,"results":[{"count":%d,"people":[]}]}`, int(sticky[0].Data[0])); w.Code != 200 || w.Body.String() != want {
			t.Fatalf("past the end: %d %s, want %s", w.Code, w.Body, want)
		}
		var life []struct {
			Status      string              `json:"status"`
			Data        []float64           `json:"data"`
			PersonsURLs []map[string]string `json:"persons_urls"`
		}
		body["insight"] = "LIFECYCLE"
		p.result(t, "trend", body, &life)
		for _, s := range life {
			for b, u := range s.PersonsURLs {
				got, count := p.follow(t, u["url"])
				shown := int(s.Data[b])
				if shown < 0 {
					shown = -shown
				}
				if count != shown || len(got) != shown {
					t.Fatalf("%s on day %d: shows %d, the URL counts %d and lists %d", s.Status, b, shown, count, len(got))
				}
			}
		}
	})
}
