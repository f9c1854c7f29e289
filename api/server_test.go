package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/metadata/metadatatest"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/olaptest"
	"github.com/insightd/insightd/querybuilder"
)

// engine is the embedded ClickHouse shared by this package's tests (chDB
// keeps one data directory per process).
var engine olap.Engine

// Tests that only compare answers call t.Parallel(), so they overlap one
// another's waits on PostgreSQL and the engine; tests that time, count the
// process's CPU or memory, or stop PostgreSQL stay serial, and Go runs the
// serial ones first, alone.
func TestMain(m *testing.M) {
	olaptest.Main(m, time.Minute, func(e *olap.Embedded) { engine = e })
}

// useEngine runs the server's statements on e (a wrapper of the shared
// engine that counts, delays or fails them).
func (s *Server) useEngine(e olap.Engine) {
	s.engine = e
	s.analysis.SetEngine(e)
}

// useLimits runs the server's statements under l.
func (s *Server) useLimits(l querybuilder.Limits) {
	s.cfg.Limits = l
	s.analysis.SetLimits(l)
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testConfig() Config {
	// Tests of long analyses read numbers() past any rows-read budget to
	// take their time; the budgets' own tests set them (query_budget_test.go).
	l := querybuilder.DefaultLimits()
	l.MaxRowsToRead, l.MaxRowsInJoin, l.MaxBytesInJoin = 0, 0, 0
	return Config{Addr: "127.0.0.1:0", BodyLimit: 1 << 20, ShutdownTimeout: 5 * time.Second,
		Limits: l, Schema: querybuilder.DefaultSchema()}
}

// newServer builds a server on a fresh database with probe routes:
// /test/body reads the body, /test/slow answers after the given time,
// /test/panic panics.
func newServer(t *testing.T, log *slog.Logger) *Server {
	t.Helper()
	s := New(testConfig(), log, metadatatest.NewStore(t), engine)
	s.extraRoutes = func(r *gin.Engine) {
		r.POST("/test/body", func(c *gin.Context) {
			b, err := io.ReadAll(c.Request.Body)
			if err != nil {
				httpx.WriteError(c, err)
				return
			}
			c.JSON(http.StatusOK, gin.H{"bytes": len(b)})
		})
		r.GET("/test/slow", func(c *gin.Context) {
			d, _ := time.ParseDuration(c.Query("for"))
			time.Sleep(d)
			c.JSON(http.StatusOK, gin.H{"slept": d.String()})
		})
		r.GET("/test/panic", func(c *gin.Context) { panic("boom") })
	}
	return s
}

func do(t *testing.T, h http.Handler, req *http.Request) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	var body map[string]any
	if w.Body.Len() > 0 {
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s %s: body is not JSON: %q", req.Method, req.URL, w.Body.String())
		}
	}
	return w, body
}

// wantError checks the one error body shape.
func wantError(t *testing.T, w *httptest.ResponseRecorder, body map[string]any, status int, code string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d (body %v)", w.Code, status, body)
	}
	for _, k := range []string{"type", "code", "detail", "attr"} {
		if _, ok := body[k]; !ok {
			t.Errorf("error body lacks %q: %v", k, body)
		}
	}
	if body["code"] != code {
		t.Errorf("code %v, want %s", body["code"], code)
	}
}

func TestHealthAndReadinessAgainstRealServices(t *testing.T) {
	h := validated(t, newServer(t, quietLog()).Handler())
	for _, path := range []string{"/_health", "/_health/", "/_ready", "/_ready/"} {
		t.Run(path+" answers 200 without a redirect", func(t *testing.T) {
			w, body := do(t, h, httptest.NewRequest("GET", path, nil))
			if w.Code != http.StatusOK || body["status"] != "ok" {
				t.Fatalf("status %d body %v", w.Code, body)
			}
		})
	}
	w, body := do(t, h, httptest.NewRequest("GET", "/_ready", nil))
	checks, _ := body["checks"].(map[string]any)
	if checks["postgres"] != "ok" || checks["clickhouse"] != "ok" || body["clickhouse_backend"] != "chdb" {
		t.Fatalf("ready body %v (%d)", body, w.Code)
	}
}

func TestReadinessFailsWhenPostgresIsGone(t *testing.T) {
	s := newServer(t, quietLog())
	s.store.Close()
	w, body := do(t, validated(t, s.Handler()), httptest.NewRequest("GET", "/_ready", nil))
	wantError(t, w, body, http.StatusServiceUnavailable, "not_ready")
	if checks, _ := body["checks"].(map[string]any); checks["postgres"] == "ok" {
		t.Fatalf("postgres reported ok after close: %v", body)
	}
}

func TestUnknownRoutesAndMethodsGetTheErrorBody(t *testing.T) {
	h := validated(t, newServer(t, quietLog()).Handler())
	w, body := do(t, h, httptest.NewRequest("GET", "/api/nothing/here/", nil))
	wantError(t, w, body, http.StatusNotFound, "not_found")
	w, body = do(t, h, httptest.NewRequest("DELETE", "/_health", nil))
	wantError(t, w, body, http.StatusMethodNotAllowed, "method_not_allowed")
}

func TestEveryResponseCarriesARequestID(t *testing.T) {
	h := validated(t, newServer(t, quietLog()).Handler())
	w, _ := do(t, h, httptest.NewRequest("GET", "/_health", nil))
	if len(w.Header().Get("X-Request-Id")) < 16 {
		t.Fatalf("no generated request id: %q", w.Header().Get("X-Request-Id"))
	}
	req := httptest.NewRequest("GET", "/_health", nil)
	req.Header.Set("X-Request-Id", "client-abc.123")
	w, _ = do(t, h, req)
	if got := w.Header().Get("X-Request-Id"); got != "client-abc.123" {
		t.Fatalf("client request id not kept: %q", got)
	}
	req = httptest.NewRequest("GET", "/_health", nil)
	req.Header.Set("X-Request-Id", "bad id\nwith newline")
	w, _ = do(t, h, req)
	if got := w.Header().Get("X-Request-Id"); strings.ContainsAny(got, " \n") {
		t.Fatalf("malformed client request id echoed: %q", got)
	}
}

func TestOneJSONLogLinePerRequest(t *testing.T) {
	var buf bytes.Buffer
	h := validated(t, newServer(t, slog.New(slog.NewJSONHandler(&buf, nil))).Handler())
	req := httptest.NewRequest("GET", "/_health", nil)
	req.Header.Set("X-Request-Id", "log-test-1")
	do(t, h, req)
	var line map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &line); err != nil {
		t.Fatalf("log is not one JSON line: %q", buf.String())
	}
	if line["request_id"] != "log-test-1" || line["status"] != float64(200) || line["path"] != "/_health" {
		t.Fatalf("log line %v", line)
	}
	if _, ok := line["duration_ms"]; !ok {
		t.Fatalf("log line lacks duration: %v", line)
	}
}

func TestPanicsBecomeA500WithTheErrorBody(t *testing.T) {
	var buf bytes.Buffer
	h := validated(t, newServer(t, slog.New(slog.NewJSONHandler(&buf, nil))).Handler())
	w, body := do(t, h, httptest.NewRequest("GET", "/test/panic", nil))
	wantError(t, w, body, http.StatusInternalServerError, "internal_error")
	if strings.Contains(w.Body.String(), "boom") {
		t.Fatal("the panic value leaked to the client")
	}
	if !strings.Contains(buf.String(), "boom") {
		t.Fatal("the panic was not logged")
	}
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func TestBodyLimitAndGzipBodies(t *testing.T) {
	h := validated(t, newServer(t, quietLog()).Handler())
	limit := testConfig().BodyLimit
	cases := []struct {
		name   string
		body   []byte
		gzip   bool
		chunk  bool // send without Content-Length
		status int
		bytes  int
	}{
		{name: "a body at the limit is read whole", body: bytes.Repeat([]byte("a"), int(limit)), status: 200, bytes: int(limit)},
		{name: "a declared length past the limit is 413", body: bytes.Repeat([]byte("a"), int(limit)+1), status: 413},
		{name: "a streamed body past the limit is 413", body: bytes.Repeat([]byte("a"), int(limit)+1), chunk: true, status: 413},
		{name: "a gzip body is decompressed", body: []byte(`{"event":"x"}`), gzip: true, status: 200, bytes: 13},
		{name: "a gzip body that expands past the limit is 413", body: bytes.Repeat([]byte("a"), int(limit)+1), gzip: true, status: 413},
		{name: "a gzip body exactly at the limit is read whole", body: bytes.Repeat([]byte("b"), int(limit)), gzip: true, status: 200, bytes: int(limit)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			payload := tc.body
			if tc.gzip {
				payload = gzipped(t, payload)
			}
			var r io.Reader = bytes.NewReader(payload)
			if tc.chunk {
				r = io.MultiReader(r) // hides the length
			}
			req := httptest.NewRequest("POST", "/test/body/", r)
			if tc.chunk {
				req.ContentLength = -1
			}
			if tc.gzip {
				req.Header.Set("Content-Encoding", "gzip")
			}
			w, body := do(t, h, req)
			if tc.status == 413 {
				wantError(t, w, body, 413, "request_too_large")
				return
			}
			if w.Code != tc.status || body["bytes"] != float64(tc.bytes) {
				t.Fatalf("status %d body %v", w.Code, body)
			}
		})
	}
	t.Run("a body that is not gzip but says so is 400", func(t *testing.T) {
		req := httptest.NewRequest("POST", "/test/body", strings.NewReader("plain"))
		req.Header.Set("Content-Encoding", "gzip")
		w, body := do(t, h, req)
		wantError(t, w, body, 400, "invalid_input")
	})
}

func TestGracefulShutdownFinishesInFlightRequests(t *testing.T) {
	s := newServer(t, quietLog())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()

	type result struct {
		status int
		err    error
	}
	inflight := make(chan result, 1)
	go func() {
		resp, err := http.Get(base + "/test/slow?for=700ms")
		if err != nil {
			inflight <- result{err: err}
			return
		}
		resp.Body.Close()
		inflight <- result{status: resp.StatusCode}
	}()
	time.Sleep(200 * time.Millisecond) // the slow request is being served
	stop()
	r := <-inflight
	if r.err != nil || r.status != 200 {
		t.Fatalf("in-flight request: %+v", r)
	}
	if err := <-served; err != nil {
		t.Fatalf("serve returned %v", err)
	}
	if _, err := http.Get(base + "/_health"); err == nil {
		t.Fatal("the server still accepts requests after shutdown")
	}
}
