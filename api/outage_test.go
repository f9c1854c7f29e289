package api

import (
	"bytes"
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

// While PostgreSQL is stopped or frozen, the keys and tokens seen in the
// last minutes (the outage memory) keep working: saved insights,
// dashboards and query answers are served from memory, a HogQL query
// runs, capture for a known token is acknowledged; writes and reads the
// server never saw answer 503. Once PostgreSQL answers again, a deleted
// key stops working within the auth cache TTL.
func TestReadsSurviveAStoppedAndAFrozenPostgres(t *testing.T) {
	pg := metadatatest.StartPrivate(t)
	ctx := context.Background()
	const roundTrip = 2 * time.Second
	store, err := metadata.Open(ctx, metadata.Config{DatabaseURL: pg.URL, MaxOpenConns: 10, RoundTrip: roundTrip,
		AuthCacheTTL: time.Second, OutageMemory: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	db, _ := sql.Open("postgres", pg.URL)
	defer db.Close()
	// Project ids key events in the engine the package's tests share.
	if _, err = db.Exec("SELECT setval('projects_id_seq', $1)", int64(1)<<40+rand.Int64N(1<<30)); err != nil {
		t.Fatal(err)
	}
	boot, err := store.Bootstrap(ctx, "outage@example.com", "Outage", "Outage")
	if err != nil {
		t.Fatal(err)
	}
	srv := validatedServer(t, New(testConfig(), quietLog(), store, engine).Handler())
	defer srv.Close()
	base := fmt.Sprintf("/api/projects/%d", boot.ProjectID)

	call := func(method, path, key, body string) (int, []byte, time.Duration) {
		req, _ := http.NewRequest(method, srv.URL+path, bytes.NewBufferString(body))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		start := time.Now()
		resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
		if err != nil {
			t.Errorf("%s %s: %v", method, path, err)
			return 0, nil, time.Since(start)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.Bytes(), time.Since(start)
	}
	id := func(b []byte) int64 {
		var v struct{ ID int64 }
		_ = json.Unmarshal(b, &v)
		return v.ID
	}
	key := boot.PersonalAPIKey
	capture := func(n int) string {
		return fmt.Sprintf(`{"api_key": %q, "batch": [{"event": "$pageview", "distinct_id": "d%d", "timestamp": "2026-03-02T10:00:00Z"}]}`,
			boot.ProjectAPIToken, n)
	}
	if code, b, _ := call("POST", "/batch/", "", capture(0)); code != 200 {
		t.Fatalf("capture: %d %s", code, b)
	}
	trend := `{"insight": "TRENDS", "events": [{"id": "$pageview"}], "date_from": "2026-03-01", "date_to": "2026-03-07"}`
	code, b, _ := call("POST", base+"/dashboards/", key, `{"name": "Outage"}`)
	if code != 201 {
		t.Fatalf("dashboard: %d %s", code, b)
	}
	dash := id(b)
	code, b, _ = call("POST", base+"/insights/", key, fmt.Sprintf(`{"name": "Views", "filters": %s, "dashboards": [%d]}`, trend, dash))
	if code != 201 {
		t.Fatalf("insight: %d %s", code, b)
	}
	insight := id(b)
	node := `{"query": {"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}],
		"dateRange": {"date_from": "2026-03-01", "date_to": "2026-03-07"}}}`
	hogql := `{"query": {"kind": "HogQLQuery", "query": "SELECT count() FROM events"}}`
	type probe struct {
		name, method, path, key, body string
		want                          int
	}
	probes := []probe{
		{"a saved insight", "GET", fmt.Sprintf("%s/insights/%d/", base, insight), key, "", 200},
		{"a dashboard", "GET", fmt.Sprintf("%s/dashboards/%d/", base, dash), key, "", 200},
		{"a cached query", "POST", base + "/query/", key, node, 200},
		{"a HogQL query", "POST", base + "/query/", key, hogql, 200},
		{"a capture of a known token", "POST", "/batch/", "", capture(1), 200},
		{"a write", "POST", base + "/insights/", key, `{"name": "During the outage"}`, 503},
		{"a read never seen", "GET", base + "/cohorts/", key, "", 503},
		{"readiness", "GET", "/_ready", "", "", 503},
	}
	before := map[string]string{}
	for _, p := range probes {
		code, b, _ := call(p.method, p.path, p.key, p.body)
		if code != 200 && p.want == 200 {
			t.Fatalf("%s before the outage: %d %s", p.name, code, b)
		}
		before[p.name] = string(b)
	}
	// The cached answers are cached now.
	for _, p := range probes[:3] {
		_, b, _ := call(p.method, p.path, p.key, p.body)
		before[p.name] = string(b)
	}

	outage := func(t *testing.T, limit time.Duration) {
		for round := 0; round < 2; round++ {
			for _, p := range probes {
				code, b, took := call(p.method, p.path, p.key, p.body)
				if code != p.want {
					t.Errorf("%s (round %d): %d %s; want %d", p.name, round, code, b, p.want)
				}
				if round == 1 && p.want == 200 && took > limit {
					t.Errorf("%s (round %d) took %s; want within %s", p.name, round, took.Round(time.Millisecond), limit)
				}
				if p.name != "a HogQL query" && p.name != "a capture of a known token" && code == 200 &&
					!sameAnswer(before[p.name], string(b)) {
					t.Errorf("%s: a different answer from memory:\n%s\nbefore:\n%s", p.name, b, before[p.name])
				}
			}
		}
	}
	recovered := func(t *testing.T) {
		deadline := time.Now().Add(15 * time.Second)
		for _, p := range probes[:5] {
			for {
				if code, _, _ := call(p.method, p.path, p.key, p.body); code == 200 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s after the outage: not 200", p.name)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}

	t.Run("stopped", func(t *testing.T) {
		pg.Stop(t)
		outage(t, time.Second)
		pg.Start(t)
		recovered(t)
	})
	t.Run("frozen", func(t *testing.T) {
		pg.Freeze()
		thawed := false
		defer func() {
			if !thawed {
				pg.Thaw()
			}
		}()
		outage(t, time.Second)
		pg.Thaw()
		thawed = true
		recovered(t)
	})
	t.Run("a deleted key stops working within the auth cache TTL once PostgreSQL answers", func(t *testing.T) {
		if _, err := db.Exec("DELETE FROM personal_api_keys"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second + 100*time.Millisecond)
		if code, b, _ := call("GET", fmt.Sprintf("%s/insights/%d/", base, insight), key, ""); code != 401 {
			t.Fatalf("a deleted key: %d %s", code, b)
		}
	})
}

// sameAnswer compares two answers without the fields that say when they
// were computed or served.
func sameAnswer(a, b string) bool {
	var x, y map[string]any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	for _, m := range []map[string]any{x, y} {
		for _, k := range []string{"last_refresh", "next_allowed_client_refresh", "cache_target_age", "is_cached", "query_status", "last_viewed_at", "tiles"} {
			delete(m, k)
		}
	}
	return fmt.Sprint(x["result"], x["results"], x["name"]) == fmt.Sprint(y["result"], y["results"], y["name"])
}
