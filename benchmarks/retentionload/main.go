// Command retentionload times retention, lifecycle and stickiness on the
// loaded project three ways in one interleaved run: (a) end to end through
// the HTTP endpoint with refresh=true (no result cache), (b) the statement
// the endpoint builds, run straight on the engine with its result
// discarded (FORMAT Null), and (c) the best hand-written ClickHouse query
// for the same numbers, its result discarded too; and (d) the floor: the
// events the case reads grouped by person, discarded. Before timing, each
// case's numbers are checked: the HTTP answer, the generated statement's
// rows and the hand-written query's rows must agree cell by cell. The
// first request after opening the engine is reported apart (cold).
//
// It runs every case every way once to warm up, then -runs rounds; each
// round runs every case, a different case first, and each case the four
// ways in turn, way r mod 4 first in round r. It prints per case and way
// the median wall time, its spread (min-max) and the median process CPU
// time (the engine runs in this process), and the ratios HTTP /
// hand-written, generated / hand-written and generated / floor taken
// round by round (median and spread).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/insightd/insightd/benchmarks/loaded"
	"github.com/insightd/insightd/querybuilder"
)

// benchCase is one measured request and its hand-written equivalent. cells
// reads the HTTP result into cell -> count; the hand-written query answers
// rows whose last column is the count and the others the cell.
type benchCase struct {
	name, kind, route string
	body              map[string]any
	hand, floor       string
	cells             func(raw json.RawMessage) map[string]float64
}

func main() {
	f := loaded.RegisterFlags("analysis")
	env := loaded.Start("retentionload", f)
	defer env.Close()
	ctx := context.Background()
	last, err := time.Parse(time.DateOnly, env.To)
	loaded.Check(err)
	cases := benchCases(last)
	fmt.Printf("project %d, last complete day %s, %d rounds after one warm-up round; started %s, load average %s\n\n",
		*f.Project, env.To, *f.Runs, time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())

	type way struct {
		wall, cpu []time.Duration
	}
	type runner struct {
		c                       benchCase
		body                    []byte
		gen, hand, floor        querybuilder.Statement
		http, gw, hw, fw        way
		ratio, genRatio, floorR []float64
	}
	// Cold: the first request after opening the engine (the migrations'
	// checks aside), before anything else reads the events.
	firstBody, _ := json.Marshal(cases[0].body)
	env.Cold(cases[0].name, cases[0].route, firstBody)
	var rs []*runner
	for _, c := range cases {
		r := &runner{c: c}
		r.body, _ = json.Marshal(c.body)
		r.gen, err = env.Generated(ctx, c.kind, r.body)
		loaded.Check(err)
		r.hand = querybuilder.Statement{SQL: c.hand, Params: map[string]any{"team": *f.Project}}
		r.floor = querybuilder.Statement{SQL: c.floor, Params: map[string]any{"team": *f.Project}}
		check(ctx, env, r.c, r.body, r.gen, r.hand)
		rs = append(rs, r)
	}
	timed := func(w *way, fn func()) time.Duration {
		c0, t0 := loaded.CPUTime(), time.Now()
		fn()
		d := time.Since(t0)
		w.wall, w.cpu = append(w.wall, d), append(w.cpu, loaded.CPUTime()-c0)
		return d
	}
	discard := func(st querybuilder.Statement) func() {
		st.SQL = strings.TrimSpace(st.SQL) + "\nFORMAT Null"
		return func() {
			_, err := env.Engine.Query(ctx, st)
			loaded.Check(err)
		}
	}
	for round := 0; round <= *f.Runs; round++ {
		for i := range rs {
			r := rs[(i+round)%len(rs)] // a different case first in each round
			var scratch way
			h, g, w, fl := &r.http, &r.gw, &r.hw, &r.fw
			if round == 0 { // warm-up, not recorded
				h, g, w, fl = &scratch, &scratch, &scratch, &scratch
			}
			// The ways take turns at going first: the first query after
			// another case pays for reading columns that case did not
			// (the breakdown's), which favoured the ways that came later.
			var dh, dg, dw, df time.Duration
			ways := []func(){
				func() { dh = timed(h, func() { env.HTTPResult(r.c.route, r.body) }) },
				func() { dg = timed(g, discard(r.gen)) },
				func() { dw = timed(w, discard(r.hand)) },
				func() { df = timed(fl, discard(r.floor)) },
			}
			for i := range ways {
				ways[(i+round)%len(ways)]()
			}
			if round > 0 {
				r.ratio = append(r.ratio, float64(dh)/float64(dw))
				r.genRatio = append(r.genRatio, float64(dg)/float64(dw))
				r.floorR = append(r.floorR, float64(dg)/float64(df))
			}
		}
	}
	fmt.Println("| case | HTTP ms median (min-max) | CPU ms | generated ms median (min-max) | CPU ms | hand-written ms median (min-max) | CPU ms | floor ms median (min-max) | CPU ms | HTTP / hand median (min-max) | generated / hand median (min-max) | generated / floor median (min-max) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		fmt.Printf("| %s | %s | %.0f | %s | %.0f | %s | %.0f | %s | %.0f | %s | %s | %s |\n", r.c.name,
			loaded.Spread(r.http.wall), loaded.Ms(loaded.Median(r.http.cpu)), loaded.Spread(r.gw.wall), loaded.Ms(loaded.Median(r.gw.cpu)),
			loaded.Spread(r.hw.wall), loaded.Ms(loaded.Median(r.hw.cpu)), loaded.Spread(r.fw.wall), loaded.Ms(loaded.Median(r.fw.cpu)),
			loaded.Ratios(r.ratio), loaded.Ratios(r.genRatio), loaded.Ratios(r.floorR))
	}
	fmt.Println("\nTarget (issue 25): retention generated / floor at most 1.5, on the engine with results discarded.")
	fmt.Printf("\nfinished %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
}

// check fails unless the three ways give the same numbers.
func check(ctx context.Context, env *loaded.Env, c benchCase, body []byte, gen, hand querybuilder.Statement) {
	fromHTTP := c.cells(env.HTTPResult(c.route, body))
	rows, err := env.Engine.Query(ctx, hand)
	loaded.Check(err)
	fromHand := map[string]float64{}
	for _, r := range rows.Data {
		var key []string
		for _, v := range r[:len(r)-1] {
			key = append(key, fmt.Sprint(v))
		}
		fromHand[strings.Join(key, "/")] += number(r[len(r)-1])
	}
	genRows, err := env.Engine.Query(ctx, gen)
	loaded.Check(err)
	for k, v := range fromHTTP { // zero cells are answered by HTTP only
		if v == 0 {
			delete(fromHTTP, k)
		}
	}
	if !equal(fromHTTP, fromHand) || len(genRows.Data) == 0 {
		fmt.Fprintf(os.Stderr, "%s: HTTP and hand-written differ\nHTTP %v\nhand %v\n", c.name, fromHTTP, fromHand)
		os.Exit(1)
	}
	var total float64
	for _, v := range fromHand {
		total += v
	}
	fmt.Printf("%s: %d cells agree (total %.0f)\n", c.name, len(fromHand), total)
}

func equal(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func number(v any) float64 {
	switch x := v.(type) {
	case uint64:
		return float64(x)
	case int64:
		return float64(x)
	case float64:
		return x
	}
	loaded.Check(fmt.Errorf("count of type %T", v))
	return 0
}
