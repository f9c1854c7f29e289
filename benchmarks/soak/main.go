// Command soak runs the reliability soak: `insightd serve` (the binary
// -bin, started and restarted here) under -clients clients mixing event
// captures, cached insight retrieves, trends and funnels for -duration,
// killed with SIGKILL and restarted every -kill-every. Clients behave as
// the SDKs do: a capture that got no 200 is sent again, same uuids, until
// it does. At the end it stops the server, opens its data directory and
// checks that every acknowledged event is stored exactly once (no FINAL),
// and it reports requests by outcome, 5xx outside restarts, restart times
// and the server's peak memory, as markdown on stdout.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

type config struct {
	bin, dataDir, addr, chdbLib string
	clients                     int
	duration, killEvery         time.Duration
	// The PostgreSQL outage (outage.go): commands that stop and start
	// it, when after the start, and how long.
	pgStop, pgStart     string
	outageAt, outageFor time.Duration
	project             int64
	key, token          string
	batch               int
}

func main() {
	var c config
	flag.StringVar(&c.bin, "bin", "bin/insightd", "the insightd binary")
	flag.StringVar(&c.dataDir, "data-dir", "", "the server's data directory (migrated, with the project bootstrapped)")
	flag.StringVar(&c.addr, "addr", "127.0.0.1:8110", "address the server listens on")
	flag.StringVar(&c.chdbLib, "chdb-lib", os.Getenv("INSIGHTD_CHDB_LIB"), "path of libchdb.so")
	flag.IntVar(&c.clients, "clients", 32, "concurrent clients")
	flag.DurationVar(&c.duration, "duration", 10*time.Minute, "how long the clients run")
	flag.DurationVar(&c.killEvery, "kill-every", 2*time.Minute, "SIGKILL and restart the server this often")
	flag.StringVar(&c.pgStop, "pg-stop", "", "shell command stopping PostgreSQL for the outage (none: no outage)")
	flag.StringVar(&c.pgStart, "pg-start", "", "shell command starting PostgreSQL again")
	flag.DurationVar(&c.outageAt, "outage-at", 0, "when the PostgreSQL outage starts (0: at 45% of -duration)")
	flag.DurationVar(&c.outageFor, "outage-for", time.Minute, "how long PostgreSQL is stopped")
	flag.Int64Var(&c.project, "project", 0, "project id")
	flag.StringVar(&c.key, "key", "", "personal API key")
	flag.StringVar(&c.token, "token", "", "project API token")
	flag.IntVar(&c.batch, "batch", 20, "events per capture request")
	flag.Parse()
	if c.dataDir == "" || c.project == 0 || c.key == "" || c.token == "" {
		fmt.Fprintln(os.Stderr, "soak: -data-dir, -project, -key and -token are required")
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// server is the insightd process under test.
type server struct {
	c   config
	mu  sync.Mutex
	cmd *exec.Cmd
	// exited closes when cmd has ended.
	exited chan struct{}
	// restarting is set from a kill until the server is ready again: the
	// requests that fail meanwhile are the restart's.
	restarting atomic.Bool
	// outage is set while PostgreSQL is stopped (and a second after).
	outage    atomic.Bool
	outageLog string
	peakRSS   atomic.Int64
	restarts  []time.Duration
}

func (s *server) start() error {
	log, err := os.OpenFile(filepath.Join(s.c.dataDir, "serve.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.c.bin, "serve", "--migrate=false", "--addr", s.c.addr, "--data-dir", s.c.dataDir, "--chdb-lib", s.c.chdbLib)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); log.Close(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + s.c.addr + "/_ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("the server did not become ready in 2 minutes")
}

// kill ends the server with SIGKILL and starts it again.
func (s *server) kill() error {
	s.restarting.Store(true)
	defer s.restarting.Store(false)
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	start := time.Now()
	cmd.Process.Kill()
	<-exited
	if err := s.start(); err != nil {
		return err
	}
	s.restarts = append(s.restarts, time.Since(start))
	time.Sleep(time.Second) // requests answered just after are still the restart's
	return nil
}

// stop ends the server gracefully.
func (s *server) stop() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	cmd.Process.Signal(syscall.SIGTERM)
	<-exited
}

// watchMemory samples the server's resident memory.
func (s *server) watchMemory(ctx context.Context) {
	for ctx.Err() == nil {
		s.mu.Lock()
		pid := s.cmd.Process.Pid
		s.mu.Unlock()
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
					kb, _ := strconv.ParseInt(f[1], 10, 64)
					for {
						old := s.peakRSS.Load()
						if kb*1024 <= old || s.peakRSS.CompareAndSwap(old, kb*1024) {
							break
						}
					}
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tally counts requests by kind and outcome.
type tally struct {
	mu sync.Mutex
	// outcome: "2xx", "429", "4xx", "5xx", "5xx in restart", "no answer in restart", "no answer"
	n       map[string]map[string]int
	samples map[string][]time.Duration
}

func (t *tally) add(kind, outcome string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n[kind] == nil {
		t.n[kind] = map[string]int{}
	}
	t.n[kind][outcome]++
	if outcome == "2xx" {
		t.samples[kind] = append(t.samples[kind], d)
	}
}

type client struct {
	c     config
	s     *server
	t     *tally
	http  *http.Client
	saved int64
	// acked counts the events the server acknowledged; sum adds up
	// their fingerprints (see fingerprint).
	acked, sum *atomic.Uint64
}

// do sends one request and records its outcome; it reports whether the
// answer was a 200.
func (cl *client) do(kind, method, path string, body any, auth bool) bool {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+cl.c.addr+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth {
		req.Header.Set("Authorization", "Bearer "+cl.c.key)
	}
	restarting, outage := cl.s.restarting.Load(), cl.s.outage.Load()
	start := time.Now()
	resp, err := cl.http.Do(req)
	d := time.Since(start)
	restarting = restarting || cl.s.restarting.Load()
	outage = outage || cl.s.outage.Load()
	if err != nil {
		if restarting {
			cl.t.add(kind, "no answer in restart", d)
		} else {
			cl.t.add(kind, "no answer", d)
		}
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch {
	case resp.StatusCode < 300:
		cl.t.add(kind, "2xx", d)
		return true
	case resp.StatusCode == 429:
		cl.t.add(kind, "429", d)
	case resp.StatusCode < 500:
		cl.t.add(kind, "4xx", d)
	case resp.StatusCode == 503 && outage:
		cl.t.add(kind, "503 in outage", d)
	case restarting:
		cl.t.add(kind, "5xx in restart", d)
	default:
		cl.t.add(kind, "5xx", d)
	}
	return false
}

func (cl *client) capture(r *rand.Rand) {
	events := make([]map[string]any, cl.c.batch)
	ids := make([]string, cl.c.batch)
	for i := range events {
		ids[i] = uuid.Must(uuid.NewV7()).String()
		events[i] = map[string]any{"event": []string{"soak_view", "soak_click", "soak_buy"}[r.IntN(3)], "uuid": ids[i],
			"distinct_id": fmt.Sprintf("soak-%d", r.IntN(5000)), "properties": map[string]any{"plan": []string{"free", "pro"}[r.IntN(2)]}}
	}
	body := map[string]any{"api_key": cl.c.token, "batch": events}
	// As an SDK does: the same batch again until it is acknowledged.
	for attempt := 0; !cl.do("capture", "POST", "/batch/", body, false) && attempt < 3000; attempt++ {
		time.Sleep(time.Duration(min(attempt+1, 10)) * 100 * time.Millisecond)
	}
	for _, id := range ids {
		cl.sum.Add(fingerprint(id))
	}
	cl.acked.Add(uint64(len(ids)))
}

// fingerprint is the uuid's last 16 hex digits as a number; the sum of
// the fingerprints of a set of uuids (wrapping) tells sets apart, and the
// engine computes the same sum over the stored events.
func fingerprint(id string) uint64 {
	h := strings.ReplaceAll(id, "-", "")
	n, _ := strconv.ParseUint(h[16:], 16, 64)
	return n
}

const storedFingerprint = `sum(reinterpretAsUInt64(reverse(unhex(substring(replaceAll(toString(uuid), '-', ''), 17, 16)))))`

func (cl *client) run(ctx context.Context, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	for ctx.Err() == nil {
		switch x := r.IntN(100); {
		case x < 55:
			cl.capture(r)
		case x < 75:
			cl.do("cached retrieve", "GET", fmt.Sprintf("/api/projects/%d/insights/%d/", cl.c.project, cl.saved), nil, true)
		case x < 90:
			cl.do("trend", "POST", fmt.Sprintf("/api/projects/%d/insights/trend/", cl.c.project), map[string]any{
				"events":    []any{map[string]any{"id": "soak_view", "math": []string{"total", "dau"}[r.IntN(2)]}},
				"date_from": fmt.Sprintf("-%dh", 1+r.IntN(48)), "interval": "hour", "breakdown": "plan", "refresh": true}, true)
		default:
			cl.do("funnel", "POST", fmt.Sprintf("/api/projects/%d/insights/funnel/", cl.c.project), map[string]any{
				"events": []any{map[string]any{"id": "soak_view", "order": 0}, map[string]any{"id": "soak_click", "order": 1},
					map[string]any{"id": "soak_buy", "order": 2}},
				"date_from": fmt.Sprintf("-%dh", 1+r.IntN(48)), "funnel_window_interval": 1 + r.IntN(60),
				"funnel_window_interval_unit": "minute", "refresh": true}, true)
		}
	}
}

func run(c config) error {
	s := &server{c: c}
	if err := s.start(); err != nil {
		return err
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: c.clients * 2}}
	// The saved insight the cached retrieves read.
	b, _ := json.Marshal(map[string]any{"name": "soak", "filters": map[string]any{"insight": "TRENDS",
		"events": []any{map[string]any{"id": "soak_view"}}, "date_from": "-7d"}})
	req, _ := http.NewRequest("POST", fmt.Sprintf("http://%s/api/projects/%d/insights/", c.addr, c.project), bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	var saved struct{ ID int64 }
	json.NewDecoder(resp.Body).Decode(&saved)
	resp.Body.Close()
	if saved.ID == 0 {
		return fmt.Errorf("save an insight: %d", resp.StatusCode)
	}

	ctx, stop := context.WithTimeout(context.Background(), c.duration)
	defer stop()
	go s.watchMemory(ctx)
	t := &tally{n: map[string]map[string]int{}, samples: map[string][]time.Duration{}}
	var acked, sum atomic.Uint64
	var wg sync.WaitGroup
	start := time.Now()
	for i := range c.clients {
		cl := &client{c: c, s: s, t: t, http: hc, saved: saved.ID, acked: &acked, sum: &sum}
		wg.Go(func() { cl.run(ctx, uint64(i)) })
	}
	kills := 0
	outageDone := s.scheduleOutage(ctx)
	ticker := time.NewTicker(c.killEvery)
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-ticker.C:
			if time.Until(start.Add(c.duration)) < 10*time.Second || s.nearOutage(start) {
				continue
			}
			if err := s.kill(); err != nil {
				return err
			}
			kills++
		}
	}
	ticker.Stop()
	wg.Wait()
	if err := <-outageDone; err != nil {
		return err
	}
	elapsed := time.Since(start)
	s.stop()

	// Every acknowledged event stored once, as an analysis counts now.
	e, err := olap.OpenEmbedded(olap.Config{ChDBLib: c.chdbLib, DataDir: filepath.Join(c.dataDir, "olap"), QueryTimeout: 10 * time.Minute, Connections: 2},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer e.Close()
	rows, err := e.Query(context.Background(), querybuilder.Statement{
		SQL: `SELECT (SELECT count() FROM events WHERE team_id = {team:Int64}),
    uniqExact(uuid), ` + storedFingerprint + `
FROM (SELECT DISTINCT uuid FROM events WHERE team_id = {team:Int64})`,
		Params: map[string]any{"team": c.project}})
	if err != nil {
		return err
	}
	num := func(v any) uint64 { n, _ := strconv.ParseUint(fmt.Sprint(v), 10, 64); return n }
	total, distinct, storedSum := num(rows.Data[0][0]), num(rows.Data[0][1]), num(rows.Data[0][2])
	sameSet := distinct == acked.Load() && storedSum == sum.Load()

	fmt.Printf("%d clients for %s, the server killed (SIGKILL) and restarted %d times.\n\n", c.clients, elapsed.Round(time.Second), kills)
	fmt.Printf("| events acknowledged | rows stored | distinct uuids stored | stored twice | the acknowledged set |\n|---|---|---|---|---|\n")
	fmt.Printf("| %d | %d | %d | %d | %s |\n\n", acked.Load(), total, distinct, total-distinct, map[bool]string{true: "stored, exactly", false: "DIFFERS"}[sameSet])
	fmt.Print(s.outageLog)
	fmt.Printf("| requests | 2xx | p50 ms | p99 ms | 429 | 4xx | 503 in outage | 5xx | 5xx in restart | no answer | no answer in restart |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	kinds := make([]string, 0, len(t.n))
	for k := range t.n {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		n := t.n[k]
		ds := t.samples[k]
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		q := func(p float64) float64 {
			if len(ds) == 0 {
				return 0
			}
			return float64(ds[int(p*float64(len(ds)-1))].Microseconds()) / 1000
		}
		fmt.Printf("| %s | %d | %.1f | %.1f | %d | %d | %d | %d | %d | %d | %d |\n", k, n["2xx"], q(0.5), q(0.99), n["429"], n["4xx"], n["503 in outage"], n["5xx"],
			n["5xx in restart"], n["no answer"], n["no answer in restart"])
	}
	fmt.Printf("\nRestarts (SIGKILL to ready):")
	for _, d := range s.restarts {
		fmt.Printf(" %s", d.Round(10*time.Millisecond))
	}
	fmt.Printf("\n\nServer peak resident memory: %d MiB.\n", s.peakRSS.Load()>>20)
	var bad []string
	if total != distinct {
		bad = append(bad, fmt.Sprintf("%d events stored twice", total-distinct))
	}
	if !sameSet {
		bad = append(bad, fmt.Sprintf("the stored events (%d) are not the %d acknowledged", distinct, acked.Load()))
	}
	for _, k := range kinds {
		if n := t.n[k]["5xx"] + t.n[k]["no answer"]; n > 0 {
			bad = append(bad, fmt.Sprintf("%d %s requests failed outside restarts", n, k))
		}
		if n := t.n[k]["503 in outage"]; n > 0 && k != "write" {
			bad = append(bad, fmt.Sprintf("%d %s requests answered 503 in the PostgreSQL outage", n, k))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}
