// Command ingestload measures event ingestion two ways in one process and
// one run, alternating rounds so that both see the same machine noise:
//
//   - direct: -senders goroutines call Engine.InsertEvents with the same
//     events, the ceiling (no HTTP, no JSON, no persons), in inserts of
//     the size HTTP's group commit writes (-direct-batch 0: the writer's
//     mean events a flush in the warm-up round), not of a request's size;
//   - http: -senders goroutines POST batches of -batch events as JSON to
//     /batch/ of an insightd server running in this process on a loopback
//     port (parsing, persons, exactly-once, group commit).
//
// Request bodies and event batches are built before each round, so the
// timing holds only the sending. An untimed warm-up round (HTTP, then
// direct) comes first; then -rounds rounds, round r starting with mode r
// mod 2. It prints one markdown row per round (with the HTTP writer's
// events a flush in that round) and the median (min-max) of each column,
// the ratio taken round by round, and the load average at the start and
// the end. It needs DATABASE_URL (an empty PostgreSQL database),
// INSIGHTD_CHDB_LIB, and INSIGHTD_DATA_DIR (a fresh directory).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/api"
	"github.com/insightd/insightd/benchmarks/loaded"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

func main() {
	batch := flag.Int("batch", 1000, "events per request / insert")
	senders := flag.Int("senders", 8, "concurrent senders")
	requests := flag.Int("requests", 100, "requests per round and mode")
	rounds := flag.Int("rounds", 7, "timed rounds (each: both modes, a different one first), after a warm-up round")
	directBatch := flag.Int("direct-batch", 0, "events per direct insert (0: HTTP's mean events a flush in the warm-up round)")
	persons := flag.Int("persons", 20000, "distinct ids events are spread over")
	withUUIDs := flag.Bool("uuids", true, "send a uuid with each event, as posthog-js does (exercises the retry check)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	httpProfile := flag.String("httpprofile", "", "write a CPU profile of each round's HTTP sending to this file plus .N "+
		"(go tool pprof merges several)")
	warmup := flag.Duration("warmup", 20*time.Second, "wait after the server starts, as a running server has: "+
		"it vouches for new uuids only when they were made after it started (see olap/recent.go)")
	merges := flag.Bool("merges", true, "let the engine merge parts in the background (false: diagnosis of what merges cost)")
	alter := flag.String("alter", "", "an ALTER TABLE statement to run before the rounds (settings experiments)")
	taxonomyAB := flag.Bool("taxonomy-ab", false, "also send each round's HTTP events with the writer's taxonomy upkeep off (olap/taxonomy.go), "+
		"the two taking turns at going first, and report the CPU per event of both")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "ingestload:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*batch, *directBatch, *senders, *requests, *rounds, *persons, *withUUIDs, *warmup, *httpProfile, *merges, *alter, *taxonomyAB); err != nil {
		fmt.Fprintln(os.Stderr, "ingestload:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(batch, directBatch, senders, requests, rounds, persons int, withUUIDs bool, warmup time.Duration, httpProfile string, merges bool, alter string, taxonomyAB bool) error {
	ctx := context.Background()
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	engine, store, closeStores, err := loaded.OpenScratch(ctx, log)
	if err != nil {
		return err
	}
	defer closeStores()
	boot, err := store.Bootstrap(ctx, fmt.Sprintf("ingest-%d@example.com", time.Now().UnixNano()), "Ingest", "Ingest")
	if err != nil {
		return err
	}
	acfg := api.DefaultConfig()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	srv := api.New(acfg, log, store, engine)
	go srv.Serve(sctx, ln)
	url := "http://" + ln.Addr().String() + "/batch/"
	if strings.HasPrefix(alter, "ALTER TABLE ") {
		if err := engine.Exec(ctx, querybuilder.Statement{SQL: alter}); err != nil {
			return err
		}
	}
	if !merges {
		if err := engine.Exec(ctx, querybuilder.Statement{SQL: "SYSTEM STOP MERGES"}); err != nil {
			return err
		}
	}
	time.Sleep(warmup)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: senders * 2}, Timeout: time.Minute}

	const directTeam = 1 << 40 // not a project: the ceiling writes beside it
	rng := rand.New(rand.NewPCG(7, 11))
	ws := srv.WriterStats()
	n := requests * batch // events a round and mode
	fmt.Printf("%d senders, %d events a request, %d requests a round and mode, uuids sent: %v, %d distinct ids; started %s, load average %s\n\n",
		senders, batch, requests, withUUIDs, persons, time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())

	var direct, viaHTTP, ratios, directCPU, httpCPU, perFlush, offCPU, taxRatios []float64
	var sentHTTP int64
	for r := 0; r <= rounds; r++ {
		var d, h, dc, hc, hOff, hcOff time.Duration
		var flushEvents float64
		runDirect := func() error {
			size := directBatch
			if size <= 0 {
				size = batch // the warm-up round, before a flush size is known
			}
			var batches [][]olap.Event
			for left := n; left > 0; left -= size {
				batches = append(batches, events(rng, directTeam, min(size, left), persons))
			}
			c0 := loaded.CPUTime()
			var err error
			d, err = timed(senders, len(batches), func(i int) error { return engine.InsertEvents(ctx, batches[i]) })
			dc = loaded.CPUTime() - c0
			if err != nil {
				return fmt.Errorf("direct: %w", err)
			}
			return nil
		}
		runHTTP := func() error {
			bodies := make([][]byte, requests)
			for i := range bodies {
				var err error
				if bodies[i], err = body(rng, boot.ProjectAPIToken, batch, persons, withUUIDs); err != nil {
					return err
				}
			}
			if httpProfile != "" && r > 0 {
				f, err := os.Create(fmt.Sprintf("%s.%d", httpProfile, r))
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			f0, e0 := ws.Flushes.Load(), ws.Events.Load()
			c0 := loaded.CPUTime()
			var err error
			h, err = timed(senders, requests, func(i int) error { return post(client, url, bodies[i]) })
			hc = loaded.CPUTime() - c0
			if err != nil {
				return fmt.Errorf("http: %w", err)
			}
			sentHTTP += int64(n)
			if f := ws.Flushes.Load() - f0; f > 0 {
				flushEvents = float64(ws.Events.Load()-e0) / float64(f)
			}
			return nil
		}
		modes := []func() error{runHTTP, runDirect} // the warm-up learns the flush size first
		if r > 0 && r%2 == 1 {
			modes = []func() error{runDirect, runHTTP}
		}
		if taxonomyAB {
			// The same HTTP sending with the taxonomy off: its wall and
			// CPU go to hOff and hcOff, the on side's stay in h and hc.
			runOff := func() error {
				srv.SetTaxonomy(false)
				defer srv.SetTaxonomy(true)
				h0, hc0, f0 := h, hc, flushEvents
				if err := runHTTP(); err != nil {
					return err
				}
				hOff, hcOff, h, hc, flushEvents = h, hc, h0, hc0, f0
				return nil
			}
			if r%2 == 0 {
				modes = append([]func() error{runOff}, modes...)
			} else {
				modes = append(modes, runOff)
			}
		}
		for _, m := range modes {
			if err := m(); err != nil {
				return err
			}
		}
		if r == 0 {
			if directBatch <= 0 {
				directBatch = max(1, int(flushEvents+0.5))
			}
			fmt.Printf("warm-up round (untimed): HTTP wrote %.0f events a flush; direct inserts of %d events\n\n", flushEvents, directBatch)
			fmt.Println("| round | first | direct events/s | HTTP /batch/ events/s | HTTP / direct | direct CPU µs/event | HTTP CPU µs/event | HTTP events a flush |")
			fmt.Println("|---|---|---|---|---|---|---|---|")
			continue
		}
		ev := float64(n)
		direct, viaHTTP, ratios = append(direct, ev/d.Seconds()), append(viaHTTP, ev/h.Seconds()), append(ratios, d.Seconds()/h.Seconds())
		directCPU, httpCPU = append(directCPU, float64(dc.Microseconds())/ev), append(httpCPU, float64(hc.Microseconds())/ev)
		perFlush = append(perFlush, flushEvents)
		if taxonomyAB {
			offCPU = append(offCPU, float64(hcOff.Microseconds())/ev)
			taxRatios = append(taxRatios, float64(hc.Microseconds())/float64(hcOff.Microseconds()))
			fmt.Printf("| %d | taxonomy off (first: %v) | | %.0f | | | %.1f | |\n", r, r%2 == 0, ev/hOff.Seconds(), offCPU[len(offCPU)-1])
		}
		first := "HTTP"
		if r%2 == 1 {
			first = "direct"
		}
		fmt.Printf("| %d | %s | %.0f | %.0f | %.2f | %.1f | %.1f | %.0f |\n", r, first, ev/d.Seconds(), ev/h.Seconds(), d.Seconds()/h.Seconds(),
			directCPU[len(directCPU)-1], httpCPU[len(httpCPU)-1], flushEvents)
	}
	spread := func(xs []float64, format string) string {
		return fmt.Sprintf(format+" ("+format+"-"+format+")", loaded.MedianOf(xs), slices.Min(xs), slices.Max(xs))
	}
	fmt.Printf("| **median (min-max)** | | **%s** | **%s** | **%s** | **%s** | **%s** | **%s** |\n\n", spread(direct, "%.0f"), spread(viaHTTP, "%.0f"),
		loaded.Ratios(ratios), spread(directCPU, "%.1f"), spread(httpCPU, "%.1f"), spread(perFlush, "%.0f"))

	if taxonomyAB {
		fmt.Printf("taxonomy A/B: HTTP CPU µs/event with the taxonomy %s, without %s; on / off within rounds %s\n\n",
			spread(httpCPU, "%.2f"), spread(offCPU, "%.2f"), fmt.Sprintf("%.3f (%.3f-%.3f)", loaded.MedianOf(taxRatios), slices.Min(taxRatios), slices.Max(taxRatios)))
	}
	rows, err := engine.Query(ctx, querybuilder.Statement{
		SQL:    "SELECT count() FROM events WHERE team_id = {team:Int64}",
		Params: map[string]any{"team": boot.ProjectID},
	})
	if err != nil {
		return err
	}
	if got := int64(rows.Data[0][0].(uint64)); got != sentHTTP {
		return fmt.Errorf("sent %d events over HTTP, %d stored", sentHTTP, got)
	}
	fmt.Printf("check: %d events sent over HTTP, %d stored\n", sentHTTP, sentHTTP)
	parts, err := engine.Query(ctx, querybuilder.Statement{SQL: `SELECT table, count() FROM system.parts
WHERE active AND database = currentDatabase() GROUP BY table ORDER BY table`})
	if err != nil {
		return err
	}
	fmt.Printf("active parts at the end: %v\n", parts.Data)
	props, err := engine.Query(ctx, querybuilder.Statement{SQL: `SELECT sum(data_compressed_bytes), sum(data_uncompressed_bytes)
FROM system.columns WHERE database = currentDatabase() AND table = 'events' AND name = 'properties'`})
	if err != nil {
		return err
	}
	fmt.Printf("events.properties on disk: %v bytes compressed of %v\n", props.Data[0][0], props.Data[0][1])
	f := float64(ws.Flushes.Load())
	ms := func(n int64) float64 { return float64(n) / f / 1e6 }
	fmt.Printf("writer: %d flushes, %.0f events a flush; mean ms a flush: retry check %.1f, person resolution %.1f, person rows %.1f, events insert %.1f\n",
		ws.Flushes.Load(), float64(ws.Events.Load())/f, ms(ws.CheckNanos.Load()), ms(ws.ResolveNanos.Load()), ms(ws.PersonsNanos.Load()), ms(ws.InsertNanos.Load()))
	fmt.Printf("finished %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
	return nil
}

// timed runs n jobs on senders goroutines and returns the wall time.
func timed(senders, n int, job func(i int) error) (time.Duration, error) {
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	start := time.Now()
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := job(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start), first
}

func post(client *http.Client, url string, body []byte) error {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	return nil
}

var (
	pages    = []string{"/", "/pricing", "/docs", "/blog/launch", "/signup", "/checkout", "/account"}
	browsers = []string{"Chrome", "Safari", "Firefox", "Edge"}
	systems  = []string{"Mac OS X", "Windows", "iOS", "Android", "Linux"}
)

// properties is a posthog-js-like $pageview property set, about 500 bytes.
func properties(rng *rand.Rand) map[string]any {
	page := pages[rng.IntN(len(pages))]
	return map[string]any{
		"$current_url": "https://shop.example.com" + page, "$host": "shop.example.com", "$pathname": page,
		"$browser": browsers[rng.IntN(len(browsers))], "$browser_version": 120 + rng.IntN(10),
		"$os": systems[rng.IntN(len(systems))], "$device_type": "Desktop",
		"$screen_height": 1080, "$screen_width": 1920, "$viewport_height": 950, "$viewport_width": 1900,
		"$lib": "web", "$lib_version": "1.150.0", "$session_id": uuid.NewString(), "$window_id": uuid.NewString(),
		"$referrer": "https://www.google.com/", "$referring_domain": "www.google.com", "$insert_id": fmt.Sprint(rng.Uint64()),
	}
}

func events(rng *rand.Rand, team int64, n, persons int) []olap.Event {
	out := make([]olap.Event, n)
	now := time.Now().UTC()
	for i := range out {
		d := fmt.Sprintf("user-%d", rng.IntN(persons))
		p, _ := json.Marshal(properties(rng))
		out[i] = olap.Event{UUID: uuid.Must(uuid.NewV7()), TeamID: team, Event: "$pageview", DistinctID: d,
			PersonID: olap.PersonIDFor(team, d), Timestamp: now.Add(-time.Duration(rng.IntN(3600)) * time.Second),
			Properties: string(p), CreatedAt: now}
	}
	return out
}

func body(rng *rand.Rand, token string, n, persons int, withUUIDs bool) ([]byte, error) {
	evs := make([]map[string]any, n)
	now := time.Now().UTC()
	for i := range evs {
		ev := map[string]any{"event": "$pageview", "distinct_id": fmt.Sprintf("user-%d", rng.IntN(persons)),
			"properties": properties(rng), "timestamp": now.Add(-time.Duration(rng.IntN(3600)) * time.Second).Format(time.RFC3339Nano)}
		if withUUIDs {
			ev["uuid"] = uuid.Must(uuid.NewV7()).String()
		}
		evs[i] = ev
	}
	return json.Marshal(map[string]any{"api_key": token, "batch": evs, "sent_at": now.Format(time.RFC3339Nano)})
}
