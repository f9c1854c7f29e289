package api

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/metadata/metadatatest"
)

// A frozen PostgreSQL (every process stopped: connections are accepted by
// the kernel, nothing answers) must not freeze the API: metadata routes,
// capture and readiness answer 503 with Retry-After within the deadline,
// and everything recovers once the server runs again.
func TestFrozenPostgresAnswers503WithinTheDeadlineAndRecovers(t *testing.T) {
	pg := metadatatest.StartPrivate(t)
	ctx := context.Background()
	const roundTrip = 2 * time.Second
	store, err := metadata.Open(ctx, metadata.Config{DatabaseURL: pg.URL, MaxOpenConns: 10, RoundTrip: roundTrip})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	// Project ids key events in the engine the package's tests share.
	db, _ := sql.Open("postgres", pg.URL)
	_, err = db.Exec("SELECT setval('projects_id_seq', $1)", int64(1)<<40+rand.Int64N(1<<30))
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	boot, err := store.Bootstrap(ctx, "frozen@example.com", "Frozen", "Frozen")
	if err != nil {
		t.Fatal(err)
	}
	srv := validatedServer(t, New(testConfig(), quietLog(), store, engine).Handler())
	defer srv.Close()

	type probe struct {
		name, method, path string
		body               string
		key                bool
		limit              time.Duration
	}
	capture := fmt.Sprintf(`{"api_key": %q, "event": "frozen", "distinct_id": "d1"}`, boot.ProjectAPIToken)
	probes := []probe{
		{"readiness", "GET", "/_ready", "", false, readyWithin + 200*time.Millisecond},
		{"a project", "GET", fmt.Sprintf("/api/projects/%d/", boot.ProjectID), "", true, 2*roundTrip + time.Second},
		{"the insights list", "GET", fmt.Sprintf("/api/projects/%d/insights/", boot.ProjectID), "", true, 2*roundTrip + time.Second},
		{"a capture", "POST", "/capture/", capture, false, 2*roundTrip + time.Second},
	}
	call := func(p probe) (int, http.Header, time.Duration) {
		req, _ := http.NewRequest(p.method, srv.URL+p.path, bytes.NewBufferString(p.body))
		if p.key {
			req.Header.Set("Authorization", "Bearer "+boot.PersonalAPIKey)
		}
		if p.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		client := http.Client{Timeout: time.Minute}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
			return 0, nil, time.Since(start)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header, time.Since(start)
	}
	for _, p := range probes {
		if code, _, _ := call(p); code != http.StatusOK {
			t.Fatalf("%s before the freeze: %d", p.name, code)
		}
	}

	pg.Freeze()
	frozen := true
	defer func() {
		if frozen {
			pg.Thaw()
		}
	}()
	var wg sync.WaitGroup
	for _, p := range probes {
		wg.Go(func() {
			code, h, took := call(p)
			if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
				t.Errorf("%s while frozen: %d, Retry-After %q; want 503 with Retry-After", p.name, code, h.Get("Retry-After"))
			}
			if took > p.limit {
				t.Errorf("%s while frozen took %s; want within %s", p.name, took.Round(time.Millisecond), p.limit)
			}
		})
	}
	wg.Wait()

	pg.Thaw()
	frozen = false
	deadline := time.Now().Add(15 * time.Second)
	for _, p := range probes {
		for {
			code, _, _ := call(p)
			if code == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s after the thaw: still %d", p.name, code)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
