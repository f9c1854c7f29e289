// Command dashload times a 12-tile dashboard on the loaded project as 32
// clients open it at once, cold (no cached result) then warm, against its
// tiles computed one by one. The tiles are trends with breakdowns,
// funnels and retention; some tiles are identical, so the dashboard has
// fewer distinct computations than tiles.
//
// Each round: (1) the cached results are deleted and -clients clients
// retrieve the dashboard at once: the cold time is until the last one is
// answered, and the engine statements run meanwhile are counted; (2) the
// same clients retrieve it -warm times each: the latencies' p50/p99; (3)
// each distinct tile is retrieved alone with refresh=force_blocking, one
// after the other: their sum, the slowest, and their statements. The
// cold refresh must run as many statements as (3): each distinct tile
// computed exactly once for all the clients.
//
// The API runs in-process on a counting wrapper of the loaded engine
// (benchmarks/loaded opens the engine; only one process may).
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/insightd/insightd/api"
	"github.com/insightd/insightd/benchmarks/loaded"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// countingEngine counts the statements analyses run.
type countingEngine struct {
	*olap.Embedded
	statements atomic.Int64
}

func (e *countingEngine) Query(ctx context.Context, stmt querybuilder.Statement) (*olap.Rows, error) {
	e.statements.Add(1)
	return e.Embedded.Query(ctx, stmt)
}

type client struct {
	base, key string
	http      *http.Client
}

var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// do sends a request and decodes the JSON answer into out (if not nil).
func (c *client) do(method, path string, body any, out any) int {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		loaded.Check(err)
		r = bytesReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	loaded.Check(err)
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	loaded.Check(err)
	defer resp.Body.Close()
	// Into a buffer of the client's own, reused: the answers are
	// large (benchmarks/results/dashboards.md), and a client
	// allocating and growing one per answer would spend more of the
	// two cores than the server answering it.
	buf := bodies.Get().(*bytes.Buffer)
	defer bodies.Put(buf)
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	loaded.Check(err)
	b := buf.Bytes()
	if resp.StatusCode >= 300 {
		loaded.Check(fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b))
	}
	if out != nil {
		loaded.Check(json.Unmarshal(b, out))
	}
	return len(b)
}

func main() {
	f := loaded.RegisterFlags("dashboard's insights")
	clients := flag.Int("clients", 32, "clients opening the dashboard at once")
	warm := flag.Int("warm", 20, "warm retrieves per client per round")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the last round's warm retrieves to this file (the clients' samples carry the label side=client)")
	authTTL := flag.Duration("auth-cache-ttl", metadata.DefaultConfig().AuthCacheTTL, "how long the server remembers an authenticated key (insightd serve's default; 0: a PostgreSQL round trip per request)")
	latencies := flag.String("latencies", "", "write each warm retrieve of the last round (client, start, latency) to this file")
	warmOnly := flag.Bool("warm-only", false, "for iterating on the warm retrieves: compute the dashboard cold in the first round only and time nothing but warm retrieves (not a recorded run)")
	env := loaded.Start("dashload", f)
	defer env.Close()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()

	// A server of our own, on the counting engine, beside loaded's, and
	// on a store configured as insightd serve's is by default: loaded's
	// store remembers no key, which costs a warm retrieve a second
	// PostgreSQL round trip that a server as deployed does not make.
	ce := &countingEngine{Embedded: env.Engine}
	mcfg := metadata.DefaultConfig()
	mcfg.DatabaseURL, mcfg.AuthCacheTTL = *f.DatabaseURL, *authTTL
	store, err := metadata.Open(ctx, mcfg)
	loaded.Check(err)
	defer store.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	loaded.Check(err)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := api.Config{Addr: ln.Addr().String(), BodyLimit: 20 << 20, ShutdownTimeout: 5 * time.Second,
		Limits: querybuilder.DefaultLimits(), Schema: querybuilder.DefaultSchema()}
	go api.New(cfg, log, store, ce).Serve(ctx, ln) //nolint:errcheck // stopped with ctx
	c := &client{base: fmt.Sprintf("http://%s/api/projects/%d/", ln.Addr(), *f.Project), key: env.Key,
		http: &http.Client{Timeout: 10 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: *clients}}}

	tiles := dashboardTiles(env.From, env.To)
	var tileBodies []any
	distinct := map[string]int64{} // filters -> the first insight with them
	var distinctIDs []int64
	var distinctNames []string
	for _, t := range tiles {
		var ins struct {
			ID int64 `json:"id"`
		}
		c.do("POST", "insights/", map[string]any{"name": t.name, "filters": t.filters, "saved": true}, &ins)
		tileBodies = append(tileBodies, map[string]any{"insight": ins.ID})
		key, _ := json.Marshal(t.filters)
		if _, ok := distinct[string(key)]; !ok {
			distinct[string(key)] = ins.ID
			distinctIDs = append(distinctIDs, ins.ID)
			distinctNames = append(distinctNames, t.name)
		}
	}
	var dash struct {
		ID int64 `json:"id"`
	}
	c.do("POST", "dashboards/", map[string]any{"name": "Load", "tiles": tileBodies}, &dash)
	dashPath := fmt.Sprintf("dashboards/%d/", dash.ID)
	fmt.Printf("project %d, %s to %s, %d tiles (%d distinct), %d clients, %d rounds; engine share %d per project; keys remembered %s; started %s, load average %s\n\n",
		*f.Project, env.From, env.To, len(tiles), len(distinctIDs), *clients, env.Runs, ce.ProjectSlots(), *authTTL,
		time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())

	pg := newPGCPU(ctx, env.Store.DB())
	var cold, sum, slowest, p50, p99, coldCPU, sumCPU, warmCPU, warmPG []time.Duration
	var warmGC []float64
	var size atomic.Int64                                // the warm answer's length
	perTile := make([][]time.Duration, len(distinctIDs)) // each distinct tile alone, by round
	for round := 0; round < env.Runs; round++ {
		n0 := ce.statements.Load()
		var coldStatements int64
		if !*warmOnly || round == 0 {
			_, err := env.Store.DB().ExecContext(ctx, "DELETE FROM cached_results WHERE project_id = $1", *f.Project)
			loaded.Check(err)
			t0, c0 := time.Now(), loaded.CPUTime()
			parallel(*clients, 1, func() { c.do("GET", dashPath, nil, nil) }, nil)
			cold, coldCPU = append(cold, time.Since(t0)), append(coldCPU, loaded.CPUTime()-c0)
			coldStatements = ce.statements.Load() - n0
		}

		profiled := *cpuProfile != "" && round == env.Runs-1
		if profiled {
			f, err := os.Create(*cpuProfile)
			loaded.Check(err)
			loaded.Check(pprof.StartCPUProfile(f))
			defer f.Close()
		}
		var gc0, gc1 runtime.MemStats
		runtime.ReadMemStats(&gc0)
		c0, pg0 := loaded.CPUTime(), pg.used()
		var calls []call
		lat := parallel(*clients, *warm, func() { size.Store(int64(c.do("GET", dashPath, nil, nil))) }, &calls)
		if *latencies != "" && round == env.Runs-1 {
			writeCalls(*latencies, calls)
		}
		if profiled {
			pprof.StopCPUProfile()
		}
		retrieves := time.Duration(*clients * *warm)
		warmCPU, warmPG = append(warmCPU, (loaded.CPUTime()-c0)/retrieves), append(warmPG, (pg.used()-pg0)/retrieves)
		runtime.ReadMemStats(&gc1)
		warmGC = append(warmGC, float64(gc1.NumGC-gc0.NumGC))
		if ce.statements.Load() != n0+coldStatements {
			loaded.Check(fmt.Errorf("round %d: the warm retrieves ran %d statements", round, ce.statements.Load()-n0-coldStatements))
		}
		slices.Sort(lat)
		p50, p99 = append(p50, lat[len(lat)/2]), append(p99, lat[len(lat)*99/100])
		if *warmOnly {
			fmt.Printf("round %d: warm p50 %.1f ms p99 %.1f ms (CPU %.3f ms per retrieve, PostgreSQL %.3f ms, %.0f GCs, %d bytes), load average %s\n",
				round+1, loaded.Ms(p50[round]), loaded.Ms(p99[round]), loaded.Ms(warmCPU[round]), loaded.Ms(warmPG[round]), warmGC[round], size.Load(), loaded.LoadAverage())
			continue
		}

		n1, c1 := ce.statements.Load(), loaded.CPUTime()
		var total, max time.Duration
		for k, id := range distinctIDs {
			t := time.Now()
			c.do("GET", fmt.Sprintf("insights/%d/?refresh=force_blocking", id), nil, nil)
			d := time.Since(t)
			perTile[k] = append(perTile[k], d)
			total += d
			max = max0(max, d)
		}
		oneByOne := ce.statements.Load() - n1
		sum, slowest, sumCPU = append(sum, total), append(slowest, max), append(sumCPU, loaded.CPUTime()-c1)
		fmt.Printf("round %d: cold %.0f ms (CPU %.0f ms, %d statements), one by one %.0f ms (CPU %.0f ms), slowest tile %.0f ms (%d statements), warm p50 %.1f ms p99 %.1f ms (CPU %.3f ms per retrieve, PostgreSQL %.3f ms, %.0f GCs, %d bytes)\n",
			round+1, loaded.Ms(cold[round]), loaded.Ms(coldCPU[round]), coldStatements, loaded.Ms(total), loaded.Ms(sumCPU[round]), loaded.Ms(max), oneByOne,
			loaded.Ms(p50[round]), loaded.Ms(p99[round]), loaded.Ms(warmCPU[round]), loaded.Ms(warmPG[round]), warmGC[round], size.Load())
		if coldStatements != oneByOne {
			loaded.Check(fmt.Errorf("round %d: the cold dashboard ran %d statements, its distinct tiles one by one %d", round+1, coldStatements, oneByOne))
		}
	}
	ratio := func(a, b []time.Duration) []float64 {
		out := make([]float64, len(a))
		for i := range a {
			out[i] = float64(a[i]) / float64(b[i])
		}
		return out
	}
	if *warmOnly {
		fmt.Printf("\nmedian (min-max) over %d rounds, ms: warm p50 %s, p99 %s; per retrieve: process CPU %s, PostgreSQL CPU %s (µs)\n",
			env.Runs, loaded.Spread(p50), loaded.Spread(p99), spreadMicros(warmCPU), spreadMicros(warmPG))
		return
	}
	fmt.Printf("\nmedian (min-max) over %d rounds, ms:\n", env.Runs)
	fmt.Printf("  cold dashboard, %d clients:   %s, process CPU %s\n", *clients, loaded.Spread(cold), loaded.Spread(coldCPU))
	fmt.Printf("  distinct tiles one by one:    %s, process CPU %s\n", loaded.Spread(sum), loaded.Spread(sumCPU))
	fmt.Printf("  slowest tile:                 %s\n", loaded.Spread(slowest))
	for k, name := range distinctNames {
		fmt.Printf("    alone: %-28s %s\n", name, loaded.Spread(perTile[k]))
	}
	fmt.Printf("  cold / one by one:            %s\n", loaded.Ratios(ratio(cold, sum)))
	fmt.Printf("  cold / slowest tile:          %s (target at most 1.50)\n", loaded.Ratios(ratio(cold, slowest)))
	fmt.Printf("  warm p50:                     %s\n", loaded.Spread(p50))
	fmt.Printf("  warm p99:                     %s (target under 20)\n", loaded.Spread(p99))
	fmt.Printf("  warm CPU per retrieve, µs: process (server and client) %s, PostgreSQL %s; %.0f GCs per round; answer %d bytes\n",
		spreadMicros(warmCPU), spreadMicros(warmPG), loaded.MedianOf(warmGC), size.Load())
}

func max0(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

// spreadMicros is the median of durations in microseconds with their
// range: a warm retrieve's CPU is a fraction of a millisecond.
func spreadMicros(ds []time.Duration) string {
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	return fmt.Sprintf("%.0f (%.0f-%.0f)", us(loaded.Median(ds)), us(slices.Min(ds)), us(slices.Max(ds)))
}

// parallel runs fn n times on each of k goroutines at once and returns
// every call's latency (and, when calls is not nil, adds each call to
// it). The goroutines carry the profiler label side=client: the
// server's goroutines (net/http's) do not, which splits a profile of the
// shared process between the two.
func parallel(k, n int, fn func(), calls *[]call) []time.Duration {
	var mu sync.Mutex
	var out []time.Duration
	var wg sync.WaitGroup
	start := make(chan struct{})
	t0 := time.Now()
	for client := range k {
		wg.Add(1)
		go pprof.Do(context.Background(), pprof.Labels("side", "client"), func(context.Context) {
			defer wg.Done()
			<-start
			for range n {
				t := time.Now()
				fn()
				d := time.Since(t)
				mu.Lock()
				out = append(out, d)
				if calls != nil {
					*calls = append(*calls, call{client: client, start: t.Sub(t0), took: d})
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	return out
}

// call is one timed call of parallel's: its client, when it started
// after the phase did, how long it took.
type call struct {
	client      int
	start, took time.Duration
}

// writeCalls writes calls, one a line (client, start and latency in ms),
// in the order they started: where a round's slowest retrieves fall.
func writeCalls(path string, calls []call) {
	slices.SortFunc(calls, func(a, b call) int { return cmp.Compare(a.start, b.start) })
	var b bytes.Buffer
	fmt.Fprintln(&b, "client\tstart_ms\tlatency_ms")
	for _, c := range calls {
		fmt.Fprintf(&b, "%d\t%.3f\t%.3f\n", c.client, loaded.Ms(c.start), loaded.Ms(c.took))
	}
	loaded.Check(os.WriteFile(path, b.Bytes(), 0o644))
}
