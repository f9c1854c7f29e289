// Command trendload times trends on a loaded project three ways in one
// run, so the numbers share the machine's state: (a) end to end through
// the HTTP endpoint with refresh=true (no result cache), (b) the same
// statement the endpoint builds, run straight on the engine, and (c) a
// hand-written minimal ClickHouse query for the same numbers. It serves
// the API in-process on a loopback port, because only one process may
// open the embedded engine's directory. Each case runs once to warm up,
// then -runs rounds of a, b, c interleaved; it prints a markdown table of
// medians and ratios, and checks that the three agree on the total.
// With -metrics, each round also times the HTTP request on a second
// server with Prometheus metrics on, before or after the one without in
// turn, and a second table gives the cost of metrics.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/insightd/insightd/benchmarks/loaded"
	"github.com/insightd/insightd/querybuilder"
)

// trendCase is one measured trend and its hand-written equivalent, which
// returns rows whose last column is a count to be summed.
type trendCase struct {
	name   string
	filter map[string]any
	hand   string
}

func cases(from, to string) []trendCase {
	base := func(extra map[string]any) map[string]any {
		f := map[string]any{"date_from": from, "date_to": to, "interval": "day"}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	pv := []any{map[string]any{"id": "$pageview"}}
	where := `team_id = {team:Int64} AND toDate(timestamp) BETWEEN {from:Date} AND {to:Date} AND event = '$pageview'`
	return []trendCase{
		{"total pageviews", base(map[string]any{"events": pv}),
			`SELECT toDate(timestamp) AS d, count() FROM events WHERE ` + where + ` GROUP BY d`},
		{"daily active users", base(map[string]any{"events": []any{map[string]any{"id": "$pageview", "math": "dau"}}}),
			`SELECT toDate(timestamp) AS d, uniqExact(person_id) FROM events WHERE ` + where + ` GROUP BY d`},
		{"$browser breakdown", base(map[string]any{"events": pv, "breakdown": "$browser"}),
			`SELECT mat_browser, toDate(timestamp) AS d, count() FROM events WHERE ` + where + ` GROUP BY mat_browser, d`},
		{"person property filter (plan = pro)", base(map[string]any{"events": pv,
			"properties": []any{map[string]any{"key": "plan", "value": "pro", "operator": "exact", "type": "person"}}}),
			`SELECT toDate(timestamp) AS d, count() FROM events WHERE ` + where + `
  AND person_id IN (SELECT id FROM persons WHERE team_id = {team:Int64} AND JSONExtractString(properties, 'plan') = 'pro')
GROUP BY d`},
	}
}

func main() {
	f := loaded.RegisterFlags("trend")
	env := loaded.Start("trendload", f)
	defer env.Close()
	ctx := context.Background()
	engine, from, to, runs, days, project := env.Engine, env.From, env.To, f.Runs, f.Days, f.Project
	url, client := env.InsightsURL+"trend/", env.Client
	metricsURL := ""
	if env.MetricsURL != "" {
		metricsURL = env.MetricsURL + "trend/"
	}
	var costs []string
	const uncached = "?refresh=true" // the analysis endpoint recomputes

	fmt.Printf("range %s to %s (%d days), project %d, %d runs per case (median), after one warm-up run\n\n", from, to, *days, *project, *runs)
	fmt.Println("| trend | HTTP end to end (ms) | generated SQL on the engine (ms) | hand-written SQL (ms) | HTTP / hand | generated / hand | HTTP, cached (ms) | total, HTTP vs hand-written |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, tc := range cases(from, to) {
		body, _ := json.Marshal(tc.filter)
		stmt, err := env.Generated(ctx, "trends", body) // as the endpoint runs it
		loaded.Check(err)
		hand := querybuilder.Statement{SQL: tc.hand, Params: map[string]any{"team": *project, "from": from, "to": to}}

		var httpTotal, genTotal, handTotal float64
		runHTTPAt := func(url, query string) time.Duration {
			start := time.Now()
			req, _ := http.NewRequest("POST", url+query, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+env.Key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			loaded.Check(err)
			out, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			loaded.Check(err)
			d := time.Since(start)
			if resp.StatusCode != 200 {
				loaded.Check(fmt.Errorf("%s: HTTP %d: %s", tc.name, resp.StatusCode, out))
			}
			var env struct {
				Result []struct{ Count float64 } `json:"result"`
			}
			loaded.Check(json.Unmarshal(out, &env))
			httpTotal = 0
			for _, s := range env.Result {
				httpTotal += s.Count
			}
			return d
		}
		runHTTP := func(query string) time.Duration { return runHTTPAt(url, query) }
		runStmt := func(st querybuilder.Statement, total *float64, sumLast bool) time.Duration {
			start := time.Now()
			rows, err := engine.Query(ctx, st)
			d := time.Since(start)
			loaded.Check(err)
			if sumLast {
				*total = sumLastColumn(rows.Data)
			}
			return d
		}
		runHTTP(uncached)
		if metricsURL != "" {
			runHTTPAt(metricsURL, uncached)
		}
		runStmt(stmt, &genTotal, false)
		runStmt(hand, &handTotal, true)
		var a, g, h, on []time.Duration
		for n := range *runs {
			// Metrics on goes first every other round: the first request
			// of a round finds the caches as the previous case left them.
			if metricsURL != "" && n%2 == 1 {
				on = append(on, runHTTPAt(metricsURL, uncached))
			}
			a = append(a, runHTTP(uncached))
			if metricsURL != "" && n%2 == 0 {
				on = append(on, runHTTPAt(metricsURL, uncached))
			}
			g = append(g, runStmt(stmt, &genTotal, false))
			h = append(h, runStmt(hand, &handTotal, true))
		}
		var cached []time.Duration
		for range *runs {
			cached = append(cached, runHTTP(""))
		}
		ma, mg, mh := loaded.Median(a), loaded.Median(g), loaded.Median(h)
		agree := "agree"
		if httpTotal != handTotal {
			agree = fmt.Sprintf("differ: HTTP %.0f, hand %.0f", httpTotal, handTotal)
		}
		fmt.Printf("| %s | %.1f | %.1f | %.1f | %.2f | %.2f | %.1f | %.0f (%s) |\n", tc.name, loaded.Ms(ma), loaded.Ms(mg), loaded.Ms(mh),
			float64(ma)/float64(mh), float64(mg)/float64(mh), loaded.Ms(loaded.Median(cached)), httpTotal, agree)
		if len(on) > 0 {
			mo := loaded.Median(on)
			costs = append(costs, fmt.Sprintf("| %s | %.1f | %.1f | %.3f |", tc.name, loaded.Ms(ma), loaded.Ms(mo), float64(mo)/float64(ma)))
		}
	}
	if len(costs) > 0 {
		fmt.Println("\nMetrics cost: the same HTTP requests (refresh=true) on a server with Prometheus metrics off and on, taking turns at going first (target: on / off within 1.02)")
		fmt.Println()
		fmt.Println("| trend | HTTP, metrics off (ms) | HTTP, metrics on (ms) | on / off |")
		fmt.Println("|---|---|---|---|")
		for _, c := range costs {
			fmt.Println(c)
		}
	}
}

// sumLastColumn adds up the last column of rows (counts of any integer type).
func sumLastColumn(rows [][]any) float64 {
	var t float64
	for _, r := range rows {
		switch v := r[len(r)-1].(type) {
		case uint64:
			t += float64(v)
		case int64:
			t += float64(v)
		case float64:
			t += v
		case uint32:
			t += float64(v)
		default:
			loaded.Check(fmt.Errorf("count of type %T", v))
		}
	}
	return t
}
