// Command funnelload times funnels on a loaded project in one run, so the
// numbers share the machine's state: (a) end to end through the HTTP
// endpoint with refresh=true (no result cache), (b) the statement the
// endpoint builds, run straight on the engine, (c) the plain windowFunnel
// query other ClickHouse tools run for the same funnel, (d) the floor:
// reading the funnel's events and grouping them by person, which any
// funnel must do at least, and (e) the HTTP request answered from the
// result cache. (b), (c) and (d) run with their result discarded (FORMAT
// Null): returning rows to Go would time the transfer, not the work. It
// serves the API in-process on a loopback port, because only one process
// may open the embedded engine's directory.
//
// The first request after opening the engine is reported apart (cold).
// Before timing, windowFunnel's person counts per step and the floor's
// persons and events are read once. Then one warm-up round and -runs
// timed rounds: each round runs every case, a different case first, and
// each case every way, way r mod n first in round r. It prints per case
// and way the median wall time with its range (min-max) and the median
// process CPU time (the engine runs in this process); the ratios between
// ways and between cases taken round by round (median and range); the
// targets; and whether the per-step person counts of HTTP and
// windowFunnel agree. With -metrics, the HTTP request is also timed on a
// second server with Prometheus metrics on, as one more way in the
// rounds, and a last table gives the cost of metrics.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/insightd/insightd/benchmarks/loaded"
	"github.com/insightd/insightd/querybuilder"
)

// runner is a case and its ways.
type runner struct {
	c    funnelCase
	body []byte
	// gen, plain and floor are the statements, discarded (FORMAT Null).
	gen, plain, floor querybuilder.Statement
	// httpNA and genNA say why a way is not run (an endpoint that is not
	// there, a statement that could not be built).
	httpNA, genNA                         string
	http, httpMetrics, cached, gw, pw, fw loaded.Way
	httpSteps, plainSteps                 map[string][]float64
	floorPersons, floorEvents             float64
}

// errMissing is an endpoint that is not there: the way is n/a.
var errMissing = errors.New("missing endpoint")

func main() {
	f := loaded.RegisterFlags("funnel")
	only := flag.String("only", "", "run only the cases whose name contains this")
	env := loaded.Start("funnelload", f)
	defer env.Close()
	ctx := context.Background()
	params := map[string]any{"team": *f.Project, "from": env.From, "to": env.To}
	fmt.Printf("range %s to %s (%d days, UTC), window %d days, project %d; %d rounds after one warm-up round; started %s, load average %s\n\n",
		env.From, env.To, *f.Days, windowSeconds/86400, *f.Project, *f.Runs, time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())

	// post asks the endpoint at base for the case and reads its persons
	// per step.
	post := func(r *runner, base, query string) error {
		req, _ := http.NewRequest("POST", base+r.c.endpoint+"/"+query, bytes.NewReader(r.body))
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
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
			r.httpNA = fmt.Sprintf("HTTP %d: %.200s", resp.StatusCode, bytes.TrimSpace(out))
			return errMissing
		}
		if resp.StatusCode != 200 {
			return fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, bytes.TrimSpace(out))
		}
		var res struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return err
		}
		s, err := httpSteps(r.c.shape, res.Result)
		if err != nil {
			return fmt.Errorf("unexpected result: %v: %.200s", err, res.Result)
		}
		r.httpSteps = s
		return nil
	}

	var rs []*runner
	for _, c := range cases(env.From, env.To) {
		if *only != "" && !strings.Contains(c.name, *only) {
			continue
		}
		r := &runner{c: c}
		r.body, _ = json.Marshal(c.filter)
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		loaded.Check(fmt.Errorf("no case matches -only %q", *only))
	}

	// Cold: the first request after opening the engine (the migrations'
	// checks aside), before anything else reads the events.
	c0, t0 := loaded.CPUTime(), time.Now()
	coldErr := post(rs[0], env.InsightsURL, "?refresh=true")
	cold, coldCPU := time.Since(t0), loaded.CPUTime()-c0

	for _, r := range rs {
		if stmt, err := env.Generated(ctx, r.c.endpoint, r.body); err != nil {
			r.genNA = err.Error()
		} else {
			r.gen = loaded.Discard(stmt)
		}
		plain := querybuilder.Statement{SQL: r.c.plain, Params: params}
		floor := querybuilder.Statement{SQL: r.c.floor, Params: params}
		r.plain, r.floor = loaded.Discard(plain), loaded.Discard(floor)
		// Untimed: the answers to compare, with their rows returned.
		rows, err := env.Engine.Query(ctx, plain)
		loaded.Check(err)
		r.plainSteps = plainSteps(r.c.shape, len(r.c.filter["events"].([]any)), rows.Data)
		rows, err = env.Engine.Query(ctx, querybuilder.Statement{SQL: "SELECT count(), sum(c) FROM (" + r.c.floor + ")", Params: params})
		loaded.Check(err)
		r.floorPersons, r.floorEvents = number(rows.Data[0][0]), number(rows.Data[0][1])
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
				return func() {
					if r.httpNA == "" {
						w.Time(round, func() error { return post(r, base, query) })
					}
				}
			}
			ways := []func(){
				viaHTTP(&r.http, env.InsightsURL, "?refresh=true"), // refresh=true: the endpoint recomputes
				func() {
					if r.genNA == "" {
						r.gw.Time(round, statement(r.gen))
					}
				},
				func() { r.pw.Time(round, statement(r.plain)) },
				func() { r.fw.Time(round, statement(r.floor)) },
				viaHTTP(&r.cached, env.InsightsURL, ""),
			}
			if env.MetricsURL != "" {
				ways = append(ways, viaHTTP(&r.httpMetrics, env.MetricsURL, "?refresh=true"))
			}
			loaded.Rotate(round, ways...)
		}
	}
	report(env, rs, cold, coldCPU, coldErr)
}

// report prints the tables, the targets and the answers' agreement.
func report(env *loaded.Env, rs []*runner, cold, coldCPU time.Duration, coldErr error) {
	coldText := fmt.Sprintf("%.0f ms, CPU %.0f ms", loaded.Ms(cold), loaded.Ms(coldCPU))
	if coldErr != nil {
		coldText = "failed: " + coldErr.Error()
	}
	fmt.Printf("cold: the first request after opening the engine (%s over HTTP): %s\n\n", rs[0].c.name, coldText)
	fmt.Println("Wall ms median (min-max) and process CPU ms median, per way; engine statements with FORMAT Null:")
	fmt.Println()
	fmt.Println("| funnel | HTTP ms | CPU ms | generated ms | CPU ms | plain windowFunnel ms | CPU ms | floor ms | CPU ms | HTTP, cached ms | CPU ms | floor: persons, events |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %.0f, %.0f |\n", r.c.name, r.http.Cell(), r.gw.Cell(), r.pw.Cell(), r.fw.Cell(),
			r.cached.Cell(), r.floorPersons, r.floorEvents)
	}
	fmt.Println()
	fmt.Println("Ratios taken round by round, median (min-max):")
	fmt.Println()
	fmt.Println("| funnel | HTTP / floor | generated / floor | HTTP / windowFunnel | generated / windowFunnel | HTTP / generated | warm-up round ms: HTTP, generated, windowFunnel, floor |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, r := range rs {
		pr := func(a, b *loaded.Way) string { return loaded.RatiosOr(loaded.PerRound(a.Wall, b.Wall)) }
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %.0f, %.0f, %.0f, %.0f |\n", r.c.name, pr(&r.http, &r.fw), pr(&r.gw, &r.fw),
			pr(&r.http, &r.pw), pr(&r.gw, &r.pw), pr(&r.http, &r.gw),
			loaded.Ms(r.http.Warm), loaded.Ms(r.gw.Warm), loaded.Ms(r.pw.Warm), loaded.Ms(r.fw.Warm))
	}
	for _, r := range rs {
		for _, w := range []struct {
			name string
			w    *loaded.Way
		}{{"HTTP", &r.http}, {"generated", &r.gw}, {"windowFunnel", &r.pw}, {"floor", &r.fw}, {"HTTP, cached", &r.cached}, {"HTTP, metrics on", &r.httpMetrics}} {
			if w.w.Fails > 0 {
				fmt.Printf("\n%s, %s: %d of %d timed runs failed, left out of the medians and ratios; the last: %s\n",
					r.c.name, w.name, w.w.Fails, len(w.w.Wall), w.w.Err)
			}
		}
		if r.httpNA != "" || r.genNA != "" {
			fmt.Printf("\n%s: n/a: %s\n", r.c.name, firstNonEmpty(r.httpNA, r.genNA))
		}
	}

	find := func(name string) *runner {
		for _, r := range rs {
			if r.c.name == name {
				return r
			}
		}
		return nil
	}
	type pick func(*runner) *loaded.Way
	httpOf := func(r *runner) *loaded.Way { return &r.http }
	genOf := func(r *runner) *loaded.Way { return &r.gw }
	floorOf := func(r *runner) *loaded.Way { return &r.fw }
	plainOf := func(r *runner) *loaded.Way { return &r.pw }
	// target prints a / b taken round by round; a limit of 0 is no target.
	target := func(label string, a, b *runner, wa, wb pick, limit float64, strict bool) {
		if a == nil || b == nil {
			fmt.Printf("- %s: n/a (case not run)\n", label)
			return
		}
		xs := loaded.PerRound(wa(a).Wall, wb(b).Wall)
		if len(xs) == 0 {
			fmt.Printf("- %s: n/a (%s)\n", label, firstNonEmpty(a.httpNA, a.genNA, b.httpNA, b.genNA, wa(a).Err, wb(b).Err, "no timings"))
			return
		}
		v := loaded.MedianOf(xs)
		verdict := "met"
		if v > limit || strict && v == limit {
			verdict = "NOT met"
		}
		if limit == 0 {
			verdict = "no target"
		}
		fmt.Printf("- %s: %s (%s)\n", label, loaded.Ratios(xs), verdict)
	}
	three, ten, bd := find("3-step ordered"), find("10-step ordered"), find("3-step, breakdown by $browser")
	fmt.Println("\nTargets, ratios taken round by round, median (min-max); issue 25's are on the engine with results discarded (generated):")
	target("3-step generated / floor (target <= 2)", three, three, genOf, floorOf, 2, false)
	target("10-step generated / 3-step generated (target <= 1.5)", ten, three, genOf, genOf, 1.5, false)
	target("breakdown generated / 3-step generated (target <= 1.3)", bd, three, genOf, genOf, 1.3, false)
	target("3-step HTTP / floor (target <= 2)", three, three, httpOf, floorOf, 2, false)
	target("10-step HTTP / 3-step HTTP (target <= 2)", ten, three, httpOf, httpOf, 2, false)
	target("breakdown HTTP / 3-step HTTP (target <= 1.3)", bd, three, httpOf, httpOf, 1.3, false)
	target("3-step HTTP / plain windowFunnel (target < 1: faster)", three, three, httpOf, plainOf, 1, true)
	target("for reference: 10-step windowFunnel / 3-step windowFunnel", ten, three, plainOf, plainOf, 0, false)
	target("for reference: strict generated / 3-step generated", find("3-step strict ($pageview, signup, $identify)"), three, genOf, genOf, 0, false)
	target("for reference: unordered generated / 3-step generated", find("3-step unordered"), three, genOf, genOf, 0, false)
	target("for reference: time to convert generated / 3-step generated", find("3-step, time to convert"), three, genOf, genOf, 0, false)
	target("for reference: time to convert HTTP / 3-step plain windowFunnel", find("3-step, time to convert"), three, httpOf, plainOf, 0, false)

	fmt.Println("\nPersons per step (step i: persons reaching step i or beyond), HTTP vs plain windowFunnel:")
	for _, r := range rs {
		fmt.Printf("- %s: %s\n", r.c.name, compare(r.c, r.httpSteps, r.plainSteps, firstNonEmpty(r.httpNA, r.http.Err)))
	}
	if env.MetricsURL != "" {
		fmt.Println("\nMetrics cost: the same HTTP requests (refresh=true) on a server with Prometheus metrics off and on, in the same rounds (target: on / off within 1.02)")
		fmt.Println()
		fmt.Println("| funnel | HTTP, metrics off ms | CPU ms | HTTP, metrics on ms | CPU ms | on / off, round by round | CPU on / off, round by round |")
		fmt.Println("|---|---|---|---|---|---|---|")
		for _, r := range rs {
			fmt.Printf("| %s | %s | %s | %s | %s |\n", r.c.name, r.http.Cell(), r.httpMetrics.Cell(),
				loaded.RatiosOr(loaded.PerRound(r.httpMetrics.Wall, r.http.Wall)),
				loaded.RatiosOr(loaded.PerRound(r.httpMetrics.CPU, r.http.CPU)))
		}
	}
	fmt.Printf("\nfinished %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
}
