package api

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/metadata/metadatatest"
)

// A PostgreSQL that is stopped (connections refused, unlike the frozen
// one of frozen_test.go) under a running server: metadata routes answer
// 503 postgres_unavailable with Retry-After, and the same server answers
// again once PostgreSQL is back, without a restart.
func TestStoppedPostgresAnswers503AndTheServerRecovers(t *testing.T) {
	pg := metadatatest.StartPrivate(t)
	ctx := context.Background()
	store, err := metadata.Open(ctx, metadata.Config{DatabaseURL: pg.URL, MaxOpenConns: 10, RoundTrip: 2 * time.Second})
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
	boot, err := store.Bootstrap(ctx, "stopped@example.com", "Stopped", "Stopped")
	if err != nil {
		t.Fatal(err)
	}
	srv := validatedServer(t, New(testConfig(), quietLog(), store, engine).Handler())
	defer srv.Close()

	routes := []string{
		fmt.Sprintf("/api/projects/%d/", boot.ProjectID),
		fmt.Sprintf("/api/projects/%d/insights/", boot.ProjectID),
		"/api/users/@me/",
	}
	get := func(path string) (int, string, http.Header) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+boot.PersonalAPIKey)
		resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		defer resp.Body.Close()
		var body struct {
			Code string `json:"code"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body.Code, resp.Header
	}
	for _, path := range routes {
		if st, code, _ := get(path); st != 200 {
			t.Fatalf("%s before the stop: %d %s", path, st, code)
		}
	}

	pg.Stop(t)
	stopped := true
	defer func() {
		if stopped {
			pg.Start(t)
		}
	}()
	for _, path := range routes {
		// Twice: the pooled connections PostgreSQL ended, then a refused dial.
		for range 2 {
			st, code, h := get(path)
			if st != http.StatusServiceUnavailable || code != "postgres_unavailable" || h.Get("Retry-After") == "" {
				t.Fatalf("%s while stopped: %d %q, Retry-After %q; want 503 postgres_unavailable with Retry-After",
					path, st, code, h.Get("Retry-After"))
			}
		}
	}

	pg.Start(t)
	stopped = false
	deadline := time.Now().Add(15 * time.Second)
	for _, path := range routes {
		for {
			st, code, _ := get(path)
			if st == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s after PostgreSQL came back: still %d %s", path, st, code)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
