package querybuilder_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/insightd/insightd/querybuilder"
)

// refStats is the stats table's rows by the reference: per value,
// visitors, views and bounce rate of the sessions (or, for Page, the
// pageviews) of [from, to].
func refStats(events []webEvent, ss map[string]*webSession, by string, from, to time.Time) map[string]string {
	type acc struct {
		persons                map[string]bool
		views, viewed, bounces int
	}
	out := map[string]*acc{}
	get := func(v string) *acc {
		if out[v] == nil {
			out[v] = &acc{persons: map[string]bool{}}
		}
		return out[v]
	}
	if by == "Page" {
		for _, e := range events {
			if e.session != "" && e.event == "$pageview" && !e.at.Before(from) && !e.at.After(to) {
				a := get(e.path)
				a.persons[e.person] = true
				a.views++
			}
		}
	}
	for _, s := range ss {
		if by == "Page" || s.views == 0 || s.start.Before(from) || s.start.After(to) {
			continue
		}
		v := map[string]string{"InitialPage": s.firstPath, "ExitPage": s.lastPath, "Browser": s.browser, "InitialReferringDomain": s.referrer}[by]
		if by == "InitialReferringDomain" && v == "" {
			v = "$direct"
		}
		a := get(v)
		a.persons[s.person] = true
		a.views += s.views
		a.viewed++
		if s.views == 1 && s.autocaptures == 0 && s.end.Sub(s.start) < 10*time.Second {
			a.bounces++
		}
	}
	res := map[string]string{}
	for v, a := range out {
		rate := "null"
		if a.viewed > 0 {
			rate = fmt.Sprintf("%.4f", float64(a.bounces)/float64(a.viewed))
		}
		res[v] = fmt.Sprintf("%d %d %s", len(a.persons), a.views, rate)
	}
	return res
}

func TestWebStatsAgainstTheReference(t *testing.T) {
	e := testEngine(t)
	team := newTeam()
	day := time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC)
	events := webFixture(day)
	writeWebEvents(t, e, team, events)
	now := day.AddDate(0, 0, 10)
	ss := foldWebSessions(events, "")
	end := day.AddDate(0, 0, 7).Add(-time.Second)
	for _, by := range []string{"Page", "InitialPage", "ExitPage", "Browser", "InitialReferringDomain"} {
		t.Run(by, func(t *testing.T) {
			bounce := by != "Page"
			body := fmt.Sprintf(`{"date_from": "2026-11-10", "date_to": "2026-11-16", "compare": true, "breakdown_by": %q, "include_bounce_rate": %v, "limit": 100}`, by, bounce)
			p, err := querybuilder.ParseBody([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			q, err := querybuilder.ParseWebStats(p, querybuilder.Env{Project: querybuilder.Project{ID: team}, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			st, err := q.Build(querybuilder.Facts{})
			if err != nil {
				t.Fatal(err)
			}
			rows, err := e.Query(context.Background(), st)
			if err != nil {
				t.Fatalf("%v\n%s", err, st.SQL)
			}
			res, err := q.Shape(rows.Data)
			if err != nil {
				t.Fatal(err)
			}
			cur := refStats(events, ss, by, day, end)
			prev := refStats(events, ss, by, day.AddDate(0, 0, -7), day.Add(-time.Second))
			got := res.(*querybuilder.WebStatsResult)
			if len(got.Results) != len(cur) || got.HasMore {
				t.Fatalf("%d rows (hasMore %v), want %d: %v", len(got.Results), got.HasMore, len(cur), got.Results)
			}
			for _, row := range got.Results {
				v := row[0].(string)
				cell := func(i, p int) string { return fmt.Sprint(row[i].([]any)[p]) }
				rate := func(p int) string {
					if !bounce {
						return "null"
					}
					if x, ok := row[3].([]any)[p].(float64); ok {
						return fmt.Sprintf("%.4f", x)
					}
					return "null"
				}
				if g := cell(1, 0) + " " + cell(2, 0) + " " + rate(0); g != cur[v] {
					t.Errorf("%s current: got %s, want %s", v, g, cur[v])
				}
				want := prev[v]
				if want == "" {
					want = "0 0 null"
				}
				if g := cell(1, 1) + " " + cell(2, 1) + " " + rate(1); g != want {
					t.Errorf("%s previous: got %s, want %s", v, g, want)
				}
			}
			// Ranked by visitors then views then value.
			ranked := sort.SliceIsSorted(got.Results, func(i, j int) bool {
				a, b := got.Results[i], got.Results[j]
				av, bv := a[1].([]any)[0].(int64), b[1].([]any)[0].(int64)
				return av > bv
			})
			if !ranked {
				t.Errorf("not ranked by visitors: %v", got.Results)
			}
		})
	}
}
