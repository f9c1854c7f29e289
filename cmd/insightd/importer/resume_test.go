package importer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A dry run reads and counts, and writes nothing; an interrupted run
// resumes from its checkpoint and the two together copy every event once.
func TestImportDryRunAndResume(t *testing.T) {
	s, src, token := newServer(t)
	seed(t, s, src, token)
	dst := id(s.call(t, "POST", "/api/organizations/@current/projects/", map[string]any{"name": "Target"}, 201))
	count := func(project int64) any {
		return obj(s.call(t, "POST", fmt.Sprintf("/api/projects/%d/query/", project), map[string]any{"query": map[string]any{"kind": "HogQLQuery", "query": "SELECT count() FROM events"}}, 200))["results"]
	}
	cfg := Config{Source: NewClient(s.base, s.key, src), Target: NewClient(s.base, s.key, dst), PageSize: 5, DryRun: true}
	im, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := im.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if r.Events.Total == 0 || r.Events.Copied != 0 || r.Insights.Total != 4 || r.Dashboards.Total != 2 || r.Cohorts.Total != 3 || r.Persons.Total == 0 {
		t.Errorf("dry run report %+v", r)
	}
	equal(t, "the target's events after a dry run", count(dst), [][]any{{0}})
	if n := len(s.byName(t, dst, "insights", "name")); n != 0 {
		t.Errorf("a dry run wrote %d insights", n)
	}

	cfg.DryRun = false
	cfg.Checkpoint = filepath.Join(t.TempDir(), "c.json")
	ctx, cancel := context.WithCancel(t.Context())
	cfg.Progress = func(part string, done, total int64) {
		if part == "events" && done >= 10 {
			cancel()
		}
	}
	im, _ = New(cfg)
	if _, err := im.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("the interrupted run: %v", err)
	}
	cfg.Progress = nil
	im, _ = New(cfg)
	r, err = im.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if r.Events.Copied == 0 || r.Events.Copied >= r.Events.Total {
		t.Errorf("the resumed run copied %d of %d: it should continue, not start over", r.Events.Copied, r.Events.Total)
	}
	equal(t, "events", count(dst), count(src))
}

// A 429 is waited out as Retry-After says; a refusal names the answer.
func TestClientHonoursRetryAfter(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"type": "throttled_error", "detail": "Request was throttled."}`)
			return
		}
		if r.URL.Path == "/bad" {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"type": "validation_error", "attr": "name", "detail": "This field is required."}`)
			return
		}
		fmt.Fprint(w, `{"ok": true}`)
	}))
	defer srv.Close()
	c := NewClient(srv.URL, "k", 1)
	var waits []time.Duration
	c.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	var out struct{ OK bool }
	if err := c.Get(t.Context(), "/x", &out); err != nil || !out.OK {
		t.Fatalf("%v %v", err, out)
	}
	if len(waits) != 2 || waits[0] != 7*time.Second {
		t.Errorf("waits %v, want two of 7s", waits)
	}
	err := c.Post(t.Context(), "/bad", map[string]any{}, nil, false)
	if err == nil || !strings.Contains(err.Error(), "POST /bad answered 400") || !strings.Contains(err.Error(), "This field is required.") {
		t.Errorf("refusal: %v", err)
	}
}
