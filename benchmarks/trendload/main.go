// Command trendload times trends on a loaded project in one run, so the
// numbers share the machine's state: (a) end to end through the HTTP
// endpoint with refresh=true (no result cache), (b) the same statement
// the endpoint builds, run straight on the engine, (c) a hand-written
// minimal ClickHouse query for the same numbers, and (d) the HTTP request
// answered from the result cache. (b) and (c) run with their result
// discarded (FORMAT Null): returning rows to Go would time the transfer.
// It serves the API in-process on a loopback port, because only one
// process may open the embedded engine's directory.
//
// The first request after opening the engine is reported apart (cold).
// Before timing, each case's hand-written total is read once, to compare
// with the last HTTP answer's. Then one warm-up round and -runs timed
// rounds: each round runs every case, a different case first, and each
// case every way, way r mod n first in round r. It prints per case and
// way the median wall time with its range (min-max) and the median
// process CPU time (the engine runs in this process), and the ratios
// taken round by round. With -metrics, each round also times the HTTP
// request on a second server with Prometheus metrics on, as one more way,
// and a second table gives the cost of metrics.
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
		{"daily active users by $browser", base(map[string]any{"events": []any{map[string]any{"id": "$pageview", "math": "dau"}}, "breakdown": "$browser"}),
			`SELECT mat_browser, toDate(timestamp) AS d, uniqExact(person_id) FROM events WHERE ` + where + ` GROUP BY mat_browser, d`},
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
	params := map[string]any{"team": *f.Project, "from": env.From, "to": env.To}
	fmt.Printf("range %s to %s (%d days), project %d; %d rounds after one warm-up round; started %s, load average %s\n\n",
		env.From, env.To, *f.Days, *f.Project, *f.Runs, time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())

	type runner struct {
		c                         trendCase
		body                      []byte
		gen, hand                 querybuilder.Statement // discarded
		handTotal, httpTotal      float64
		http, gw, hw, cached, mon loaded.Way
	}
	// post asks the endpoint at base for the case and keeps its total.
	post := func(r *runner, base, query string) error {
		req, _ := http.NewRequest("POST", base+"trend/"+query, bytes.NewReader(r.body))
		req.Header.Set("Authorization", "Bearer "+env.Key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := env.Client.Do(req)
		if err != nil {
			return err
		}
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 {
			return fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, out)
		}
		var res struct {
			Result []struct{ Count float64 } `json:"result"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return err
		}
		var total float64
		for _, s := range res.Result {
			total += s.Count
		}
		r.httpTotal = total
		return nil
	}
	var rs []*runner
	for _, c := range cases(env.From, env.To) {
		r := &runner{c: c}
		r.body, _ = json.Marshal(c.filter)
		rs = append(rs, r)
	}
	// Cold: the first request after opening the engine (the migrations'
	// checks aside), before anything else reads the events.
	c0, t0 := loaded.CPUTime(), time.Now()
	loaded.Check(post(rs[0], env.InsightsURL, "?refresh=true"))
	cold, coldCPU := time.Since(t0), loaded.CPUTime()-c0
	for _, r := range rs {
		stmt, err := env.Generated(ctx, "trends", r.body) // as the endpoint runs it
		loaded.Check(err)
		hand := querybuilder.Statement{SQL: r.c.hand, Params: params}
		rows, err := env.Engine.Query(ctx, hand) // untimed: the total to check
		loaded.Check(err)
		r.handTotal = sumLastColumn(rows.Data)
		r.gen, r.hand = loaded.Discard(stmt), loaded.Discard(hand)
	}
	statement := func(st querybuilder.Statement) func() error {
		return func() error {
			_, err := env.Engine.Query(ctx, st)
			return err
		}
	}
	for round := 0; round <= *f.Runs; round++ {
		for i := range rs {
			r := rs[(i+round)%len(rs)]
			viaHTTP := func(w *loaded.Way, base, query string) func() {
				return func() { w.Time(round, func() error { return post(r, base, query) }) }
			}
			ways := []func(){
				viaHTTP(&r.http, env.InsightsURL, "?refresh=true"), // refresh=true: the endpoint recomputes
				func() { r.gw.Time(round, statement(r.gen)) },
				func() { r.hw.Time(round, statement(r.hand)) },
				viaHTTP(&r.cached, env.InsightsURL, ""),
			}
			if env.MetricsURL != "" {
				ways = append(ways, viaHTTP(&r.mon, env.MetricsURL, "?refresh=true"))
			}
			loaded.Rotate(round, ways...)
		}
	}

	fmt.Printf("cold: the first request after opening the engine (%s over HTTP): %.0f ms, CPU %.0f ms\n\n", rs[0].c.name, loaded.Ms(cold), loaded.Ms(coldCPU))
	fmt.Println("Wall ms median (min-max) and process CPU ms median, per way; engine statements with FORMAT Null; ratios taken round by round:")
	fmt.Println()
	fmt.Println("| trend | HTTP ms | CPU ms | generated ms | CPU ms | hand-written ms | CPU ms | HTTP, cached ms | CPU ms | HTTP / hand | generated / hand | total, HTTP vs hand-written |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		agree := "agree"
		if r.httpTotal != r.handTotal {
			agree = fmt.Sprintf("differ: hand %.0f", r.handTotal)
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %.0f (%s) |\n", r.c.name, r.http.Cell(), r.gw.Cell(), r.hw.Cell(), r.cached.Cell(),
			loaded.RatiosOr(loaded.PerRound(r.http.Wall, r.hw.Wall)), loaded.RatiosOr(loaded.PerRound(r.gw.Wall, r.hw.Wall)), r.httpTotal, agree)
	}
	for _, r := range rs {
		for _, w := range []struct {
			name string
			w    *loaded.Way
		}{{"HTTP", &r.http}, {"generated", &r.gw}, {"hand-written", &r.hw}, {"HTTP, cached", &r.cached}, {"HTTP, metrics on", &r.mon}} {
			if w.w.Fails > 0 {
				fmt.Printf("\n%s, %s: %d of %d timed runs failed, left out of the medians and ratios; the last: %s\n",
					r.c.name, w.name, w.w.Fails, len(w.w.Wall), w.w.Err)
			}
		}
	}
	if env.MetricsURL != "" {
		fmt.Println("\nMetrics cost: the same HTTP requests (refresh=true) on a server with Prometheus metrics off and on, in the same rounds (target: on / off within 1.02)")
		fmt.Println()
		fmt.Println("| trend | HTTP, metrics off ms | CPU ms | HTTP, metrics on ms | CPU ms | on / off, round by round | CPU on / off, round by round |")
		fmt.Println("|---|---|---|---|---|---|---|")
		for _, r := range rs {
			fmt.Printf("| %s | %s | %s | %s | %s |\n", r.c.name, r.http.Cell(), r.mon.Cell(), loaded.RatiosOr(loaded.PerRound(r.mon.Wall, r.http.Wall)),
				loaded.RatiosOr(loaded.PerRound(r.mon.CPU, r.http.CPU)))
		}
	}
	fmt.Printf("\nfinished %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
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
