package api

// More people URLs followed: lifecycle statuses and compare's previous
// period by identity, maths other than dau, and actors that are not
// persons (sessions, groups), each checked against the events.

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// actorsOfURL reads every page of a people URL as raw actors.
func (p *funnelProject) actorsOfURL(t *testing.T, link string) (actors []map[string]any, count int) {
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
				People []map[string]any `json:"people"`
				Count  int              `json:"count"`
			} `json:"results"`
			Next *string `json:"next"`
		}
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &body) != nil || len(body.Results) != 1 {
			t.Fatalf("GET %s: %d %s", link, w.Code, w.Body)
		}
		if page == 0 {
			count = body.Results[0].Count
		}
		actors = append(actors, body.Results[0].People...)
		link = ""
		if body.Next != nil {
			link = *body.Next
		}
	}
	return actors, count
}

// refLifecycleRoots is reference.Lifecycle's people: per status, per bucket of
// [from, to], the persons (roots) in it.
func refLifecycleRoots(all []reference.Event, cal reference.Calendar, event string, from, to time.Time) map[string][]map[string]bool {
	bounds := reference.Buckets(cal, "day", from, to)
	n := len(bounds) - 1
	before := cal.Add("day", bounds[0], -1)
	withBefore := append([]time.Time{before}, bounds...)
	out := map[string][]map[string]bool{}
	for _, st := range []string{"new", "returning", "resurrecting", "dormant"} {
		out[st] = make([]map[string]bool, n)
		for b := range out[st] {
			out[st][b] = map[string]bool{}
		}
	}
	for root, evs := range reference.EventsByPerson(all) {
		created := reference.PeriodIndex(withBefore, evs[0].At)
		if evs[0].At.Before(before) {
			created = -1
		}
		active := map[int]bool{}
		for _, e := range evs {
			if k := reference.PeriodIndex(withBefore, e.At); e.Event == event && k >= 0 {
				active[k] = true
			}
		}
		for b := 1; b <= n; b++ {
			switch {
			case active[b] && b == created:
				out["new"][b-1][root] = true
			case active[b] && active[b-1]:
				out["returning"][b-1][root] = true
			case active[b]:
				out["resurrecting"][b-1][root] = true
			case active[b-1]:
				out["dormant"][b-1][root] = true
			}
		}
	}
	return out
}

func TestMorePeopleURLsListThePeopleCounted(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := analysistest.PeriodEvents(6)
	p := env.project(t, events)
	cal := analysistest.SetCalendar(t, p, "America/New_York", 1)
	byPerson := reference.EventsByPerson(events)
	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, cal.Loc) }
	// didOn are the persons who did event in [from, to).
	didOn := func(event string, from, to time.Time) map[string]bool {
		roots := map[string]bool{}
		for root, evs := range byPerson {
			for _, e := range evs {
				if e.Event == event && !e.At.Before(from) && e.At.Before(to) {
					roots[root] = true
				}
			}
		}
		return roots
	}

	t.Run("each lifecycle status of each day lists who has that status", func(t *testing.T) {
		var life []struct {
			Status      string              `json:"status"`
			Data        []float64           `json:"data"`
			PersonsURLs []map[string]string `json:"persons_urls"`
		}
		p.result(t, "trend", map[string]any{"insight": "LIFECYCLE", "events": []any{map[string]any{"id": "A"}},
			"date_from": "2026-03-01", "date_to": "2026-03-10"}, &life)
		want := refLifecycleRoots(events, cal, "A", day(1), day(11).Add(-time.Microsecond))
		checked := 0
		for _, s := range life {
			if len(s.PersonsURLs) != len(want[s.Status]) {
				t.Fatalf("%s: %d URLs for %d days", s.Status, len(s.PersonsURLs), len(want[s.Status]))
			}
			for b, u := range s.PersonsURLs {
				got, count := p.follow(t, u["url"])
				shown := int(s.Data[b])
				if shown < 0 {
					shown = -shown
				}
				samePeople(t, fmt.Sprintf("%s on day %d", s.Status, b+1), got, count, shown, personKeys(events, want[s.Status][b]))
				checked += len(got)
			}
		}
		if checked == 0 {
			t.Fatal("no one to check")
		}
	})

	t.Run("compare: each point of the previous period lists that day's people", func(t *testing.T) {
		var series []struct {
			Data         []float64           `json:"data"`
			CompareLabel string              `json:"compare_label"`
			PersonsURLs  []map[string]string `json:"persons_urls"`
		}
		p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": "A", "math": "dau"}}, "compare": true,
			"date_from": "2026-03-06", "date_to": "2026-03-10"}, &series)
		seen := map[string]bool{}
		for _, s := range series {
			first := 6
			if s.CompareLabel == "previous" {
				first = 1
			}
			seen[s.CompareLabel] = true
			for k, u := range s.PersonsURLs {
				got, count := p.follow(t, u["url"])
				samePeople(t, fmt.Sprintf("%s day %d", s.CompareLabel, k), got, count, int(s.Data[k]),
					personKeys(events, didOn("A", day(first+k), day(first+k+1))))
			}
		}
		if !seen["previous"] || !seen["current"] {
			t.Fatalf("series %v", seen)
		}
	})

	t.Run("total and weekly active: the people of each point", func(t *testing.T) {
		for _, math := range []string{"total", "weekly_active"} {
			var series []struct {
				Data        []float64           `json:"data"`
				PersonsURLs []map[string]string `json:"persons_urls"`
			}
			p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": "A", "math": math}},
				"date_from": "2026-03-01", "date_to": "2026-03-10"}, &series)
			for k, u := range series[0].PersonsURLs {
				from := day(1 + k)
				if math == "weekly_active" {
					from = day(1 + k - 6)
				}
				want := personKeys(events, didOn("A", from, day(2+k)))
				got, count := p.follow(t, u["url"])
				if math == "total" {
					// The events' people: as many as did the events counted.
					events := 0
					for root := range didOn("A", from, day(2+k)) {
						for _, e := range byPerson[root] {
							if e.Event == "A" && !e.At.Before(from) && e.At.Before(day(2+k)) {
								events++
							}
						}
					}
					if events != int(series[0].Data[k]) {
						t.Fatalf("day %d: %d events shown, the reference has %d", k, int(series[0].Data[k]), events)
					}
					samePeople(t, fmt.Sprintf("total day %d", k), got, count, len(want), want)
					continue
				}
				samePeople(t, fmt.Sprintf("%s day %d", math, k), got, count, int(series[0].Data[k]), want)
			}
		}
	})
}

// Sessions are the actors of unique_session: listed as sessions by their
// id (posthog-js ids are UUIDv7, the shape of a person's id), never looked
// up as persons.
func TestUniqueSessionPeopleAreSessions(t *testing.T) {
	env := newFunnelEnv(t)
	session := func() string { return uuid.Must(uuid.NewV7()).String() }
	s1, s2, s3 := session(), session(), session()
	ev := func(who, sid string, d time.Duration) reference.Event {
		return analysistest.Fev(who, "A", d, "$session_id", sid)
	}
	events := []reference.Event{ev("u1", s1, analysistest.Mar(2, 10)), ev("u1", s1, analysistest.Mar(2, 11)), ev("u1", s2, analysistest.Mar(2, 20)), ev("u2", s3, analysistest.Mar(2, 12)),
		ev("u2", s3, analysistest.Mar(3, 1)), analysistest.Fev("u3", "A", analysistest.Mar(2, 13))}
	p := env.project(t, events)
	var series []struct {
		Data        []float64           `json:"data"`
		PersonsURLs []map[string]string `json:"persons_urls"`
	}
	p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": "A", "math": "unique_session"}},
		"date_from": "2026-03-01", "date_to": "2026-03-03"}, &series)
	want := [][]string{{}, {s1, s2, s3}, {s3}}
	for k, u := range series[0].PersonsURLs {
		actors, count := p.actorsOfURL(t, u["url"])
		var got []string
		for _, a := range actors {
			if a["type"] != "session" || a["id"] != a["session_id"] || a["distinct_ids"] != nil {
				t.Fatalf("day %d: %v is not a session", k, a)
			}
			got = append(got, a["id"].(string))
		}
		sort.Strings(got)
		sort.Strings(want[k])
		if count != int(series[0].Data[k]) || strings.Join(got, ",") != strings.Join(want[k], ",") {
			t.Fatalf("day %d: shows %v, the URL counts %d and lists %v, want %v", k, series[0].Data[k], count, got, want[k])
		}
		if k == 1 {
			header, rows := p.exportCSV(t, u["url"])
			if strings.Join(header, ",") != "id,session_id,type" || len(rows) != 3 || rows[0][2] != "session" {
				t.Fatalf("csv %v %v", header, rows)
			}
		}
	}
}

// Groups are the actors of a group aggregation and of unique_group: listed
// with their type index and latest properties (none for a group never
// identified), in pages and in the export.
func TestGroupActorsCarryTheirProperties(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	p := env.project(t, groupEvents())
	props := map[string]string{"t1": `{"size":"big"}`, "t2": `{"size":"small"}`, "t3": `{"size":"big"}`,
		"acme": `{"industry":"finance","name":"Acme"}`, "beta": `{"industry":"tech"}`, "gamma": `{}`}
	check := func(t *testing.T, what string, actors []map[string]any, index int, want ...string) {
		t.Helper()
		var got []string
		for _, a := range actors {
			gp, _ := json.Marshal(a["group_properties"])
			key, _ := a["group_key"].(string)
			if a["type"] != "group" || a["id"] != key || a["group_type_index"] != float64(index) || string(gp) != props[key] {
				t.Fatalf("%s: %v", what, a)
			}
			got = append(got, key)
		}
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
	trend := func(entity map[string]any, extra map[string]any) []map[string]string {
		var series []struct {
			Data        []float64           `json:"data"`
			PersonsURLs []map[string]string `json:"persons_urls"`
		}
		body := map[string]any{"events": []any{entity}, "date_from": "2026-03-01", "date_to": "2026-03-03"}
		for k, v := range extra {
			body[k] = v
		}
		p.result(t, "trend", body, &series)
		return series[0].PersonsURLs
	}
	urls := trend(map[string]any{"id": "$pageview", "math": "dau"}, map[string]any{"aggregation_group_type_index": 1})
	actors, count := p.actorsOfURL(t, urls[1]["url"])
	check(t, "teams on 2 March", actors, 1, "t1", "t2", "t3")
	if count != 3 {
		t.Fatalf("count %d", count)
	}
	urls = trend(map[string]any{"id": "$pageview", "math": "unique_group", "math_group_type_index": 0}, nil)
	actors, _ = p.actorsOfURL(t, urls[1]["url"])
	check(t, "companies on 2 March", actors, 0, "acme", "beta", "gamma")

	var steps []analysistest.APIStep
	f := analysistest.FunnelOf("ordered", "$pageview", "signup")
	f.GroupIndex = 1
	p.result(t, "funnel", f.Filter(nil), &steps)
	header, rows := p.exportCSV(t, steps[1].ConvertedURL.(string))
	if strings.Join(header, ",") != "id,group_key,group_type_index,group_properties,created_at,type" || len(rows) != 2 {
		t.Fatalf("csv %v %v", header, rows)
	}
	for _, row := range rows {
		if row[0] != row[1] || row[2] != "1" || row[3] != props[row[0]] || row[5] != "group" || row[4] == "" {
			t.Fatalf("csv row %v", row)
		}
	}
}
