// Package clitest_test drives PostHog's own tools against a real
// insightd: the CLI's MCP tools (@posthog/cli's posthog-api-cli.mjs) and
// the requests PostHog's MCP server sends. It is a package of its own so
// that its node processes run beside api's tests, not inside them.
package clitest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/insightd/insightd/api"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/metadata/metadatatest"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/olaptest"
	"github.com/insightd/insightd/querybuilder"
)

var engine olap.Engine

func TestMain(m *testing.M) {
	olaptest.Main(m, time.Minute, func(e *olap.Embedded) { engine = e })
}

// server is insightd serving on a loopback port, with a bootstrapped
// organization (Acme) and project (Acme web).
type server struct {
	base string
	a    metadata.Bootstrapped
}

func newServer(t *testing.T) *server {
	t.Helper()
	store := metadatatest.NewStore(t)
	a, err := store.Bootstrap(context.Background(), "ada@example.com", "Acme", "Acme web")
	if err != nil {
		t.Fatal(err)
	}
	cfg := api.Config{Addr: "127.0.0.1:0", BodyLimit: 1 << 20, ShutdownTimeout: 5 * time.Second,
		Limits: querybuilder.DefaultLimits(), Schema: querybuilder.DefaultSchema()}
	s := api.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), store, engine)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &server{base: "http://" + ln.Addr().String(), a: a}
}

// call sends a request with a Bearer key (if any) and a JSON body (if
// any) and decodes the JSON object it answers.
func (s *server) call(t *testing.T, method, path, key string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s: %d, body is not a JSON object: %q", method, path, resp.StatusCode, b)
		}
	}
	return resp.StatusCode, out
}

// capture sends events through /batch/.
func (s *server) capture(t *testing.T, events ...map[string]any) {
	t.Helper()
	if st, out := s.call(t, "POST", "/batch/", "", map[string]any{"api_key": s.a.ProjectAPIToken, "batch": events}); st != 200 {
		t.Fatalf("capture: %d %v", st, out)
	}
}
