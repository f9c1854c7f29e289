// Command geoipload measures what GeoIP at capture costs: two servers on
// one embedded ClickHouse and one PostgreSQL, one with a GeoIP database
// and one without, take the same /batch/ bodies in interleaved rounds (a
// different one first each round), and each side's process CPU per event
// is read beside its wall time. The database is written with MaxMind's
// writer: -networks random /24 networks, each a full city record. Every
// request comes from an address in it (X-Forwarded-For, as behind a
// proxy), or with -event-ip every event carries its own $ip, as a server
// SDK forwarding its users' sends. Run it through scripts/bench-geoip.sh.
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
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"

	"github.com/insightd/insightd/api"
	"github.com/insightd/insightd/api/ingest"
	"github.com/insightd/insightd/benchmarks/loaded"
)

func main() {
	batch := flag.Int("batch", 200, "events per request")
	senders := flag.Int("senders", 8, "concurrent senders")
	requests := flag.Int("requests", 100, "requests per round and side")
	rounds := flag.Int("rounds", 7, "timed rounds, after a warm-up round")
	networks := flag.Int("networks", 20000, "networks in the GeoIP database")
	eventIP := flag.Bool("event-ip", false, "every event carries its own $ip instead of the request's address")
	persons := flag.Bool("persons", false, "the located side sets person properties too (--geoip-persons)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "geoipload:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*batch, *senders, *requests, *rounds, *networks, *eventIP, *persons); err != nil {
		fmt.Fprintln(os.Stderr, "geoipload:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// side is one server and the project it is sent to.
type side struct {
	name      string
	url       string
	token     string
	wall, cpu []float64 // per timed round: events a second, CPU µs an event
}

func run(batch, senders, requests, rounds, networks int, eventIP, persons bool) error {
	ctx := context.Background()
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	engine, store, closeStores, err := loaded.OpenScratch(ctx, log)
	if err != nil {
		return err
	}
	defer closeStores()
	rng := rand.New(rand.NewPCG(3, 5))
	dbPath := filepath.Join(os.Getenv("INSIGHTD_DATA_DIR"), "city.mmdb")
	addrs, err := writeDB(dbPath, networks, rng)
	if err != nil {
		return err
	}
	geo, err := ingest.OpenGeoIP(dbPath)
	if err != nil {
		return err
	}
	defer geo.Close()

	var sides []*side
	for _, withGeo := range []bool{false, true} {
		boot, err := store.Bootstrap(ctx, fmt.Sprintf("geoip-%v-%d@example.com", withGeo, time.Now().UnixNano()), "GeoIP", "GeoIP")
		if err != nil {
			return err
		}
		cfg := api.DefaultConfig()
		name := "off"
		if withGeo {
			cfg.GeoIP, cfg.GeoIPPersons, name = geo, persons, "on"
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		go api.New(cfg, log, store, engine).Serve(sctx, ln)
		sides = append(sides, &side{name: name, url: "http://" + ln.Addr().String() + "/batch/", token: boot.ProjectAPIToken})
	}
	time.Sleep(5 * time.Second)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: senders * 2}, Timeout: time.Minute}
	fmt.Printf("%d senders, %d events a request, %d requests a round and side, %d networks, own $ip per event: %v, person properties: %v; started %s, load average %s\n\n",
		senders, batch, requests, networks, eventIP, persons, time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
	fmt.Println("| round | first | off events/s | on events/s | off CPU µs/event | on CPU µs/event | on / off CPU |")
	fmt.Println("|---|---|---|---|---|---|---|")
	var cpuRatios []float64
	for r := 0; r <= rounds; r++ {
		order := []*side{sides[0], sides[1]}
		if r%2 == 1 {
			order = []*side{sides[1], sides[0]}
		}
		got := map[string][2]float64{}
		for _, s := range order {
			bodies := make([][]byte, requests)
			ips := make([]string, requests)
			for i := range bodies {
				ips[i] = addrs[rng.IntN(len(addrs))]
				if bodies[i], err = body(rng, s.token, batch, addrs, eventIP); err != nil {
					return err
				}
			}
			c0, t0 := loaded.CPUTime(), time.Now()
			if err := send(client, s.url, bodies, ips, senders); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			wall, cpu := time.Since(t0), loaded.CPUTime()-c0
			n := float64(requests * batch)
			got[s.name] = [2]float64{n / wall.Seconds(), float64(cpu.Microseconds()) / n}
		}
		if r == 0 {
			continue // warm-up
		}
		for _, s := range sides {
			s.wall, s.cpu = append(s.wall, got[s.name][0]), append(s.cpu, got[s.name][1])
		}
		ratio := got["on"][1] / got["off"][1]
		cpuRatios = append(cpuRatios, ratio)
		fmt.Printf("| %d | %s | %.0f | %.0f | %.1f | %.1f | %.3f |\n", r, order[0].name, got["off"][0], got["on"][0], got["off"][1], got["on"][1], ratio)
	}
	spread := func(xs []float64, format string) string {
		return fmt.Sprintf(format+" ("+format+"-"+format+")", loaded.MedianOf(xs), slices.Min(xs), slices.Max(xs))
	}
	fmt.Printf("| **median (min-max)** | | **%s** | **%s** | **%s** | **%s** | **%s** |\n\n", spread(sides[0].wall, "%.0f"), spread(sides[1].wall, "%.0f"),
		spread(sides[0].cpu, "%.1f"), spread(sides[1].cpu, "%.1f"), spread(cpuRatios, "%.3f"))
	fmt.Printf("finished %s, load average %s\n", time.Now().UTC().Format(time.RFC3339), loaded.LoadAverage())
	return nil
}

// writeDB writes a city database of n random /24 networks and returns an
// address in each.
func writeDB(path string, n int, rng *rand.Rand) ([]string, error) {
	w, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "GeoLite2-City", RecordSize: 28})
	if err != nil {
		return nil, err
	}
	names := func(s string) mmdbtype.Map { return mmdbtype.Map{"en": mmdbtype.String(s)} }
	var addrs []string
	for i := 0; len(addrs) < n; i++ {
		ip := net.IPv4(byte(1+rng.IntN(222)), byte(rng.IntN(256)), byte(rng.IntN(256)), 0)
		network := &net.IPNet{IP: ip.To4(), Mask: net.CIDRMask(24, 32)}
		city := fmt.Sprintf("City %d", i)
		err := w.Insert(network, mmdbtype.Map{
			"city":      mmdbtype.Map{"names": names(city)},
			"continent": mmdbtype.Map{"code": mmdbtype.String("EU"), "names": names("Europe")},
			"country":   mmdbtype.Map{"iso_code": mmdbtype.String("SE"), "names": names("Sweden")},
			"postal":    mmdbtype.Map{"code": mmdbtype.String(fmt.Sprint(10000 + i))},
			"location": mmdbtype.Map{"latitude": mmdbtype.Float64(rng.Float64()*180 - 90), "longitude": mmdbtype.Float64(rng.Float64()*360 - 180),
				"accuracy_radius": mmdbtype.Uint16(50), "time_zone": mmdbtype.String("Europe/Stockholm")},
			"subdivisions": mmdbtype.Slice{mmdbtype.Map{"iso_code": mmdbtype.String("AB"), "names": names("County " + city)}},
		})
		if err != nil {
			continue // a reserved network: draw another
		}
		addrs = append(addrs, net.IPv4(ip[12], ip[13], ip[14], byte(1+rng.IntN(254))).String())
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	_, err = w.WriteTo(f)
	return addrs, err
}

// body is a batch of posthog-js-like $pageviews of a few thousand users.
func body(rng *rand.Rand, token string, n int, addrs []string, eventIP bool) ([]byte, error) {
	events := make([]map[string]any, n)
	for i := range events {
		props := map[string]any{
			"$current_url": "https://shop.example.com/pricing", "$host": "shop.example.com", "$pathname": "/pricing",
			"$browser": "Chrome", "$browser_version": 120 + rng.IntN(10), "$os": "Mac OS X", "$device_type": "Desktop",
			"$screen_height": 1080, "$screen_width": 1920, "$lib": "web", "$lib_version": "1.150.0",
			"$session_id": uuid.NewString(), "$referrer": "https://www.google.com/", "$referring_domain": "www.google.com",
		}
		if eventIP {
			props["$ip"] = addrs[rng.IntN(len(addrs))]
		}
		events[i] = map[string]any{"event": "$pageview", "distinct_id": fmt.Sprintf("user-%d", rng.IntN(5000)),
			"uuid": uuid.NewString(), "properties": props}
	}
	return json.Marshal(map[string]any{"api_key": token, "batch": events})
}

// send posts bodies on senders goroutines, body i from address ips[i].
func send(client *http.Client, url string, bodies [][]byte, ips []string, senders int) error {
	next := make(chan int, len(bodies))
	for i := range bodies {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(bodies[i]))
				if err == nil {
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("X-Forwarded-For", ips[i])
					var resp *http.Response
					if resp, err = client.Do(req); err == nil {
						b, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK {
							err = fmt.Errorf("status %d: %s", resp.StatusCode, b)
						}
					}
				}
				if err != nil {
					once.Do(func() { first = err })
				}
			}
		}()
	}
	wg.Wait()
	return first
}
