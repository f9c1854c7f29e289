package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// get sends an authenticated GET to the endless server and gives the
// status and the decoded body.
func (e *endless) get(ctx context.Context, path string) (int, map[string]any, http.Header, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body, resp.Header, nil
}

// hold starts n endless funnels of e that run until hangUp.
func (e *endless) hold(ctx context.Context, n int, prefix string) {
	for i := range n {
		go func() {
			if resp, err := e.funnel(ctx, fmt.Sprintf("%s-%d", prefix, i), i+1); err == nil {
				resp.Body.Close()
			}
		}()
	}
}

// cancelQuery posts insights/cancel for clientQueryID.
func (e *endless) cancelQuery(t *testing.T, clientQueryID string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/projects/%d/insights/cancel/", e.srv.URL, e.project),
		strings.NewReader(fmt.Sprintf(`{"client_query_id": %q}`, clientQueryID)))
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// probeCaptureAndReadiness checks that a capture and /_ready answer 200
// within their bounds while the engine runs endless statements: /_ready
// within a second, a capture (an insert that shares the 2 cores with the
// endless statements and waits for its group commit) within 3s. Waiting
// behind the statements for a connection would take their whole minute.
func probeCaptureAndReadiness(t *testing.T, e *endless) {
	t.Helper()
	var wg sync.WaitGroup
	for _, p := range []struct {
		name, method, path, body string
		bound                    time.Duration
	}{
		{"a capture", "POST", "/capture/", fmt.Sprintf(`{"api_key": %q, "event": "x", "distinct_id": "d"}`, e.token), 3 * time.Second},
		{"readiness", "GET", "/_ready", "", time.Second},
	} {
		wg.Go(func() {
			req, _ := http.NewRequest(p.method, e.srv.URL+p.path, strings.NewReader(p.body))
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
			if took := time.Since(start); resp.StatusCode != http.StatusOK || took > p.bound {
				t.Errorf("%s: %d in %s", p.name, resp.StatusCode, took.Round(time.Millisecond))
			}
		})
	}
	wg.Wait()
}

// Events lists and property values read the events table as analyses
// do: a project's slow ones run in its share of the engine, under the
// engine limits and a query id, and never take the connections capture
// and readiness keep.
func TestSlowEventListsOfAProjectDoNotDelayCaptureOrReadiness(t *testing.T) {
	e := newEndless(t, time.Minute)
	ctx, hangUp := context.WithCancel(context.Background())
	codes := make(chan int, 6)
	for i := range 6 {
		path := fmt.Sprintf("/api/projects/%d/events/?limit=%d", e.project, 10+i)
		if i%2 == 1 {
			path = fmt.Sprintf("/api/projects/%d/events/values/?key=k%d", e.project, i)
		}
		go func() {
			st, _, _, _ := e.get(ctx, path)
			codes <- st
		}()
	}
	e.waitRunning(t, 2) // tagged with the project: they are its statements
	time.Sleep(200 * time.Millisecond)
	if n := e.running(t); n != 2 {
		t.Fatalf("%d of the project's lists run at once, want its share of 2", n)
	}
	rows, err := engine.Query(context.Background(), querybuilder.Statement{
		SQL:    "SELECT count() FROM system.processes WHERE Settings['log_comment'] LIKE {tag:String} AND Settings['max_execution_time'] = '60'",
		Params: map[string]any{"tag": fmt.Sprintf("insightd:p%d\\_%%", e.project)}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rows.Data[0][0]) != "2" {
		t.Fatalf("%v of the running lists have the server's max_execution_time", rows.Data[0][0])
	}
	probeCaptureAndReadiness(t, e)
	stop := time.Now()
	hangUp()
	e.stoppedWithin(t, stop)
}

// Two projects holding every engine connection: a third project's
// analysis, which has its own project's slot, waits only the queueing
// time for a connection, then gets 429 with Retry-After.
func TestAnAnalysisWaitingForAConnectionGets429AfterTheQueueingTime(t *testing.T) {
	a, b, c := newEndless(t, time.Minute), newEndless(t, time.Minute), newEndless(t, time.Minute)
	ctx, hangUp := context.WithCancel(context.Background())
	defer hangUp()
	a.hold(ctx, 2, "a")
	b.hold(ctx, 2, "b")
	a.waitRunning(t, 2)
	b.waitRunning(t, 2)
	start := time.Now()
	resp, err := c.funnel(context.Background(), "third", 1)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	took := time.Since(start)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || body["code"] != "too_many_analyses" {
		t.Fatalf("the third project's funnel: %d, Retry-After %q, %v", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if took < 2*time.Second || took > 5*time.Second {
		t.Fatalf("refused after %s, want the test engine's 3s queueing time", took.Round(time.Millisecond))
	}
	probeCaptureAndReadiness(t, c)
}

// A funnel queued behind its project's share when insights/cancel names
// it never starts: the cancel answers cancelled true and the funnel 499
// at once; an id cancelled before its funnel arrives refuses it too.
func TestACancelledQueuedFunnelNeverStarts(t *testing.T) {
	e := newEndless(t, time.Minute)
	ctx, hangUp := context.WithCancel(context.Background())
	defer hangUp()
	e.hold(ctx, 2, "hold")
	e.waitRunning(t, 2)
	answered := make(chan [2]any, 1)
	go func() {
		start := time.Now()
		resp, err := e.funnel(context.Background(), "queued-one", 7)
		if err != nil {
			answered <- [2]any{0, err}
			return
		}
		resp.Body.Close()
		answered <- [2]any{resp.StatusCode, time.Since(start)}
	}()
	time.Sleep(500 * time.Millisecond) // queued: the project's two slots are held
	if n := e.running(t); n != 2 {
		t.Fatalf("%d statements run, want the 2 held", n)
	}
	st, body := e.cancelQuery(t, "queued-one")
	if st != http.StatusCreated || body["cancelled"] != true {
		t.Fatalf("cancel of a queued funnel: %d %v", st, body)
	}
	select {
	case got := <-answered:
		if got[0] != 499 {
			t.Fatalf("the cancelled queued funnel answered %v", got)
		}
	case <-time.After(time.Second):
		t.Fatal("the cancelled queued funnel still waits a second after the cancel")
	}
	if n := e.running(t); n != 2 {
		t.Fatalf("%d statements run after the cancel, want the 2 held", n)
	}

	st, body = e.cancelQuery(t, "not-yet-sent")
	if st != http.StatusCreated || body["cancelled"] != false {
		t.Fatalf("cancel of a funnel not sent yet: %d %v", st, body)
	}
	start := time.Now()
	resp, err := e.funnel(context.Background(), "not-yet-sent", 8)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 499 || time.Since(start) > time.Second {
		t.Fatalf("a funnel cancelled before it was sent: %d after %s", resp.StatusCode, time.Since(start))
	}
	if st, body = e.cancelQuery(t, "not-yet-sent"); body["cancelled"] != true {
		t.Fatalf("cancel again after the refused funnel: %d %v", st, body)
	}
}

// openEngineWithTimeout opens a second embedded engine on the test
// engine's data directory with its own query timeout (chDB allows one
// directory per process, any number of connections to it).
func openEngineWithTimeout(t *testing.T, timeout time.Duration) olap.Engine {
	t.Helper()
	rows, err := engine.Query(context.Background(), querybuilder.Statement{SQL: "SELECT getServerSetting('path')"})
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := rows.Data[0][0].(string)
	e, err := olap.OpenEmbedded(olap.Config{ChDBLib: os.Getenv("INSIGHTD_CHDB_LIB"), DataDir: strings.TrimSuffix(dir, "/"),
		QueryTimeout: timeout, Connections: 2, QueueWait: 3 * time.Second}, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// The server's query timeout (INSIGHTD_QUERY_TIMEOUT), not the engine's
// max_execution_time (a minute here), stops a funnel that never ends:
// 504 within a second of the timeout, nothing left in system.processes,
// the CPU flat after.
func TestTheConfiguredQueryTimeoutStopsAFunnelThroughTheAPI(t *testing.T) {
	const timeout = time.Second
	base := newEndless(t, time.Minute)
	s := New(base.s.cfg, quietLog(), base.s.store, openEngineWithTimeout(t, timeout))
	t.Cleanup(s.writer.Close)
	srv := validatedServer(t, s.Handler())
	t.Cleanup(srv.Close)
	e := &endless{s: s, srv: srv, project: base.project, key: base.key, token: base.token}
	if e.s.cfg.Limits.MaxExecutionTime != 60 {
		t.Fatalf("max_execution_time %d: the engine's own limit must not be what stops the funnel", e.s.cfg.Limits.MaxExecutionTime)
	}
	start := time.Now()
	resp, err := e.funnel(context.Background(), "past-the-timeout", 1)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	took := time.Since(start)
	if resp.StatusCode != http.StatusGatewayTimeout || body["code"] != "query_timeout" {
		t.Fatalf("a funnel past the server's query timeout answered %d %v", resp.StatusCode, body)
	}
	if took > timeout+time.Second {
		t.Fatalf("a funnel with a %s query timeout answered after %s", timeout, took.Round(time.Millisecond))
	}
	e.stoppedWithin(t, start.Add(timeout))
}
