// Command entityload times saved entities on a loaded project (issue 19's
// benchmark) in one run, so the numbers share the machine's state:
//
//   - a trend and a 3-step funnel whose entities are actions of two steps
//     each, next to the same analysis with plain events (the actions'
//     second step is the first one narrowed by a property, so both answer
//     the same numbers, which the run checks);
//   - a trend of two events as one action of two steps, next to the two
//     events as two series (the same total);
//   - a trend filtered by a static cohort of the buyers (plan pro or
//     enterprise: about 100 000 persons of a million), whose computed
//     members are read, and by the property cohort of the same persons
//     (inlined), next to the equivalent inline person filter;
//   - recalculating the property cohort (calculate/, then the cohort read
//     until its new version is in), end to end.
//
// Every analysis goes through the HTTP endpoint with refresh=true (no
// result cache). The API is served in-process (loaded.Env): only one
// process may open the embedded engine's directory. Each case runs once
// to warm up, then -runs rounds, every case in each round; it prints a
// markdown table of medians (with ranges) and per-round ratios.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/insightd/insightd/benchmarks/loaded"
	"github.com/insightd/insightd/querybuilder"
)

// pair is a measured analysis and its plain equivalent.
type pair struct {
	name, route       string
	entity, plain     map[string]any
	entityWay, target string
}

func main() {
	f := loaded.RegisterFlags("analysis")
	env := loaded.Start("entityload", f)
	defer env.Close()
	ctx := context.Background()
	api := &client{env: env, base: strings.TrimSuffix(env.InsightsURL, "insights/")}
	from, to := env.From, env.To
	fmt.Printf("range %s to %s (%d days), project %d, %d runs per case (median, range), after one warm-up run; load %s\n\n",
		from, to, *f.Days, *f.Project, *f.Runs, loaded.LoadAverage())

	// Actions: each narrowed step ORed with the plain one matches what
	// the plain event does.
	action := func(name, event string) int64 {
		return api.create("actions/", map[string]any{"name": name, "steps": []any{
			map[string]any{"event": event},
			map[string]any{"event": event, "properties": []any{map[string]any{"key": "$browser", "value": "Chrome", "type": "event"}}},
		}})
	}
	pageview, signup, purchase := action("Viewed", "$pageview"), action("Signed up", "signup"), action("Bought", "purchase")
	either := api.create("actions/", map[string]any{"name": "Viewed or clicked", "steps": []any{
		map[string]any{"event": "$pageview"}, map[string]any{"event": "$autocapture"}}})

	// Cohorts: the buyers, listed (computed members) and by property
	// (inlined), and the same persons as an inline filter.
	buyersFilter := []any{map[string]any{"key": "plan", "value": []string{"pro", "enterprise"}, "operator": "exact", "type": "person"}}
	ids := buyerIDs(ctx, env)
	start := time.Now()
	listed := api.create("cohorts/", map[string]any{"name": "Buyers (listed)", "is_static": true, "persons": ids})
	listedCount := api.waitCohort(listed, 1)
	fmt.Printf("static cohort of %d distinct ids: %d members, created and calculated in %.0f ms\n", len(ids), listedCount, loaded.Ms(time.Since(start)))
	start = time.Now()
	byPlan := api.create("cohorts/", map[string]any{"name": "Buyers", "groups": []any{map[string]any{"properties": buyersFilter}}})
	planCount := api.waitCohort(byPlan, 1)
	fmt.Printf("property cohort: %d members, created and calculated in %.0f ms\n\n", planCount, loaded.Ms(time.Since(start)))

	trend := func(extra map[string]any) map[string]any {
		b := map[string]any{"date_from": from, "date_to": to, "interval": "day"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	funnel := func(steps []any) map[string]any {
		return map[string]any{"insight": "FUNNELS", "date_from": from, "date_to": to, "funnel_window_interval": 14,
			"funnel_window_interval_unit": "day", "events": steps}
	}
	actionSteps := func(ids ...int64) []any {
		var out []any
		for i, id := range ids {
			out = append(out, map[string]any{"id": id, "type": "actions", "order": i})
		}
		return out
	}
	eventSteps := func(names ...string) []any {
		var out []any
		for i, n := range names {
			out = append(out, map[string]any{"id": n, "type": "events", "order": i})
		}
		return out
	}
	cohort := func(id int64) []any {
		return []any{map[string]any{"type": "cohort", "key": "id", "value": id}}
	}
	pv := []any{map[string]any{"id": "$pageview"}}
	pairs := []pair{
		{name: "trend of an action of two steps", route: "trend", entityWay: "action", target: "1.2",
			entity: trend(map[string]any{"events": actionSteps(pageview)}), plain: trend(map[string]any{"events": pv})},
		{name: "3-step funnel of actions of two steps", route: "funnel", entityWay: "actions", target: "1.2",
			entity: funnel(actionSteps(pageview, signup, purchase)), plain: funnel(eventSteps("$pageview", "signup", "purchase"))},
		{name: "trend of an action of two events", route: "trend", entityWay: "action", target: "1.2",
			entity: trend(map[string]any{"events": actionSteps(either)}),
			plain:  trend(map[string]any{"events": []any{map[string]any{"id": "$pageview"}, map[string]any{"id": "$autocapture"}}})},
		{name: fmt.Sprintf("trend filtered by a static cohort (%d persons)", listedCount), route: "trend", entityWay: "cohort", target: "1.3",
			entity: trend(map[string]any{"events": pv, "properties": cohort(listed)}), plain: trend(map[string]any{"events": pv, "properties": buyersFilter})},
		{name: fmt.Sprintf("trend filtered by a property cohort (%d persons, inlined)", planCount), route: "trend", entityWay: "cohort", target: "1.3",
			entity: trend(map[string]any{"events": pv, "properties": cohort(byPlan)}), plain: trend(map[string]any{"events": pv, "properties": buyersFilter})},
	}

	times := make([][2][]time.Duration, len(pairs))
	cpus := make([][2][]time.Duration, len(pairs))
	ratios := make([][]float64, len(pairs))
	totals := make([][2]float64, len(pairs))
	run := func(i, way int) (time.Duration, time.Duration) {
		body := pairs[i].plain
		if way == 0 {
			body = pairs[i].entity
		}
		b, _ := json.Marshal(body)
		c0, start := loaded.CPUTime(), time.Now()
		res := env.HTTPResult(pairs[i].route, b)
		d, c := time.Since(start), loaded.CPUTime()-c0
		totals[i][way] = total(res)
		return d, c
	}
	for i := range pairs { // warm up
		run(i, 0)
		run(i, 1)
	}
	var recalc []time.Duration
	for r := range *f.Runs {
		for k := range pairs {
			i := (k + r) % len(pairs) // a different pair first in each round
			// Take turns at going first, so that reading the columns
			// first does not always land on the same way.
			var e, p, ec, pc time.Duration
			if r%2 == 0 {
				e, ec = run(i, 0)
				p, pc = run(i, 1)
			} else {
				p, pc = run(i, 1)
				e, ec = run(i, 0)
			}
			times[i][0], times[i][1] = append(times[i][0], e), append(times[i][1], p)
			cpus[i][0], cpus[i][1] = append(cpus[i][0], ec), append(cpus[i][1], pc)
			ratios[i] = append(ratios[i], float64(e)/float64(p))
		}
		start := time.Now() // the version read is part of asking
		v := api.calculate(byPlan)
		api.waitCohort(byPlan, v)
		recalc = append(recalc, time.Since(start))
	}

	fmt.Println("| analysis | with the entity (ms) | CPU ms | plain (ms) | CPU ms | entity / plain (per round) | target | totals |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for i, p := range pairs {
		agree := "agree"
		if totals[i][0] != totals[i][1] {
			agree = fmt.Sprintf("differ: %s %.0f, plain %.0f", p.entityWay, totals[i][0], totals[i][1])
		}
		fmt.Printf("| %s | %s | %.0f | %s | %.0f | %s | %s | %.0f (%s) |\n", p.name, loaded.Spread(times[i][0]), loaded.Ms(loaded.Median(cpus[i][0])),
			loaded.Spread(times[i][1]), loaded.Ms(loaded.Median(cpus[i][1])), loaded.Ratios(ratios[i]), p.target, totals[i][0], agree)
	}
	fmt.Printf("\nrecalculating the property cohort (%d persons), calculate/ until the new version is read: %s ms (target 2000)\n",
		planCount, loaded.Spread(recalc))
	fmt.Printf("\nfinished %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
}

// buyerIDs are the distinct ids of the persons whose plan is pro or
// enterprise (the loader's buyers), read from the engine.
func buyerIDs(ctx context.Context, env *loaded.Env) []string {
	rows, err := env.Engine.Query(ctx, querybuilder.Statement{SQL: `SELECT distinct_id FROM person_distinct_id
WHERE team_id = {team:Int64} AND person_id IN (
    SELECT id FROM persons FINAL
    WHERE team_id = {team:Int64} AND is_deleted = 0 AND JSONExtractString(properties, 'plan') IN ('pro', 'enterprise'))
ORDER BY distinct_id`, Params: map[string]any{"team": env.Project.ID}})
	loaded.Check(err)
	ids := make([]string, 0, len(rows.Data))
	for _, r := range rows.Data {
		ids = append(ids, fmt.Sprint(r[0]))
	}
	if len(ids) == 0 {
		loaded.Check(fmt.Errorf("no buyers in project %d", env.Project.ID))
	}
	return ids
}

// total is what an analysis answered, summed: a trend's counts over its
// series, a funnel's counts over its steps.
func total(res json.RawMessage) float64 {
	var series []struct{ Count float64 }
	loaded.Check(json.Unmarshal(res, &series))
	t := 0.0
	for _, s := range series {
		t += s.Count
	}
	return t
}

// client calls the project's metadata routes.
type client struct {
	env  *loaded.Env
	base string // http://<addr>/api/projects/<id>/
}

func (c *client) do(method, path string, body any) map[string]any {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		loaded.Check(err)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+c.env.Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.env.Client.Do(req)
	loaded.Check(err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	loaded.Check(err)
	if resp.StatusCode >= 300 {
		loaded.Check(fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b))
	}
	var out map[string]any
	loaded.Check(json.Unmarshal(b, &out))
	return out
}

func (c *client) create(path string, body map[string]any) int64 {
	return int64(c.do("POST", path, body)["id"].(float64))
}

// calculate asks for a recalculation and returns the version it will be.
func (c *client) calculate(id int64) int64 {
	co := c.do("GET", fmt.Sprintf("cohorts/%d/", id), nil)
	c.do("POST", fmt.Sprintf("cohorts/%d/calculate/", id), nil)
	return int64(co["version"].(float64)) + 1
}

// waitCohort polls the cohort until version is computed and returns its
// count.
func (c *client) waitCohort(id, version int64) int64 {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		co := c.do("GET", fmt.Sprintf("cohorts/%d/", id), nil)
		if v, _ := co["version"].(float64); int64(v) >= version && co["is_calculating"] == false {
			n, _ := co["count"].(float64)
			return int64(n)
		}
		if n, _ := co["errors_calculating"].(float64); n > 0 && co["is_calculating"] == false {
			loaded.Check(fmt.Errorf("cohort %d failed to calculate: %v", id, co))
		}
		time.Sleep(5 * time.Millisecond)
	}
	loaded.Check(fmt.Errorf("cohort %d not calculated in 10 minutes", id))
	return 0
}
