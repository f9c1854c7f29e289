// Command importload measures `insightd import` against the target's own
// capture throughput, in one run with interleaved rounds so both see the
// same machine noise: each round imports one day of the source project
// (the importer in this process: HogQL pages from the source, /batch/ to
// the target) and then sends as many pre-built events straight to the
// target's /batch/ (-senders requests of -batch events in flight, as
// benchmarks/ingestload does), into another project. It prints a
// markdown row per round (events, wall, events/s, client CPU µs/event),
// the medians with their range, and the ratio taken round by round. Both
// servers run apart (scripts/bench-import.sh starts them).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/cmd/insightd/importer"
)

func main() {
	from := flag.String("from", "", "source URL")
	fromKey := flag.String("from-key", "", "source personal API key")
	fromProject := flag.Int64("from-project", 1, "source project")
	to := flag.String("to", "", "target URL")
	toKey := flag.String("to-key", "", "target personal API key")
	toProject := flag.Int64("to-project", 0, "target project the import rounds copy into")
	captureToken := flag.String("capture-token", "", "project token the capture rounds send to (another project of the target)")
	start := flag.String("start", "", "first day imported (YYYY-MM-DD); round r imports the day r after it")
	rounds := flag.Int("rounds", 7, "rounds (each: an import of one day, then a capture of as many events)")
	senders := flag.Int("senders", 8, "capture rounds: requests in flight")
	batch := flag.Int("batch", 1000, "capture rounds: events a request")
	importSenders := flag.Int("import-senders", 4, "import rounds: the importer's --senders")
	flag.Parse()
	day, err := time.Parse(time.DateOnly, *start)
	if err != nil || *from == "" || *to == "" || *toProject == 0 || *captureToken == "" {
		fmt.Fprintln(os.Stderr, "importload: -from, -from-key, -to, -to-key, -to-project, -capture-token and -start are required")
		os.Exit(2)
	}
	ctx := context.Background()
	fmt.Printf("load average at the start: %s\n\n", loadavg())
	fmt.Println("| round | events | import s | import events/s | importer CPU µs/event | capture s | capture events/s | capture client CPU µs/event | import / capture |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	var ie, ce, ratio, icpu []float64
	for r := 0; r < *rounds; r++ {
		since := day.Add(time.Duration(r) * 24 * time.Hour)
		cpu0, t0 := cpuSeconds(), time.Now()
		im, err := importer.New(importer.Config{Source: importer.NewClient(*from, *fromKey, *fromProject),
			Target: importer.NewClient(*to, *toKey, *toProject), Only: map[string]bool{"events": true},
			Since: since, Until: since.Add(24 * time.Hour), PageSize: 10_000, Senders: *importSenders})
		if err != nil {
			fail(err)
		}
		rep, err := im.Run(ctx)
		if err != nil {
			fail(err)
		}
		iw, ic := time.Since(t0).Seconds(), cpuSeconds()-cpu0
		n := rep.Events.Copied
		bodies := buildBodies(*captureToken, int(n), *batch, r)
		cpu1, t1 := cpuSeconds(), time.Now()
		send(ctx, *to, bodies, *senders)
		cw, cc := time.Since(t1).Seconds(), cpuSeconds()-cpu1
		irate, crate := float64(n)/iw, float64(n)/cw
		fmt.Printf("| %d | %d | %.1f | %.0f | %.1f | %.1f | %.0f | %.1f | %.2f |\n", r+1, n, iw, irate, ic/float64(n)*1e6, cw, crate, cc/float64(n)*1e6, irate/crate)
		ie, ce, ratio, icpu = append(ie, irate), append(ce, crate), append(ratio, irate/crate), append(icpu, ic/float64(n)*1e6)
	}
	fmt.Printf("\nmedian (min-max): import %s events/s, capture %s events/s, import / capture %s, importer CPU %s µs/event\n",
		spread(ie, "%.0f"), spread(ce, "%.0f"), spread(ratio, "%.2f"), spread(icpu, "%.1f"))
	fmt.Printf("load average at the end: %s\n", loadavg())
}

// buildBodies makes n events shaped like the synthetic source's (a page
// view with a URL, browser, OS and a few properties), in /batch/ bodies.
func buildBodies(token string, n, batch, round int) [][]byte {
	var out [][]byte
	at := time.Now().UTC().Add(-time.Hour)
	for i := 0; i < n; i += batch {
		var evs []map[string]any
		for j := i; j < min(i+batch, n); j++ {
			evs = append(evs, map[string]any{"uuid": uuid.NewString(), "event": "$pageview", "distinct_id": fmt.Sprintf("user-%d", (j*7919+round)%100000),
				"timestamp": at.Add(time.Duration(j) * time.Millisecond).Format(time.RFC3339Nano),
				"properties": map[string]any{"$current_url": fmt.Sprintf("https://example.com/p/%d", j%50), "$pathname": fmt.Sprintf("/p/%d", j%50),
					"$browser": "Chrome", "$os": "Mac OS X", "$device_type": "Desktop", "$session_id": fmt.Sprintf("s-%d", j/20), "plan": "pro"}})
		}
		b, _ := json.Marshal(map[string]any{"api_key": token, "batch": evs})
		out = append(out, b)
	}
	return out
}

func send(ctx context.Context, base string, bodies [][]byte, senders int) {
	var wg sync.WaitGroup
	next := make(chan []byte)
	for s := 0; s < senders; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/batch/", bytes.NewReader(b))
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					fail(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					fail(fmt.Errorf("capture: %d %s", resp.StatusCode, body))
				}
			}
		}()
	}
	for _, b := range bodies {
		next <- b
	}
	close(next)
	wg.Wait()
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func spread(v []float64, f string) string {
	s := slices.Clone(v)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf(f+" ("+f+"-"+f+")", med, s[0], s[len(s)-1])
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "importload:", err)
	os.Exit(1)
}
