// Command resultload measures what the server holds and allocates to
// answer the largest result the analysis budget allows
// (querybuilder.MaxResultCells numbers): an hourly trend over 416 days
// broken down by 9 values and the other one, 9 984 x 10 = 99 840 numbers,
// on the real embedded engine with generated events, through the real API
// handler served in-process. For each round it records the peak of the Go
// heap's live and unswept objects above the heap after a GC before the
// request (sampled every 200µs from runtime/metrics) and the bytes
// allocated from the engine's rows to the response's last byte, computed
// (refresh=true) and answered from the result cache. It prints a markdown
// table of medians.
//
//	go run ./benchmarks/resultload -runs 5
//
// It makes its own engine directory and PostgreSQL database (dropped at
// the end) on the server of -database-url.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sort"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	_ "github.com/lib/pq"

	"github.com/insightd/insightd/benchmarks/loaded"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

const (
	days   = 416
	values = 12 // breakdown values: 9 shown, 3 in the other series
	limit  = 9
)

func main() {
	databaseURL := flag.String("database-url", os.Getenv("DATABASE_URL"), "a PostgreSQL server where a database may be created")
	lib := flag.String("chdb-lib", os.Getenv("INSIGHTD_CHDB_LIB"), "path of libchdb.so")
	runs := flag.Int("runs", 5, "measured rounds of each case")
	profile := flag.String("memprofile", "", "write the allocations profile of the measured rounds to this file")
	flag.Parse()
	ctx := context.Background()

	dir, err := os.MkdirTemp("", "resultload-")
	loaded.Check(err)
	defer os.RemoveAll(dir)
	dbURL, drop := freshDatabase(*databaseURL)
	defer drop()
	project := int64(1)
	end := time.Now().UTC().Truncate(24 * time.Hour)
	endText := end.Format(time.DateOnly)
	f := &loaded.Flags{DataDir: &dir, DatabaseURL: &dbURL, ChDBLib: lib, End: &endText, Project: &project, Runs: runs,
		Days: new(days)}
	env, err := loaded.Open(ctx, f)
	loaded.Check(err)
	defer env.Close()

	_, err = olap.Migrate(ctx, env.Engine)
	loaded.Check(err)
	n := generate(ctx, env.Engine, project, end)
	body, _ := json.Marshal(map[string]any{"events": []any{map[string]any{"id": "visit"}}, "interval": "hour",
		"date_from": env.From, "date_to": env.To, "breakdown": "$browser", "breakdown_limit": limit})
	fmt.Printf("%d events, an hourly trend from %s to %s by $browser (limit %d): budget %d numbers\n\n",
		n, env.From, env.To, limit, querybuilder.MaxResultCells)

	type sample struct{ peak, alloc, size float64 }
	measure := func(refresh bool) sample {
		target := env.InsightsURL + "trend/"
		if refresh {
			target += "?refresh=true"
		}
		runtime.GC()
		base := heapObjects()
		allocs := allocated()
		var peak atomic.Uint64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			t := time.NewTicker(200 * time.Microsecond)
			defer t.Stop()
			for {
				if h := heapObjects(); h > peak.Load() {
					peak.Store(h)
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
		req, _ := http.NewRequest("POST", target, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+env.Key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := env.Client.Do(req)
		loaded.Check(err)
		size, err := io.Copy(io.Discard, resp.Body)
		loaded.Check(err)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			loaded.Check(fmt.Errorf("status %d", resp.StatusCode))
		}
		close(stop)
		<-done
		if h := heapObjects(); h > peak.Load() {
			peak.Store(h)
		}
		return sample{peak: mib(peak.Load() - min(base, peak.Load())), alloc: mib(allocated() - allocs), size: mib(uint64(size))}
	}
	measure(true) // warm up, and fill the cache
	fmt.Printf("| case | response MiB | peak heap above idle MiB (median, max) | allocated MiB (median) |\n|---|---|---|---|\n")
	for _, c := range []struct {
		name    string
		refresh bool
	}{{"computed (refresh=true)", true}, {"from the result cache", false}} {
		var peaks, allocs []float64
		var size float64
		for range *runs {
			s := measure(c.refresh)
			peaks, allocs, size = append(peaks, s.peak), append(allocs, s.alloc), s.size
		}
		sort.Float64s(peaks)
		fmt.Printf("| %s | %.1f | %.1f, %.1f | %.1f |\n", c.name, size, loaded.MedianOf(peaks), peaks[len(peaks)-1], loaded.MedianOf(allocs))
	}
	if *profile != "" {
		out, err := os.Create(*profile)
		loaded.Check(err)
		loaded.Check(pprof.Lookup("allocs").WriteTo(out, 0))
		out.Close()
	}
	fmt.Printf("\nload average %s, GOMAXPROCS %d\n", loaded.LoadAverage(), runtime.GOMAXPROCS(0))
}

// generate stores one event per hour and breakdown value over the range.
func generate(ctx context.Context, e *olap.Embedded, project int64, end time.Time) int {
	start := end.AddDate(0, 0, -days)
	var batch []olap.Event
	n := 0
	for t := start; t.Before(end); t = t.Add(time.Hour) {
		for v := range values {
			// Values get fewer events as v grows, so the top 9 are stable.
			if v >= limit && t.Hour()%2 == 1 {
				continue
			}
			batch = append(batch, olap.Event{UUID: uuid.New(), TeamID: project, Event: "visit", DistinctID: fmt.Sprintf("d%d", v),
				PersonID: uuid.New(), Timestamp: t.Add(time.Duration(v) * time.Minute),
				Properties: fmt.Sprintf(`{"$browser": "browser %02d"}`, v), CreatedAt: t})
		}
		if len(batch) >= 20_000 {
			loaded.Check(e.InsertEvents(ctx, batch))
			n += len(batch)
			batch = batch[:0]
		}
	}
	loaded.Check(e.InsertEvents(ctx, batch))
	return n + len(batch)
}

// heapObjects is the heap's objects, live or not yet swept.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// freshDatabase creates a database on the server of base and returns its
// URL and how to drop it.
func freshDatabase(base string) (string, func()) {
	db, err := sql.Open("postgres", base)
	loaded.Check(err)
	name := fmt.Sprintf("resultload_%d", os.Getpid())
	_, err = db.Exec("CREATE DATABASE " + name)
	loaded.Check(err)
	u, err := url.Parse(base)
	loaded.Check(err)
	u.Path = "/" + name
	return u.String(), func() {
		db.Exec("DROP DATABASE " + name + " WITH (FORCE)") //nolint:errcheck // best effort
		db.Close()
	}
}
