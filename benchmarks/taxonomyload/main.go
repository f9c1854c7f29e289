// Command taxonomyload times event_definitions/ and property_definitions/
// on the loaded project over HTTP (make bench-taxonomy): each round sends
// every request -requests times, the requests taking turns at going
// first, and reports each request's p99 and median per round. Opening
// the data set runs the migrations not yet applied: the first run on a
// data set loaded before migration 0012 back-fills the taxonomy, and its
// time is printed.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/insightd/insightd/benchmarks/loaded"
)

func main() {
	f := loaded.RegisterFlags("taxonomy")
	requests := flag.Int("requests", 50, "requests of each kind per round")
	flag.Parse()
	ctx := context.Background()
	t0, c0 := time.Now(), loaded.CPUTime()
	e, err := loaded.Open(ctx, f)
	loaded.Check(err)
	defer e.Close()
	fmt.Printf("open and migrate: %.1f s wall, %.1f s CPU (includes the taxonomy back-fill when migration 0012 ran now)\n",
		time.Since(t0).Seconds(), (loaded.CPUTime() - c0).Seconds())
	base := strings.TrimSuffix(e.InsightsURL, "insights/")
	cases := []struct{ name, path string }{
		{"event_definitions", "event_definitions/?limit=100"},
		{"event_definitions search", "event_definitions/?search=page"},
		{"property_definitions (event)", "property_definitions/?type=event&limit=100"},
		{"property_definitions event_names filter", "property_definitions/?type=event&event_names=%5B%22%24pageview%22%5D&filter_by_event_names=true"},
		{"property_definitions person", "property_definitions/?type=person"},
	}
	get := func(path string) error {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+e.Key)
		resp, err := e.Client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return fmt.Errorf("%s: %d %s", path, resp.StatusCode, b)
		}
		return nil
	}
	for _, c := range cases { // warm-up, and the answer is checked
		loaded.Check(get(c.path))
	}
	p99 := make([][]time.Duration, len(cases))
	med := make([][]time.Duration, len(cases))
	cpu := make([][]float64, len(cases))
	fmt.Printf("\n%d rounds of %d requests of each kind, load average %s\n\n", e.Runs, *requests, loaded.LoadAverage())
	for r := 0; r < e.Runs; r++ {
		for k := range cases {
			i := (k + r) % len(cases)
			var ds []time.Duration
			c0 := loaded.CPUTime()
			for n := 0; n < *requests; n++ {
				t := time.Now()
				loaded.Check(get(cases[i].path))
				ds = append(ds, time.Since(t))
			}
			cpu[i] = append(cpu[i], loaded.Ms(loaded.CPUTime()-c0)/float64(*requests))
			slices.Sort(ds)
			p99[i] = append(p99[i], ds[(len(ds)*99+99)/100-1])
			med[i] = append(med[i], loaded.Median(ds))
		}
	}
	fmt.Println("| request | p99 ms, median of rounds (min-max) | median ms (min-max) | process CPU ms a request |")
	fmt.Println("|---|---|---|---|")
	for i, c := range cases {
		fmt.Printf("| %s | %s | %s | %.2f |\n", c.name, loaded.Spread(p99[i]), loaded.Spread(med[i]), loaded.MedianOf(cpu[i]))
	}
	fmt.Printf("\nload average after: %s\n", loaded.LoadAverage())
}
