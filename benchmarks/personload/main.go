// Command personload times the people behind numbers on the loaded
// project, each next to the analysis that shows the number, over HTTP
// with refresh=true (no result cache), in one interleaved run:
//
//   - the people of step 2 of the 3-step 30-day funnel ($pageview, signup,
//     purchase): their first page;
//   - the people of step 1 of that funnel (~600 000 persons on the 100M
//     project): the full CSV export, streamed, with its rows per second
//     and the Go heap's peak while it runs (the server runs in this
//     process);
//   - the people of one retention cell (first page);
//   - the people of one trend day of daily active users (first page).
//
// The people URLs are those the analyses answer, followed as a client
// does. Before timing, each people URL's count is checked against the
// number the analysis shows (and the export's rows against step 1's
// count). It runs every case once to warm up, then -runs rounds; each
// round runs every case, the analysis and its people in turn, a different
// one first in each round. It prints per case the median wall time with
// its spread (min-max), the median process CPU time (the engine and the
// server run in this process) and the ratio people / analysis taken round
// by round; the targets are a first page within 1.5x the
// analysis and an export of 500 000 persons at 100 000 rows/s or more.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"sync"
	"time"

	"github.com/insightd/insightd/benchmarks/loaded"
)

type way struct{ wall, cpu []time.Duration }

// personCase is an analysis and the people behind one of its numbers.
type personCase struct {
	name, route string
	body        map[string]any
	// people finds the people URL in the analysis' result and the count
	// shown there.
	people func(result json.RawMessage) (link string, shown int)
	export bool
	// measured
	analysis, persons way
	ratio             []float64
	rowsPerSecond     []float64
	peakHeap          uint64
	link              string
	shown             int
}

func main() {
	f := loaded.RegisterFlags("analysis")
	env := loaded.Start("personload", f)
	defer env.Close()
	base, err := url.Parse(env.InsightsURL)
	loaded.Check(err)
	base.Path = ""
	last, err := time.Parse(time.DateOnly, env.To)
	loaded.Check(err)
	cases := personCases(env.From, env.To, last)
	fmt.Printf("project %d, %s to %s, %d rounds after one warm-up round; started %s, load average %s\n\n",
		*f.Project, env.From, env.To, *f.Runs, time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())

	for _, c := range cases {
		body, _ := json.Marshal(c.body)
		c.link, c.shown = c.people(env.HTTPResult(c.route, body))
		c.link = base.String() + c.link
		if c.export {
			rows, _ := exportCSV(env, c.link)
			loaded.Check(agree(c.name+" (csv)", rows, c.shown))
		} else {
			count := firstPage(env, c.link)
			loaded.Check(agree(c.name, count, c.shown))
		}
		fmt.Printf("%s: the people URL lists the %d shown\n", c.name, c.shown)
	}
	fmt.Println()

	timed := func(w *way, fn func()) time.Duration {
		c0, t0 := loaded.CPUTime(), time.Now()
		fn()
		d := time.Since(t0)
		w.wall, w.cpu = append(w.wall, d), append(w.cpu, loaded.CPUTime()-c0)
		return d
	}
	for round := 0; round <= *f.Runs; round++ {
		for i := range cases {
			c := cases[(i+round)%len(cases)] // a different case first in each round
			body, _ := json.Marshal(c.body)
			a, p := &c.analysis, &c.persons
			var scratch way
			if round == 0 { // warm-up, not recorded
				a, p = &scratch, &scratch
			}
			var da, dp time.Duration
			var peak uint64
			ways := []func(){
				func() { da = timed(a, func() { env.HTTPResult(c.route, body) }) },
				func() {
					dp = timed(p, func() {
						if c.export {
							_, peak = exportCSV(env, c.link)
						} else {
							firstPage(env, c.link)
						}
					})
				},
			}
			for i := range ways {
				ways[(i+round)%len(ways)]()
			}
			if round > 0 {
				c.ratio = append(c.ratio, float64(dp)/float64(da))
				if c.export {
					c.rowsPerSecond = append(c.rowsPerSecond, float64(c.shown)/dp.Seconds())
					c.peakHeap = max(c.peakHeap, peak)
				}
			}
		}
	}
	fmt.Println("| case | people | analysis ms median (min-max) | CPU ms | people ms median (min-max) | CPU ms | people / analysis median (min-max) | export rows/s median (min-max) |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, c := range cases {
		rate := "-"
		if c.export {
			rate = fmt.Sprintf("%.0f (%.0f-%.0f), Go heap peak %d MiB", loaded.MedianOf(c.rowsPerSecond), minOf(c.rowsPerSecond), maxOf(c.rowsPerSecond), c.peakHeap>>20)
		}
		fmt.Printf("| %s | %d | %s | %.0f | %s | %.0f | %s | %s |\n", c.name, c.shown,
			loaded.Spread(c.analysis.wall), loaded.Ms(loaded.Median(c.analysis.cpu)),
			loaded.Spread(c.persons.wall), loaded.Ms(loaded.Median(c.persons.cpu)), loaded.Ratios(c.ratio), rate)
	}
	fmt.Printf("\nfinished %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
}

func agree(what string, listed, shown int) error {
	if listed != shown || shown == 0 {
		return fmt.Errorf("%s: the analysis shows %d, the people URL lists %d", what, shown, listed)
	}
	return nil
}

// get requests link as the benchmark's user.
func get(env *loaded.Env, link string) *http.Response {
	req, err := http.NewRequestWithContext(context.Background(), "GET", link, nil)
	loaded.Check(err)
	req.Header.Set("Authorization", "Bearer "+env.Key)
	resp, err := env.Client.Do(req)
	loaded.Check(err)
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		loaded.Check(fmt.Errorf("GET %s: %d %s", link, resp.StatusCode, b))
	}
	return resp
}

// firstPage reads the first page of a people URL as a client does and
// answers the count it announces.
func firstPage(env *loaded.Env, link string) int {
	resp := get(env, link)
	defer resp.Body.Close()
	var page struct {
		Results []struct {
			People []json.RawMessage `json:"people"`
			Count  int               `json:"count"`
		} `json:"results"`
	}
	loaded.Check(json.NewDecoder(resp.Body).Decode(&page))
	if len(page.Results) != 1 || len(page.Results[0].People) == 0 {
		loaded.Check(fmt.Errorf("GET %s: an empty page", link))
	}
	return page.Results[0].Count
}

// exportCSV reads the CSV export of a people URL line by line, keeping
// nothing: its rows, and the Go heap's peak while it ran (sampled every
// 50ms).
func exportCSV(env *loaded.Env, link string) (rows int, peak uint64) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	resp := get(env, link+"&format=csv")
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	for sc.Scan() {
		rows++
	}
	loaded.Check(sc.Err())
	resp.Body.Close()
	close(done)
	wg.Wait()
	return rows - 1, peak // the header
}

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
