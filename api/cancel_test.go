package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/metadata/metadatatest"
	"github.com/insightd/insightd/querybuilder"
	"github.com/insightd/insightd/querybuilder/reference"
)

// endless is a server whose analyses read an events "table" that never
// ends: a view generating funnel events from numbers(1e12), so that every
// funnel runs, using CPU, until it is stopped.
type endless struct {
	s       *Server
	srv     *httptest.Server
	project int64
	key     string
	token   string
}

func newEndless(t *testing.T, timeout time.Duration) *endless {
	t.Helper()
	cfg := testConfig()
	store := metadatatest.NewStore(t)
	boot, err := store.Bootstrap(context.Background(), "endless@example.com", "Endless", "Endless")
	if err != nil {
		t.Fatal(err)
	}
	view := fmt.Sprintf("endless_events_%d", boot.ProjectID)
	person := "toUUID(concat('00000000-0000-4000-8000-', leftPad(toString(intDiv(number, 3) % 100000), 12, '0')))"
	err = engine.Exec(context.Background(), querybuilder.Statement{SQL: `CREATE OR REPLACE VIEW ` + view + ` AS
SELECT generateUUIDv4(number) AS uuid, toInt64(` + strconv.FormatInt(boot.ProjectID, 10) + `) AS team_id,
    ['a', 'b', 'c'][number % 3 + 1] AS event, concat('p', toString(intDiv(number, 3) % 100000)) AS distinct_id,
    ` + person + ` AS person_id,
    now64(6, 'UTC') - toIntervalMicrosecond(86400000000 - number % 86400000000) AS timestamp,
    '{}' AS properties, now64(6, 'UTC') AS created_at,
    '' AS mat_current_url, '' AS mat_pathname, '' AS mat_screen_name, '' AS mat_session_id,
    '' AS mat_browser, '' AS mat_os, '' AS mat_device_type,
    '' AS mat_group_0, '' AS mat_group_1, '' AS mat_group_2, '' AS mat_group_3, '' AS mat_group_4
FROM numbers(1000000000000) WHERE cityHash64(number) % 64 = 0`})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Exec(context.Background(), querybuilder.Statement{SQL: "DROP VIEW IF EXISTS " + view}) })
	cfg.Schema.Events = view
	cfg.Limits.MaxExecutionTime = int(timeout.Seconds())
	s := New(cfg, quietLog(), store, engine)
	t.Cleanup(s.writer.Close)
	srv := validatedServer(t, s.Handler())
	t.Cleanup(srv.Close)
	return &endless{s: s, srv: srv, project: boot.ProjectID, key: boot.PersonalAPIKey, token: boot.ProjectAPIToken}
}

// funnel starts a funnel under clientQueryID (window days varies the
// request, so that concurrent ones are separate computations).
func (e *endless) funnel(ctx context.Context, clientQueryID string, windowDays int) (*http.Response, error) {
	body, _ := json.Marshal(map[string]any{
		"insight": "FUNNELS", "client_query_id": clientQueryID, "date_from": "-2d",
		"funnel_window_days": windowDays,
		"events":             []any{map[string]any{"id": "a", "order": 0}, map[string]any{"id": "b", "order": 1}, map[string]any{"id": "c", "order": 2}},
	})
	req, _ := http.NewRequestWithContext(ctx, "POST", fmt.Sprintf("%s/api/projects/%d/insights/funnel/", e.srv.URL, e.project), bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

// running counts the engine's statements of this server's project.
func (e *endless) running(t *testing.T) int {
	t.Helper()
	rows, err := engine.Query(context.Background(), querybuilder.Statement{
		SQL:    "SELECT count() FROM system.processes WHERE Settings['log_comment'] LIKE {tag:String}",
		Params: map[string]any{"tag": fmt.Sprintf("insightd:p%d\\_%%", e.project)},
	})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(fmt.Sprint(rows.Data[0][0]))
	return n
}

// waitRunning waits until n of the project's statements run.
func (e *endless) waitRunning(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.running(t) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d statements running after 10s, want %d", e.running(t), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processCPU is this process's user and system CPU time so far (the
// embedded engine runs in it).
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// stoppedWithin checks that the project's statements are gone from the
// engine within a second of now, and that the process then stops using
// CPU (less than a fifth of one core over the next second).
func (e *endless) stoppedWithin(t *testing.T, since time.Time) {
	t.Helper()
	for e.running(t) > 0 {
		if time.Since(since) > time.Second {
			t.Fatalf("%d statements still running %s after the stop", e.running(t), time.Since(since).Round(time.Millisecond))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("stopped %s after the stop", time.Since(since).Round(time.Millisecond))
	// A statement still running uses a core every second; the engine's
	// background merges of what earlier tests inserted may take one of
	// the seconds after the stop, never three in a row.
	var used []time.Duration
	for range 3 {
		before := processCPU(t)
		time.Sleep(time.Second)
		if u := processCPU(t) - before; u <= 200*time.Millisecond {
			return
		} else {
			used = append(used, u)
		}
	}
	t.Fatalf("the process used %v of CPU in each of the three seconds after the stop", used)
}

func TestAFunnelCancelledThroughInsightsCancelStops(t *testing.T) {
	e := newEndless(t, time.Minute)
	done := make(chan int, 1)
	go func() {
		resp, err := e.funnel(context.Background(), "cancel-me", 1)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	e.waitRunning(t, 1)
	// The funnel is running once it has used CPU; on a loaded machine
	// that can take longer than its share of 300ms would suggest.
	before, since := processCPU(t), time.Now()
	for used := time.Duration(0); used < 100*time.Millisecond; used = processCPU(t) - before {
		if time.Since(since) > 10*time.Second {
			t.Fatalf("the endless funnel used only %s of CPU in 10s: it is not running", used)
		}
		time.Sleep(50 * time.Millisecond)
	}
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/projects/%d/insights/cancel/", e.srv.URL, e.project), strings.NewReader(`{"client_query_id": "cancel-me"}`))
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	stop := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || body["cancelled"] != true {
		t.Fatalf("cancel: %d %v", resp.StatusCode, body)
	}
	e.stoppedWithin(t, stop)
	select {
	case code := <-done:
		if code < 400 {
			t.Fatalf("the cancelled funnel answered %d", code)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the cancelled funnel's request did not end")
	}
}

func TestAFunnelWhoseClientHangsUpStops(t *testing.T) {
	e := newEndless(t, time.Minute)
	ctx, hangUp := context.WithCancel(context.Background())
	go func() {
		if resp, err := e.funnel(ctx, "hang-up", 1); err == nil {
			resp.Body.Close()
		}
	}()
	e.waitRunning(t, 1)
	stop := time.Now()
	hangUp()
	e.stoppedWithin(t, stop)
}

func TestAFunnelPastTheQueryTimeoutStops(t *testing.T) {
	const timeout = 2 * time.Second
	e := newEndless(t, timeout)
	start := time.Now()
	resp, err := e.funnel(context.Background(), "too-long", 1)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	took := time.Since(start)
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("a funnel past the timeout answered %d, want 504", resp.StatusCode)
	}
	if took > timeout+time.Second {
		t.Fatalf("a funnel with a %s timeout answered after %s", timeout, took.Round(time.Millisecond))
	}
	e.stoppedWithin(t, start.Add(timeout))
}

// Eight funnels abandoned by their clients hold nothing: a trend, a
// capture and readiness right after answer within a second.
func TestAbandonedFunnelsDoNotDelayOtherRequests(t *testing.T) {
	e := newEndless(t, time.Minute)
	ctx, hangUp := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if resp, err := e.funnel(ctx, fmt.Sprintf("abandoned-%d", i), i+1); err == nil {
				resp.Body.Close()
			}
		})
	}
	e.waitRunning(t, 2) // the rest wait for the project's turn
	hangUp()
	stop := time.Now()
	// The trend is another project's, on a server reading the real
	// events table through the same engine.
	other := newFunnelEnv(t)
	op := other.project(t, []reference.Event{analysistest.Fev("u1", "x", 0)})
	osrv := httptest.NewServer(other.h)
	defer osrv.Close()
	type probe struct {
		name, method, url, body, key string
	}
	probes := []probe{
		{"a trend", "GET", fmt.Sprintf("%s/api/projects/%d/insights/trend/?events=%s", osrv.URL, op.id, `[{"id":"x"}]`), "", op.key},
		{"a capture", "POST", e.srv.URL + "/capture/", fmt.Sprintf(`{"api_key": %q, "event": "x", "distinct_id": "d"}`, e.token), ""},
		{"readiness", "GET", e.srv.URL + "/_ready", "", ""},
	}
	for _, p := range probes {
		wg.Go(func() {
			req, _ := http.NewRequest(p.method, strings.ReplaceAll(p.url, `"`, "%22"), strings.NewReader(p.body))
			if p.key != "" {
				req.Header.Set("Authorization", "Bearer "+p.key)
			}
			if p.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			start := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("%s: %v", p.name, err)
				return
			}
			resp.Body.Close()
			if took := time.Since(start); resp.StatusCode != http.StatusOK || took > time.Second {
				t.Errorf("%s after abandoned funnels: %d in %s", p.name, resp.StatusCode, took.Round(time.Millisecond))
			}
		})
	}
	wg.Wait()
	e.stoppedWithin(t, stop)
}

// A project running as many analyses as it may gets 429 with Retry-After
// for one more once the queueing time passes; another project's analysis
// runs meanwhile.
func TestAProjectPastItsShareOfTheEngineGets429(t *testing.T) {
	e := newEndless(t, time.Minute)
	ctx, hangUp := context.WithCancel(context.Background())
	defer hangUp()
	for i := range 2 { // the test engine's 4 connections: 2 per project
		go func() {
			if resp, err := e.funnel(ctx, fmt.Sprintf("hold-%d", i), i+1); err == nil {
				resp.Body.Close()
			}
		}()
	}
	e.waitRunning(t, 2)
	other := newFunnelEnv(t)
	op := other.project(t, []reference.Event{analysistest.Fev("u1", "x", 0)})
	start := time.Now()
	if st, _ := op.Ask(t, "POST", "trend", map[string]any{"events": []any{map[string]any{"id": "x"}}}); st != 200 || time.Since(start) > time.Second {
		t.Fatalf("another project's trend: %d after %s", st, time.Since(start))
	}
	start = time.Now()
	resp, err := e.funnel(context.Background(), "one-more", 9)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || body["code"] != "too_many_analyses" {
		t.Fatalf("one analysis too many: %d, Retry-After %q, %v", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("refused after %s", d)
	}
}
