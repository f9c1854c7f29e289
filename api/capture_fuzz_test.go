package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/insightd/insightd/api/metrics"
	"github.com/insightd/insightd/metadata/metadatatest"
	"github.com/insightd/insightd/querybuilder"
)

// fuzzToken is the project token of the fuzz corpus: the fixture gives
// its project this token, so that seeds may carry it inside gzip, base64
// and lz64 bodies, where no test could substitute it.
const fuzzToken = "phc_fuzzCaptureToken0000000000000000000000000"

// fuzzPaths are the capture paths a fuzz input picks from.
var fuzzPaths = []string{"/batch", "/capture", "/e", "/i/v0/e"}

// panicCounter is a log handler that counts the server's reports of a
// panic (a handler's, recovered into a 500, or the writer's).
type panicCounter struct{ n atomic.Int64 }

func (p *panicCounter) Enabled(context.Context, slog.Level) bool { return true }
func (p *panicCounter) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "panic") {
		p.n.Add(1)
	}
	return nil
}
func (p *panicCounter) WithAttrs([]slog.Attr) slog.Handler { return p }
func (p *panicCounter) WithGroup(string) slog.Handler      { return p }

// FuzzCaptureRequest sends whole capture requests (method, one of the
// capture paths, Content-Type, Content-Encoding, other headers, query
// string, body) to a server on the real stores, metrics on, and holds it
// to capture's promises: never a panic, never a 5xx but a 503 while a
// store is down, 200 {"status": 1} only once the events are stored (the
// project's stored count follows every 200), a refused request stores
// nothing, and every 4xx is the one error body. The seed corpus
// (testdata/fuzz/FuzzCaptureRequest) holds every body form SDKs send.
func FuzzCaptureRequest(f *testing.F) {
	fx := newTokenFixture(f)
	ctx := context.Background()
	var stored int64 // events the server has said it stored
	f.Fuzz(func(t *testing.T, method string, path uint8, slash bool, ctype, cenc, header, query string, body []byte) {
		in := captureInput{method, path, slash, ctype, cenc, header, query, body}
		r, err := in.request()
		if err != nil {
			t.Skip("not a request a client can send")
		}
		stats := fx.s.WriterStats()
		events, dups := stats.Events.Load(), stats.Duplicates.Load()
		w := httptest.NewRecorder()
		fx.h.ServeHTTP(w, r)
		taken := stats.Events.Load() - events + stats.Duplicates.Load() - dups
		if n := fx.logs.n.Swap(0); n > 0 {
			t.Fatalf("the server reported %d panic(s); answered %d %q", n, w.Code, w.Body.String())
		}
		switch code := w.Code; {
		case code == http.StatusOK:
			if strings.TrimSpace(w.Body.String()) != `{"status":1}` {
				t.Fatalf("200 with %q", w.Body.String())
			}
			if taken < 1 {
				t.Fatalf("200 though the writer took no event")
			}
			stored += stats.Events.Load() - events
			if got := projectEvents(t, fx.project); got != stored {
				t.Fatalf("the project holds %d events after a 200, want %d", got, stored)
			}
		case code == http.StatusNoContent && method == http.MethodOptions:
		case code >= 400 && code < 500:
			wantErrorBody(t, w)
			if taken != 0 {
				t.Fatalf("%d, yet the writer took %d event(s): a refused request must store nothing", code, taken)
			}
		case code == http.StatusServiceUnavailable:
			e := wantErrorBody(t, w)
			switch e["code"] {
			case "postgres_unavailable", "clickhouse_unavailable", "ingestion_unavailable":
			default:
				t.Fatalf("503 %v: not a store outage", e)
			}
			if fx.s.store.Ping(ctx) == nil && engine.Ping(ctx) == nil {
				t.Fatalf("503 %v while both stores answer: a request that can never be stored", e)
			}
		default:
			t.Fatalf("%s %s answered %d %q", method, r.URL, code, w.Body.String())
		}
	})
}

// tokenFixture is a server, metrics on, whose one project has fuzzToken.
type tokenFixture struct {
	s       *Server
	h       http.Handler
	logs    *panicCounter
	project int64
}

func newTokenFixture(tb testing.TB) *tokenFixture {
	tb.Helper()
	logs := &panicCounter{}
	cfg := testConfig()
	cfg.Metrics = metrics.New() // the empty-body 500 showed with metrics on only
	cfg.Ingest.Linger = time.Millisecond
	store := metadatatest.NewStore(tb)
	s := New(cfg, slog.New(logs), store, engine)
	tb.Cleanup(s.writer.Close)
	ctx := context.Background()
	b, err := store.Bootstrap(ctx, "fuzz@example.com", "Fuzz", "Fuzz")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := store.DB().ExecContext(ctx, "UPDATE projects SET api_token = $1 WHERE id = $2", fuzzToken, b.ProjectID); err != nil {
		tb.Fatal(err)
	}
	return &tokenFixture{s: s, h: s.Handler(), logs: logs, project: b.ProjectID}
}

// captureInput is one fuzz input: a whole capture request.
type captureInput struct {
	method                     string
	path                       uint8 // an index into fuzzPaths
	slash                      bool  // a trailing slash
	ctype, cenc, header, query string
	body                       []byte
}

func (in captureInput) request() (*http.Request, error) {
	target := fuzzPaths[int(in.path)%len(fuzzPaths)]
	if in.slash {
		target += "/"
	}
	if in.query != "" {
		target += "?" + in.query
	}
	r, err := http.NewRequest(in.method, target, bytes.NewReader(in.body))
	if err != nil {
		return nil, err
	}
	for k, v := range fuzzHeaders(in.ctype, in.cenc, in.header) {
		r.Header.Set(k, v)
	}
	return r, nil
}

// fuzzHeaders are a fuzz input's headers: Content-Type, Content-Encoding
// and "Name: value" lines, each left out when no client could send it.
func fuzzHeaders(ctype, cenc, lines string) map[string]string {
	out := map[string]string{}
	add := func(k, v string) {
		if k == "" || strings.ContainsAny(k, " \t\r\n:\x00") || strings.ContainsAny(v, "\r\n\x00") {
			return
		}
		out[textproto.CanonicalMIMEHeaderKey(k)] = v
	}
	for _, line := range strings.Split(lines, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	if ctype != "" {
		add("Content-Type", ctype)
	}
	if cenc != "" {
		add("Content-Encoding", cenc)
	}
	return out
}

// wantErrorBody checks the one error body, {type, code, detail, attr},
// and nothing else.
func wantErrorBody(t *testing.T, w *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var e map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
		t.Fatalf("%d with a body that is not JSON: %q", w.Code, w.Body.String())
	}
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "attr,code,detail,type" {
		t.Fatalf("%d with keys %v, want attr, code, detail, type: %v", w.Code, keys, e)
	}
	for _, k := range []string{"type", "code", "detail"} {
		if s, ok := e[k].(string); !ok || s == "" {
			t.Fatalf("%d: %s is %v, want text", w.Code, k, e[k])
		}
	}
	if _, ok := e["attr"].(string); !ok && e["attr"] != nil {
		t.Fatalf("%d: attr is %v, want text or null", w.Code, e["attr"])
	}
	return e
}

func projectEvents(t *testing.T, project int64) int64 {
	t.Helper()
	rows, err := engine.Query(context.Background(), querybuilder.Statement{
		SQL: "SELECT count() FROM events WHERE team_id = {team:Int64}", Params: map[string]any{"team": project}})
	if err != nil {
		t.Fatal(err)
	}
	return int64(rows.Data[0][0].(uint64))
}
