// Command pathload times paths on the loaded project three ways in one
// interleaved run: (a) end to end through insights/path with
// refresh=true (no result cache), (b) the statement the endpoint builds,
// run straight on the engine with its result discarded (FORMAT Null), and
// (c) the best hand-written query for the same edges, discarded too; and
// the floor, grouping the 7 days' (time, url) pairs by person into arrays.
// Before timing, each case's edges are checked: the HTTP answer, the
// generated statement's rows and the hand-written rows must agree.
//
// Every statement runs under the server's default limits (a 4 GiB
// memory cap, group-by state spilled to disk past half of it).
//
// The warm-up round also records each statement's peak memory, polling
// the engine's system.processes; the timed rounds do not poll. Each round
// runs every case, a different case first, and each case the four ways in
// turn (the floor too), way r mod 4 first in round r. It prints per case and way the median wall time,
// its spread and the median process CPU time (the engine runs in this
// process), the ratios HTTP / hand-written and generated / floor taken
// round by round.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/insightd/insightd/benchmarks/loaded"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

type benchCase struct {
	name string
	body map[string]any
	hand string
}

type edge struct {
	Source, Target string
	Value          int64
	Avg            float64 `json:"average_conversion_time"`
}

func main() {
	f := loaded.RegisterFlags("paths")
	env := loaded.Start("pathload", f)
	defer env.Close()
	ctx := context.Background()
	last, err := time.Parse(time.DateOnly, env.To)
	loaded.Check(err)
	fmt.Printf("project %d, last complete day %s, %d rounds after one warm-up round; started %s, load average %s\n\n",
		*f.Project, env.To, *f.Runs, time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())

	type way struct {
		wall, cpu []time.Duration
		peak      int64
	}
	type runner struct {
		c                benchCase
		body             []byte
		gen, hand        querybuilder.Statement
		http, gw, hw, fl way
		ratio, floorR    []float64
	}
	team := map[string]any{"team": *f.Project}
	// Every statement runs under the server's limits, as the endpoint's
	// does: over 30 days the per-person arrays pass the point where
	// group-by state spills to disk (half the 4 GiB memory limit).
	limits := querybuilder.DefaultLimits()
	floorStmt := querybuilder.WithLimits(querybuilder.Statement{SQL: floor(last), Params: team}, limits)
	first := benchCases(last)[0]
	firstBody, _ := json.Marshal(first.body)
	env.Cold(first.name, "path", firstBody)
	var rs []*runner
	for i, c := range benchCases(last) {
		r := &runner{c: c}
		c.body["client_query_id"] = fmt.Sprintf("bench_%d_http", i)
		r.body, _ = json.Marshal(c.body)
		r.gen, err = env.Generated(ctx, "paths", r.body)
		loaded.Check(err)
		r.hand = querybuilder.WithLimits(querybuilder.Statement{SQL: c.hand, Params: team}, limits)
		check(ctx, env, c, r.body, r.gen, r.hand)
		rs = append(rs, r)
	}
	timed := func(w *way, fn func()) time.Duration {
		c0, t0 := loaded.CPUTime(), time.Now()
		fn()
		d := time.Since(t0)
		w.wall, w.cpu = append(w.wall, d), append(w.cpu, loaded.CPUTime()-c0)
		return d
	}
	discard := func(st querybuilder.Statement, id string) func() {
		st = loaded.Discard(st)
		return func() {
			_, err := env.Engine.Query(olap.WithQueryID(ctx, id), st)
			loaded.Check(err)
		}
	}
	for round := 0; round <= *f.Runs; round++ {
		for k := range rs {
			i := (k + round) % len(rs) // a different case first in each round
			r := rs[i]
			h, g, w, fl := &r.http, &r.gw, &r.hw, &r.fl
			var stop func()
			if round == 0 { // warm-up: peak memory, not timed
				var scratch way
				h, g, w, fl = &scratch, &scratch, &scratch, &scratch
				stop = watchPeaks(env, map[string]*int64{
					fmt.Sprintf("p%d_bench_%d_http", *f.Project, i): &r.http.peak,
					fmt.Sprintf("bench_%d_gen", i):                  &r.gw.peak,
					fmt.Sprintf("bench_%d_hand", i):                 &r.hw.peak,
					fmt.Sprintf("bench_%d_floor", i):                &r.fl.peak,
				})
			}
			var dh, dw, dg, df time.Duration
			ways := []func(){
				func() { dh = timed(h, func() { env.HTTPResult("path", r.body) }) },
				func() { dg = timed(g, discard(r.gen, fmt.Sprintf("bench_%d_gen", i))) },
				func() { dw = timed(w, discard(r.hand, fmt.Sprintf("bench_%d_hand", i))) },
				func() { df = timed(fl, discard(floorStmt, fmt.Sprintf("bench_%d_floor", i))) },
			}
			for k := range ways {
				ways[(k+round)%len(ways)]()
			}
			if stop != nil {
				stop()
			} else {
				r.ratio = append(r.ratio, float64(dh)/float64(dw))
				r.floorR = append(r.floorR, float64(dg)/float64(df))
			}
		}
	}
	mib := func(b int64) string { return fmt.Sprintf("%.0f", float64(b)/(1<<20)) }
	fmt.Println("| case | HTTP ms median (min-max) | CPU ms | generated ms median (min-max) | CPU ms | hand-written ms median (min-max) | CPU ms | floor ms | HTTP / hand median (min-max) | generated / floor median (min-max) | peak MiB generated / hand / floor |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		fmt.Printf("| %s | %s | %.0f | %s | %.0f | %s | %.0f | %s | %s | %s | %s / %s / %s |\n", r.c.name,
			loaded.Spread(r.http.wall), loaded.Ms(loaded.Median(r.http.cpu)), loaded.Spread(r.gw.wall), loaded.Ms(loaded.Median(r.gw.cpu)),
			loaded.Spread(r.hw.wall), loaded.Ms(loaded.Median(r.hw.cpu)), loaded.Spread(r.fl.wall), loaded.Ratios(r.ratio), loaded.Ratios(r.floorR),
			mib(max(r.gw.peak, r.http.peak)), mib(r.hw.peak), mib(r.fl.peak))
	}
	fmt.Printf("\nfinished %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
}

// watchPeaks polls the engine's running statements every 10 ms and keeps
// each tagged one's peak memory, until the returned stop is called.
func watchPeaks(env *loaded.Env, peaks map[string]*int64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			rows, err := env.Engine.Query(context.Background(), querybuilder.Statement{
				SQL: "SELECT Settings['log_comment'], peak_memory_usage FROM system.processes WHERE Settings['log_comment'] LIKE 'insightd:%bench%'"})
			if err == nil {
				for _, row := range rows.Data {
					id := strings.TrimPrefix(fmt.Sprint(row[0]), "insightd:")
					n, _ := strconv.ParseInt(fmt.Sprint(row[1]), 10, 64)
					if p, ok := peaks[id]; ok && n > *p {
						*p = n
					}
				}
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// check fails unless the HTTP answer, the generated rows and the
// hand-written rows give the same edges (the hand-written ones pruned of
// unreachable edges as the endpoint does).
func check(ctx context.Context, env *loaded.Env, c benchCase, body []byte, gen, hand querybuilder.Statement) {
	var fromHTTP []edge
	loaded.Check(json.Unmarshal(env.HTTPResult("path", body), &fromHTTP))
	rows := func(st querybuilder.Statement) []edge {
		res, err := env.Engine.Query(ctx, st)
		loaded.Check(err)
		var out []edge
		for _, r := range res.Data {
			v, _ := strconv.ParseInt(fmt.Sprint(r[2]), 10, 64)
			a, _ := strconv.ParseFloat(fmt.Sprint(r[3]), 64)
			out = append(out, edge{fmt.Sprint(r[0]), fmt.Sprint(r[1]), v, a})
		}
		return out
	}
	fromGen, fromHand := rows(gen), rows(hand)
	if !same(fromGen, fromHand) || !same(fromHTTP, prune(fromHand)) || len(fromHTTP) == 0 {
		fmt.Fprintf(os.Stderr, "%s: the edges differ\nHTTP %v\ngenerated %v\nhand %v\n", c.name, fromHTTP, fromGen, fromHand)
		os.Exit(1)
	}
	var paths int64
	for _, e := range fromHTTP {
		paths += e.Value
	}
	fmt.Printf("%s: %d edges agree (%d path steps)\n", c.name, len(fromHTTP), paths)
}

func same(a, b []edge) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Source != b[i].Source || a[i].Target != b[i].Target || a[i].Value != b[i].Value ||
			math.Abs(a[i].Avg-b[i].Avg) > 1e-6*math.Max(1, math.Abs(b[i].Avg)) {
			return false
		}
	}
	return true
}

// prune drops edges whose source no kept edge from a first item reaches.
func prune(es []edge) []edge {
	pos := func(n string) int { i, _ := strconv.Atoi(n[:strings.IndexByte(n, '_')]); return i }
	order := make([]int, len(es))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return pos(es[order[a]].Source) < pos(es[order[b]].Source) })
	reached, keep := map[string]bool{}, map[int]bool{}
	for _, i := range order {
		if pos(es[i].Source) == 1 || reached[es[i].Source] {
			keep[i], reached[es[i].Target] = true, true
		}
	}
	var out []edge
	for i, e := range es {
		if keep[i] {
			out = append(out, e)
		}
	}
	return out
}
