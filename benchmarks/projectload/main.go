// Command projectload measures the projects API under concurrent clients:
// it creates a few projects, then for each endpoint (list, retrieve) runs
// -clients goroutines issuing requests back to back for -duration and
// prints p50, p90, p99, max latency and requests per second as a markdown
// table row. It only talks to the server at -url (loopback by default).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:8000", "server base URL")
	key := flag.String("key", os.Getenv("INSIGHTD_KEY"), "personal API key (env INSIGHTD_KEY)")
	org := flag.String("org", "@current", "organization id")
	clients := flag.Int("clients", 32, "concurrent clients")
	duration := flag.Duration("duration", 15*time.Second, "how long each endpoint is loaded")
	projects := flag.Int("projects", 10, "projects to create first, so the list has pages of real size")
	project := flag.Int64("project", 0, "project to retrieve (default: the last one created)")
	flag.Parse()
	if *key == "" {
		fmt.Fprintln(os.Stderr, "projectload: -key or INSIGHTD_KEY is required")
		os.Exit(2)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *clients * 2}, Timeout: 10 * time.Second}
	listURL := fmt.Sprintf("%s/api/organizations/%s/projects/", *base, *org)

	var id int64
	for i := 0; i < *projects; i++ {
		body, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("load %d", i), "app_urls": []string{"https://load.test"}})
		req, _ := http.NewRequest("POST", listURL, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+*key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			fail(err)
		}
		var p struct{ ID int64 }
		json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != 201 {
			fail(fmt.Errorf("create project: status %d", resp.StatusCode))
		}
		id = p.ID
	}
	if *project != 0 {
		id = *project
	}
	if id == 0 {
		fail(fmt.Errorf("no project to retrieve: pass -project or -projects > 0"))
	}
	fmt.Printf("| endpoint | clients | requests | errors | req/s | p50 ms | p90 ms | p99 ms | max ms |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, ep := range []struct{ name, url string }{
		{"retrieve", fmt.Sprintf("%s%d/", listURL, id)},
		{"list", listURL},
	} {
		load(client, ep.name, ep.url, *key, *clients, *duration)
	}
}

func load(client *http.Client, name, url, key string, clients int, d time.Duration) {
	var mu sync.Mutex
	var lat []time.Duration
	errs := 0
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			bad := 0
			for time.Now().Before(deadline) {
				req, _ := http.NewRequest("GET", url, nil)
				req.Header.Set("Authorization", "Bearer "+key)
				t0 := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				if err != nil {
					bad++
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
	fmt.Printf("| %s | %d | %d | %d | %.0f | %.2f | %.2f | %.2f | %.2f |\n", name, clients, len(lat), errs,
		float64(len(lat))/elapsed.Seconds(), q(0.50), q(0.90), q(0.99), q(1))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "projectload:", err)
	os.Exit(1)
}
