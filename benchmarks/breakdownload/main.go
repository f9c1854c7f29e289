// Command breakdownload times the breakdown types of issue 20 on the
// loaded project in one interleaved run: a 30-day daily trend of
// $pageview broken down by session duration in bins, by session entry
// URL, by a group property, by two event properties and by an expression,
// each against the same trend broken down by a plain event property
// ($browser), all through the HTTP endpoint with refresh=true (no result
// cache). Targets: session breakdowns within 2x the plain breakdown,
// group and expression breakdowns within 1.3x.
//
// Set-up: the load writes $group_0 keys on events but no groups, so the
// first run writes one group per key with an industry property
// (ensureGroups; later runs find them and write nothing).
//
// Before timing, each case is asked once: its answer must have series and
// count every $pageview of the range once, as the plain one does. Then it
// runs every case once to warm up and -runs rounds; each round runs every
// case, the plain one included, a different case first in each round (the
// first query after another pays for reading columns that one did not).
// Every answer's series count is checked non-empty. It prints per case
// the median wall time, its spread (min-max) and the median process CPU
// time (the engine runs in this process), and the ratios case / plain
// taken round by round, of wall time (median and spread) and of CPU time.
//
// -cases keeps only the cases whose name matches a regular expression
// (the plain one always runs): on a machine shared with other
// benchmarks the session-duration case can pass the server's 60-second
// limit, and a run that fails one case records none.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/insightd/insightd/benchmarks/loaded"
)

func main() {
	f := loaded.RegisterFlags("trend")
	only := flag.String("cases", "", "regular expression: time only the cases whose name matches (and the plain one); empty for all")
	env := loaded.Start("breakdownload", f)
	keep, err := regexp.Compile(*only)
	loaded.Check(err)
	defer env.Close()
	ctx := context.Background()
	fmt.Printf("project %d, trend of $pageview from %s to %s by day, %d rounds after one warm-up round; started %s, load average %s\n\n",
		*f.Project, env.From, env.To, *f.Runs, time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
	ensureGroups(ctx, env)

	type runner struct {
		c               benchCase
		body            []byte
		series          int
		wall, cpu       []time.Duration
		ratio, cpuRatio []float64
		dWall, dCPU     time.Duration // this round's
	}
	var rs []*runner
	var plainTotal float64
	for i, c := range benchCases() {
		if i > 0 && !keep.MatchString(c.name) {
			continue
		}
		r := &runner{c: c, body: c.body(env.From, env.To)}
		n, total := seriesOf(env.HTTPResult("trend", r.body))
		if n == 0 {
			loaded.Check(fmt.Errorf("%s: no series", c.name))
		}
		if i == 0 {
			plainTotal = total
		} else if total != plainTotal {
			fmt.Fprintf(os.Stderr, "%s: the series count %.0f events, the plain breakdown %.0f\n", c.name, total, plainTotal)
			os.Exit(1)
		}
		r.series = n
		fmt.Printf("%s: %d series, %.0f events\n", c.name, n, total)
		rs = append(rs, r)
	}
	fmt.Println()

	for round := 0; round <= *f.Runs; round++ {
		for i := range rs {
			r := rs[(i+round)%len(rs)]
			c0, t0 := loaded.CPUTime(), time.Now()
			raw := env.HTTPResult("trend", r.body)
			r.dWall, r.dCPU = time.Since(t0), loaded.CPUTime()-c0
			if n, _ := seriesOf(raw); n == 0 {
				loaded.Check(fmt.Errorf("%s, round %d: no series", r.c.name, round))
			}
			if round > 0 { // round 0 warms up, not recorded
				r.wall, r.cpu = append(r.wall, r.dWall), append(r.cpu, r.dCPU)
			}
		}
		if round > 0 {
			plain := rs[0]
			for _, r := range rs[1:] {
				r.ratio = append(r.ratio, float64(r.dWall)/float64(plain.dWall))
				r.cpuRatio = append(r.cpuRatio, float64(r.dCPU)/float64(plain.dCPU))
			}
		}
	}

	fmt.Println("| case | series | HTTP ms median (min-max) | CPU ms | case / plain median (min-max) | CPU case / plain median (min-max) | target | met |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for i, r := range rs {
		ratio, cpuRatio, target, met := "1", "1", "", ""
		if i > 0 {
			ratio, cpuRatio = loaded.Ratios(r.ratio), loaded.Ratios(r.cpuRatio)
			target, met = "none set", ""
			if r.c.target > 0 {
				target, met = fmt.Sprintf("%.1fx", r.c.target), "no"
				if loaded.MedianOf(r.ratio) <= r.c.target {
					met = "yes"
				}
			}
		}
		fmt.Printf("| %s | %d | %s | %.0f | %s | %s | %s | %s |\n", r.c.name, r.series,
			loaded.Spread(r.wall), loaded.Ms(loaded.Median(r.cpu)), ratio, cpuRatio, target, met)
	}
	fmt.Printf("\nfinished %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
}
