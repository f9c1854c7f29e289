package api

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/insightd/insightd/api/metrics"
	"github.com/insightd/insightd/metadata/metadatatest"
)

// scrape reads GET /metrics into series: the text before each sample's
// value (its name and labels, as the exposition format writes them) to
// the value.
func scrape(t *testing.T, h http.Handler) map[string]float64 {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(w.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

func TestMetricsCountTheTrafficTheServerSaw(t *testing.T) {
	cfg := testConfig()
	cfg.Metrics = metrics.New()
	s := New(cfg, quietLog(), metadatatest.NewStore(t), engine)
	t.Cleanup(s.writer.Close)
	b, err := s.store.Bootstrap(context.Background(), "metrics@example.com", "Metrics", "Web")
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	capture := func(path string, body obj) int {
		t.Helper()
		f := &captureFixture{h: h}
		code, _ := f.send(t, req{path: path, body: mustJSON(t, body)})
		return code
	}
	before := scrape(t, h)

	first := uuid.NewString()
	if code := capture("/batch/", obj{"api_key": b.ProjectAPIToken, "batch": []obj{
		{"event": "$pageview", "distinct_id": "u1", "uuid": first, "timestamp": "2026-03-05T12:00:00Z"},
		{"event": "$pageview", "distinct_id": "u2", "uuid": uuid.NewString(), "timestamp": "2026-03-06T12:00:00Z"},
	}}); code != 200 {
		t.Fatalf("the batch: %d", code)
	}
	// The first event again, as a client retrying after a timeout sends it.
	if code := capture("/capture/", obj{"api_key": b.ProjectAPIToken, "event": "$pageview", "distinct_id": "u1",
		"uuid": first, "timestamp": "2026-03-05T12:00:00Z"}); code != 200 {
		t.Fatalf("the retried event: %d", code)
	}
	if code := capture("/e/", obj{"api_key": b.ProjectAPIToken, "distinct_id": "u3"}); code != 400 {
		t.Fatalf("an event without a name: %d, want 400", code)
	}
	afterCapture := scrape(t, h)

	trend := fmt.Sprintf("/api/projects/%d/insights/trend/", b.ProjectID)
	filter := map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "2026-03-05", "date_to": "2026-03-07"}
	for i, cached := range []bool{false, true} {
		st, body := call(t, h, "POST", trend, b.PersonalAPIKey, filter)
		if st != 200 || body["is_cached"] != cached || fmt.Sprint(dataOf(t, body)) != "[1 1 0]" {
			t.Fatalf("trend %d: %d %v", i, st, body)
		}
		if i == 0 {
			afterCapture = scrape(t, h) // what the miss read, apart from the hit
		}
	}
	if st, _ := call(t, h, "GET", "/api/no/such/route", b.PersonalAPIKey, nil); st != 404 {
		t.Fatalf("an unknown route: %d", st)
	}
	after := scrape(t, h)
	moved := func(series string) float64 { return after[series] - before[series] }

	t.Run("ingestion counts accepted, deduplicated and rejected events", func(t *testing.T) {
		for series, want := range map[string]float64{
			`insightd_ingest_events_total{outcome="accepted"}`:     2,
			`insightd_ingest_events_total{outcome="deduplicated"}`: 1,
			`insightd_ingest_events_total{outcome="rejected"}`:     1,
			`insightd_ingest_events_total{outcome="failed"}`:       0,
			// Two flushes reached the engine: the batch's two events, then
			// the retry's none (found stored already).
			`insightd_ingest_flush_events_count`:           2,
			`insightd_ingest_flush_events_sum`:             2,
			`insightd_ingest_flush_duration_seconds_count`: 2,
		} {
			if got := moved(series); got != want {
				t.Errorf("%s moved by %v, want %v", series, got, want)
			}
		}
		if q, ok := after["insightd_ingest_writer_queue_events"]; !ok || q != 0 {
			t.Errorf("writer queue after every write was answered: %v (present %v)", q, ok)
		}
	})
	t.Run("the analysis is a miss then a hit, timed by kind and outcome", func(t *testing.T) {
		for series, want := range map[string]float64{
			`insightd_analysis_duration_seconds_count{cache="miss",kind="trends"}`:   1,
			`insightd_analysis_duration_seconds_count{cache="hit",kind="trends"}`:    1,
			`insightd_analysis_duration_seconds_count{cache="shared",kind="trends"}`: 0,
		} {
			if got := moved(series); got != want {
				t.Errorf("%s moved by %v, want %v", series, got, want)
			}
		}
	})
	t.Run("the engine's statements are counted by what they read, and none is left under way", func(t *testing.T) {
		n := afterCapture["insightd_engine_statement_rows_read_count"] - before["insightd_engine_statement_rows_read_count"]
		rows := afterCapture["insightd_engine_statement_rows_read_sum"] - before["insightd_engine_statement_rows_read_sum"]
		bytes := afterCapture["insightd_engine_statement_bytes_read_sum"] - before["insightd_engine_statement_bytes_read_sum"]
		t.Logf("the computed trend: %v statements read %v rows, %v bytes", n, rows, bytes)
		// The trend read the project's two stored events at least.
		if n < 1 || rows < 2 || bytes <= 0 {
			t.Errorf("the computed trend: %v statements read %v rows, %v bytes", n, rows, bytes)
		}
		if hit := after["insightd_engine_statement_rows_read_count"] - afterCapture["insightd_engine_statement_rows_read_count"]; hit != 0 {
			t.Errorf("the cached answer ran %v statements", hit)
		}
		for _, g := range []string{"insightd_engine_statements_running", "insightd_engine_statements_queued"} {
			if v, ok := after[g]; !ok || v != 0 {
				t.Errorf("%s = %v (present %v), want 0", g, v, ok)
			}
		}
	})
	t.Run("requests are timed by route template and status", func(t *testing.T) {
		route := `/api/projects/:project_id/insights/trend`
		for series, want := range map[string]float64{
			`insightd_http_request_duration_seconds_count{method="POST",route="/batch",status="200"}`:        1,
			`insightd_http_request_duration_seconds_count{method="POST",route="/capture",status="200"}`:      1,
			`insightd_http_request_duration_seconds_count{method="POST",route="/e",status="400"}`:            1,
			`insightd_http_request_duration_seconds_count{method="POST",route="` + route + `",status="200"}`: 2,
			`insightd_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}`:      1,
		} {
			if got := moved(series); got != want {
				t.Errorf("%s moved by %v, want %v", series, got, want)
			}
		}
		for k := range after {
			if strings.Contains(k, fmt.Sprintf("/projects/%d/", b.ProjectID)) || strings.Contains(k, "/no/such") {
				t.Errorf("a series names a raw path: %s", k)
			}
		}
	})
	t.Run("the PostgreSQL pool and Go's runtime are reported", func(t *testing.T) {
		for _, series := range []string{`insightd_postgres_connections{state="in_use"}`, `insightd_postgres_connections{state="idle"}`,
			"insightd_postgres_connections_max", "insightd_postgres_wait_total", "go_goroutines", "process_cpu_seconds_total"} {
			if _, ok := after[series]; !ok {
				t.Errorf("no %s", series)
			}
		}
		if after["go_goroutines"] < 1 || after[`insightd_postgres_connections{state="idle"}`]+after[`insightd_postgres_connections{state="in_use"}`] < 1 {
			t.Errorf("goroutines %v, PostgreSQL connections %v idle %v in use", after["go_goroutines"],
				after[`insightd_postgres_connections{state="idle"}`], after[`insightd_postgres_connections{state="in_use"}`])
		}
	})
}

func TestWithoutMetricsThereIsNoMetricsRoute(t *testing.T) {
	h := newServer(t, quietLog()).Handler()
	w, body := do(t, h, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	wantError(t, w, body, http.StatusNotFound, "not_found")
}
