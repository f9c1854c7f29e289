// Command actorsload times an ActorsQuery against the persons/* endpoint
// listing the same number's actors, on the loaded project, over HTTP, in
// one interleaved run: for each case (the 3-step 30-day funnel's step 2,
// a retention cell's cohort, a trend day of daily active users, the
// failed actors of that funnel's first event correlation item) the
// first page of the people URL the analysis answers, and the first page
// (100 actors) of the ActorsQuery PostHog's tools send for that number.
// Before timing, both are checked to list the same actors. It runs every
// case once to warm up, then -runs rounds, each running the cases (and
// the two ways within a case) in a rotated order, and prints per case the
// median wall time with its spread, the median process CPU (the server
// and the engine run in this process) and the ratio ActorsQuery /
// persons taken round by round; the target is at most 1.1x.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/insightd/insightd/benchmarks/loaded"
)

type actorsCase struct {
	name, route string
	body        map[string]any
	people      func(result json.RawMessage) string
	query       map[string]any
	link        string
	persons     loaded.Way
	actors      loaded.Way
}

func main() {
	f := loaded.RegisterFlags("analysis")
	env := loaded.Start("actorsload", f)
	defer env.Close()
	base, err := url.Parse(env.InsightsURL)
	loaded.Check(err)
	queryURL := strings.TrimSuffix(env.InsightsURL, "insights/") + "query/"
	base.Path = ""
	last, err := time.Parse(time.DateOnly, env.To)
	loaded.Check(err)
	cases := actorsCases(env.From, env.To, last)
	fmt.Printf("project %d, %s to %s, %d rounds after one warm-up round; started %s, load average %s\n\n",
		*f.Project, env.From, env.To, *f.Runs, time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
	for _, c := range cases {
		body, _ := json.Marshal(c.body)
		c.link = base.String() + c.people(env.HTTPResult(c.route, body))
		p, a := personsPage(env, c.link), actorsPage(env, queryURL, c.query)
		if !slices.Equal(p, a) || len(p) == 0 {
			loaded.Check(fmt.Errorf("%s: the people URL lists %d actors, the ActorsQuery %d, not the same", c.name, len(p), len(a)))
		}
		fmt.Printf("%s: both list the same %d actors on their first page\n", c.name, len(p))
	}
	fmt.Println()
	for round := 0; round <= *f.Runs; round++ {
		for i := range cases {
			c := cases[(i+round)%len(cases)]
			loaded.Rotate(round,
				func() { c.persons.Time(round, func() error { personsPage(env, c.link); return nil }) },
				func() { c.actors.Time(round, func() error { actorsPage(env, queryURL, c.query); return nil }) })
		}
	}
	fmt.Println("| case | persons/* ms median (min-max), CPU ms | ActorsQuery ms median (min-max), CPU ms | ActorsQuery / persons median (min-max) |")
	fmt.Println("|---|---|---|---|")
	for _, c := range cases {
		fmt.Printf("| %s | %s | %s | %s |\n", c.name, c.persons.Cell(), c.actors.Cell(),
			loaded.RatiosOr(loaded.PerRound(c.actors.Timed(), c.persons.Timed())))
	}
	fmt.Printf("\nfinished %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
}

// personsPage is the first page of a people URL: its actors' ids.
func personsPage(env *loaded.Env, link string) []string {
	req, err := http.NewRequest("GET", link, nil)
	loaded.Check(err)
	var page struct {
		Results []struct {
			People []struct {
				ID string `json:"id"`
			} `json:"people"`
		} `json:"results"`
	}
	do(env, req, &page)
	var ids []string
	for _, p := range page.Results[0].People {
		ids = append(ids, p.ID)
	}
	return ids
}

// actorsPage is the first page of an ActorsQuery: its actors' ids.
func actorsPage(env *loaded.Env, queryURL string, query map[string]any) []string {
	body, _ := json.Marshal(map[string]any{"query": query})
	req, err := http.NewRequest("POST", queryURL, bytes.NewReader(body))
	loaded.Check(err)
	req.Header.Set("Content-Type", "application/json")
	var out struct {
		Results [][]json.RawMessage `json:"results"`
	}
	do(env, req, &out)
	var ids []string
	for _, r := range out.Results {
		var a struct {
			ID string `json:"id"`
		}
		loaded.Check(json.Unmarshal(r[0], &a))
		ids = append(ids, a.ID)
	}
	return ids
}

func do(env *loaded.Env, req *http.Request, v any) {
	req.Header.Set("Authorization", "Bearer "+env.Key)
	resp, err := env.Client.Do(req)
	loaded.Check(err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	loaded.Check(err)
	if resp.StatusCode != 200 {
		loaded.Check(fmt.Errorf("%s %s: %d %s", req.Method, req.URL, resp.StatusCode, b))
	}
	loaded.Check(json.Unmarshal(b, v))
}

// actorsCases are persons.md's first-page cases, each with the
// ActorsQuery PostHog's tools send for its number.
func actorsCases(from, to string, last time.Time) []*actorsCase {
	names := []string{"$pageview", "signup", "purchase"}
	var events, series []any
	for i, e := range names {
		events = append(events, map[string]any{"id": e, "type": "events", "order": i})
		series = append(series, map[string]any{"kind": "EventsNode", "event": e})
	}
	dates := map[string]any{"date_from": from, "date_to": to}
	funnel := map[string]any{"insight": "FUNNELS", "events": events, "date_from": from, "date_to": to, "interval": "day",
		"funnel_window_interval": 14, "funnel_window_interval_unit": "day"}
	funnelNode := map[string]any{"kind": "FunnelsQuery", "series": series, "dateRange": dates, "interval": "day",
		"funnelsFilter": map[string]any{"funnelWindowInterval": 14, "funnelWindowIntervalUnit": "day"}}
	pv := map[string]any{"id": "$pageview", "type": "events"}
	retention := map[string]any{"target_entity": pv, "returning_entity": pv, "total_intervals": 11, "date_to": last.Format(time.DateOnly)}
	retentionNode := map[string]any{"kind": "RetentionQuery", "dateRange": map[string]any{"date_to": last.Format(time.DateOnly)},
		"retentionFilter": map[string]any{"targetEntity": pv, "returningEntity": pv, "totalIntervals": 11}}
	trend := map[string]any{"events": []any{map[string]any{"id": "$pageview", "math": "dau"}}, "date_from": from, "date_to": to, "interval": "day"}
	trendNode := map[string]any{"kind": "TrendsQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "$pageview", "math": "dau"}},
		"dateRange": dates, "interval": "day"}
	var midDay string
	actors := func(source map[string]any, sel ...string) map[string]any {
		return map[string]any{"kind": "ActorsQuery", "source": source, "select": sel, "limit": 100}
	}
	c := []*actorsCase{
		{name: "funnel step 2", route: "funnel", body: funnel,
			people: func(raw json.RawMessage) string {
				var steps []struct {
					ConvertedURL string `json:"converted_people_url"`
				}
				loaded.Check(json.Unmarshal(raw, &steps))
				return steps[1].ConvertedURL
			},
			query: actors(map[string]any{"kind": "FunnelsActorsQuery", "source": funnelNode, "funnelStep": 2}, "actor")},
		{name: "retention cohort 5", route: "retention", body: retention,
			people: func(raw json.RawMessage) string {
				var rows []struct {
					People string `json:"people_url"`
				}
				loaded.Check(json.Unmarshal(raw, &rows))
				return rows[5].People
			},
			query: actors(map[string]any{"kind": "InsightActorsQuery", "source": retentionNode, "interval": 5}, "person")},
	}
	day := &actorsCase{name: "trend day (daily active users, mid-range)", route: "trend", body: trend}
	day.people = func(raw json.RawMessage) string {
		var s []struct {
			Days        []string            `json:"days"`
			PersonsURLs []map[string]string `json:"persons_urls"`
		}
		loaded.Check(json.Unmarshal(raw, &s))
		k := len(s[0].Days) / 2
		midDay = s[0].Days[k]
		day.query = actors(map[string]any{"kind": "InsightActorsQuery", "source": trendNode, "day": midDay, "series": 0}, "actor")
		return s[0].PersonsURLs[k]["url"]
	}
	corr := map[string]any{"funnel_correlation_type": "events"}
	for k, v := range funnel {
		corr[k] = v
	}
	item := &actorsCase{name: "correlation item's failures (events, the funnel's)", route: "funnel/correlation", body: corr}
	item.people = func(raw json.RawMessage) string {
		var r struct {
			Events []struct {
				Event struct {
					Event string `json:"event"`
				} `json:"event"`
				FailureURL string `json:"failure_people_url"`
			} `json:"events"`
		}
		loaded.Check(json.Unmarshal(raw, &r))
		if len(r.Events) == 0 {
			loaded.Check(fmt.Errorf("the correlation has no items"))
		}
		correlation := map[string]any{"kind": "FunnelCorrelationQuery", "funnelCorrelationType": "events",
			"source": map[string]any{"kind": "FunnelsActorsQuery", "source": funnelNode}}
		item.query = actors(map[string]any{"kind": "FunnelCorrelationActorsQuery", "source": correlation,
			"funnelCorrelationPersonConverted": false,
			"funnelCorrelationPersonEntity":    map[string]any{"kind": "EventsNode", "event": r.Events[0].Event.Event}}, "actor")
		return r.Events[0].FailureURL
	}
	return append(c, day, item)
}
