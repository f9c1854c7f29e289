// Package clitest_test drives PostHog's own tools against a real
// insightd: the CLI's MCP tools (@posthog/cli's posthog-api-cli.mjs) and
// the requests PostHog's MCP server sends. It is a package of its own so
// that its node processes run beside api's tests, not inside them.
package clitest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/api"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/metadata/metadatatest"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/olaptest"
	"github.com/insightd/insightd/querybuilder"
)

// PostHog's CLI (@posthog/cli, pinned in scripts/sdk/node) carries the
// tools of PostHog's MCP server as posthog-api-cli.mjs: `call --json
// <tool> <input>` validates the input with the tool's schema, fills its
// defaults and calls the API as the MCP server does. Each tool whose
// domain insightd has must answer with the right data; the others must
// get a clear 4xx, never a 500 or a wrong answer.

// cliCase is one tool call: its input, and either what its answer must
// hold (check) or that insightd refuses it (refused: a 4xx the CLI reports).
type cliCase struct {
	tool, input string
	check       func(t *testing.T, out map[string]any)
	refused     bool
}

// cliRun runs one tool against base, answering its exit status, its
// stdout (JSON with --json) and its stderr.
func cliRun(t *testing.T, env []string, tool, input string) (bool, string, string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "scripts", "sdk", "node"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "node_modules", "@posthog", "cli", "lib", "posthog-api-cli.mjs"),
		"call", "--json", "--confirm", tool, input)
	cmd.Dir = t.TempDir()
	cmd.Env = env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("node %s: %v", tool, err)
		}
	}
	return err == nil, stdout.String(), stderr.String()
}

func TestPostHogCLIToolsAgainstInsightd(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not on the PATH: the CLI client test needs it (install Node.js)")
	}
	cli, _ := filepath.Abs(filepath.Join("..", "..", "scripts", "sdk", "node", "node_modules", "@posthog", "cli", "lib", "posthog-api-cli.mjs"))
	if _, err := os.Stat(cli); err != nil {
		t.Fatalf("@posthog/cli is not installed: run `make test` or scripts/setup.sh, which install scripts/sdk/node (%v)", err)
	}
	s := newServer(t)
	now := time.Now().UTC()
	// The events fall today (trends and lifecycle actors name the day)
	// and within minutes of each other (a path is one session).
	start := now.Truncate(24 * time.Hour)
	if now.Sub(start) > 3*time.Hour {
		start = now.Add(-3 * time.Hour)
	}
	at := func(d time.Duration) string { return start.Add(d).Format(time.RFC3339) }
	s.capture(t,
		map[string]any{"event": "$pageview", "distinct_id": "u1", "timestamp": at(time.Minute), "properties": map[string]any{"$current_url": "/a"}},
		map[string]any{"event": "$pageview", "distinct_id": "u1", "timestamp": at(5 * time.Minute), "properties": map[string]any{"$current_url": "/b"}},
		map[string]any{"event": "$pageview", "distinct_id": "u2", "timestamp": at(5 * time.Minute), "properties": map[string]any{"$current_url": "/a"}},
		map[string]any{"event": "signup", "distinct_id": "u1", "timestamp": at(10 * time.Minute)},
	)
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home,
		"POSTHOG_CLI_HOST=" + s.base, "POSTHOG_CLI_API_KEY=" + s.a.PersonalAPIKey,
		fmt.Sprintf("POSTHOG_CLI_PROJECT_ID=%d", s.a.ProjectID), "POSTHOG_CLI_ORGANIZATION_ID=" + s.a.OrganizationID.String(),
		// The CLI's own usage analytics go to insightd too, never out.
		"POSTHOG_ANALYTICS_HOST=" + s.base, "DO_NOT_TRACK=1"}

	trend := `{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], "dateRange": {"date_from": "-1d"}}`
	funnel := `{"kind": "FunnelsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}, {"kind": "EventsNode", "event": "signup"}], "dateRange": {"date_from": "-1d"}}`
	retention := `{"kind": "RetentionQuery", "retentionFilter": {"targetEntity": {"id": "$pageview", "type": "events"}, "returningEntity": {"id": "$pageview", "type": "events"}, "totalIntervals": 3}}`
	lifecycle := `{"kind": "LifecycleQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], "dateRange": {"date_from": "-7d"}}`
	stickiness := `{"kind": "StickinessQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], "dateRange": {"date_from": "-7d"}}`
	today := now.Format(time.DateOnly)
	var insightID, shortID, dashboardID string

	cases := []cliCase{
		{tool: "query-trends", input: "{\"output_format\": \"json\", " + trend[len(`{"kind": "TrendsQuery", `):], check: func(t *testing.T, out map[string]any) {
			if got := first(t, out)["count"]; got != float64(3) {
				t.Errorf("count %v, want the 3 pageviews", got)
			}
		}},
		{tool: "query-funnel", input: "{\"output_format\": \"json\", " + funnel[len(`{"kind": "FunnelsQuery", `):], check: func(t *testing.T, out map[string]any) {
			if got := fmt.Sprint(stepCounts(t, out)); got != "[2 1]" {
				t.Errorf("steps %s, want [2 1]", got)
			}
		}},
		{tool: "query-retention", input: "{\"output_format\": \"json\", " + retention[len(`{"kind": "RetentionQuery", `):], check: func(t *testing.T, out map[string]any) {
			if got := first(t, out)["values"]; got == nil {
				t.Errorf("no cohort values in %v", out)
			}
		}},
		{tool: "query-lifecycle", input: "{\"output_format\": \"json\", " + lifecycle[len(`{"kind": "LifecycleQuery", `):], check: hasResults},
		{tool: "query-stickiness", input: "{\"output_format\": \"json\", " + stickiness[len(`{"kind": "StickinessQuery", `):], check: func(t *testing.T, out map[string]any) {
			if got := first(t, out)["count"]; got != float64(2) {
				t.Errorf("count %v, want the 2 people active one day", got)
			}
		}},
		{tool: "query-paths", input: `{"output_format": "json", "pathsFilter": {"includeEventTypes": ["$pageview"]}, "dateRange": {"date_from": "-1d"}}`, check: hasResults},
		{tool: "query-trends-actors", input: `{"output_format": "json", "source": ` + trend + `, "day": "` + today + `"}`, check: rows(2)},
		{tool: "query-stickiness-actors", input: `{"output_format": "json", "source": ` + stickiness + `, "day": 1}`, check: rows(2)},
		{tool: "query-lifecycle-actors", input: `{"output_format": "json", "source": ` + lifecycle + `, "day": "` + today + `", "status": "new"}`, check: rows(2)},
		// Three daily cohorts end today: today's is interval 2.
		{tool: "query-retention-actors", input: `{"output_format": "json", "source": ` + retention + `, "interval": 2}`, check: rows(2)},
		{tool: "query-funnel-actors", input: `{"output_format": "json", "source": ` + funnel + `, "funnelStep": 2}`, check: rows(1)},
		// The actors of a path are not listed yet (README, ActorsQuery).
		{tool: "query-paths-actors", input: `{"source": {"kind": "PathsQuery", "pathsFilter": {}}}`, refused: true},
		{tool: "insight-create", input: `{"name": "Pageviews", "query": {"kind": "InsightVizNode", "source": ` + trend + `}, "saved": true}`,
			check: func(t *testing.T, out map[string]any) {
				insightID, shortID = fmt.Sprint(out["id"]), fmt.Sprint(out["short_id"])
				if out["name"] != "Pageviews" || len(shortID) != 8 {
					t.Errorf("%v", out)
				}
			}},
		{tool: "insights-list", input: `{}`, check: func(t *testing.T, out map[string]any) {
			if !strings.Contains(fmt.Sprint(out), "Pageviews") {
				t.Errorf("the saved insight is not listed: %v", out)
			}
		}},
		{tool: "insight-get", input: `{"id": ID}`, check: field("name", "Pageviews")},
		{tool: "insight-query", input: `{"insightId": "SHORT"}`, check: func(t *testing.T, out map[string]any) {
			if !strings.Contains(fmt.Sprint(out), "3") {
				t.Errorf("the insight's answer lacks its 3 pageviews: %v", out)
			}
		}},
		{tool: "insight-update", input: `{"id": ID, "name": "Views"}`, check: field("name", "Views")},
		{tool: "dashboard-create", input: `{"name": "Board"}`, check: func(t *testing.T, out map[string]any) {
			dashboardID = fmt.Sprint(out["id"])
			if out["name"] != "Board" {
				t.Errorf("%v", out)
			}
		}},
		{tool: "dashboards-get-all", input: `{}`, check: contains("Board")},
		{tool: "dashboard-get", input: `{"id": DASH}`, check: field("name", "Board")},
		{tool: "insight-delete", input: `{"id": ID}`, check: func(*testing.T, map[string]any) {}},
		{tool: "persons-list", input: `{}`, check: contains("u1")},
		{tool: "actions-get-all", input: `{}`, check: func(*testing.T, map[string]any) {}},
		{tool: "cohorts-list", input: `{}`, check: func(*testing.T, map[string]any) {}},
		{tool: "annotations-list", input: `{}`, check: func(*testing.T, map[string]any) {}},
		{tool: "organizations-list", input: `{}`, check: contains("Acme")},
		{tool: "projects-get", input: `{}`, check: contains("Acme web")},
		{tool: "execute-sql", input: `{"query": "SELECT event, count() AS n FROM events GROUP BY event ORDER BY event"}`, check: func(t *testing.T, out map[string]any) {
			if got := fmt.Sprint(out["results"]); !strings.Contains(got, "$pageview|3") || !strings.Contains(got, "signup|1") {
				t.Errorf("results %s, want the 3 pageviews and the signup", got)
			}
		}},
		{tool: "execute-sql", input: `{"query": "SELEC nonsense"}`, refused: true},
		{tool: "read-data-schema", input: `{"query": {"kind": "events"}}`, check: contains(`name: \"signup\"`)},
		{tool: "read-data-schema", input: `{"query": {"kind": "event_properties", "event_name": "$pageview"}}`, check: contains(`$current_url`)},
		{tool: "read-data-schema", input: `{"query": {"kind": "event_property_values", "event_name": "$pageview", "property_name": "$current_url"}}`, check: contains(`/a`)},
		{tool: "read-data-schema", input: `{"query": {"kind": "entity_properties", "entity": "person"}}`, check: func(*testing.T, map[string]any) {}},
		{tool: "read-data-schema", input: `{"query": {"kind": "action_properties", "action_id": 1}}`, refused: true},
		// Products insightd does not have.
		{tool: "feature-flag-get-all", input: `{}`, refused: true},
		{tool: "experiment-list", input: `{}`, refused: true},
		{tool: "surveys-get-all", input: `{}`, refused: true},
		{tool: "error-tracking-settings-get", input: `{}`, refused: true},
		{tool: "docs-search", input: `{"query": "funnels"}`, refused: true},
	}
	for _, tc := range cases {
		t.Run(tc.tool+" "+tc.input, func(t *testing.T) {
			input := strings.NewReplacer("ID", insightID, "SHORT", shortID, "DASH", dashboardID).Replace(tc.input)
			ok, stdout, stderr := cliRun(t, env, tc.tool, input)
			if tc.refused {
				if ok || !cliSaysClientError(stderr) {
					t.Fatalf("want a clear 4xx, got ok=%v\nstdout %s\nstderr %s", ok, stdout, stderr)
				}
				return
			}
			if !ok {
				t.Fatalf("the tool failed: %s\n%s", stderr, stdout)
			}
			var doc any
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, stdout)
			}
			out, ok := doc.(map[string]any)
			if !ok {
				out = map[string]any{"results": doc} // a list tool's answer
			}
			tc.check(t, out)
		})
	}
}

// cliSaysClientError reports whether the CLI's error names a 4xx answer
// (it prints the status and insightd's detail, or "Validation error"
// and the detail and attr of a 400).
func cliSaysClientError(stderr string) bool {
	for _, code := range []string{"Validation error", "400", "401", "403", "404", "405"} {
		if strings.Contains(stderr, code) {
			return true
		}
	}
	return false
}

func hasResults(t *testing.T, out map[string]any) {
	t.Helper()
	if r, _ := out["results"].([]any); len(r) == 0 {
		b, _ := json.Marshal(out["results"])
		t.Errorf("no results: %s", b)
	}
}

func first(t *testing.T, out map[string]any) map[string]any {
	t.Helper()
	r, _ := out["results"].([]any)
	if len(r) == 0 {
		t.Fatalf("no results: %v", out)
	}
	m, _ := r[0].(map[string]any)
	return m
}

func stepCounts(t *testing.T, out map[string]any) []any {
	t.Helper()
	var counts []any
	r, _ := out["results"].([]any)
	for _, s := range r {
		if m, ok := s.(map[string]any); ok {
			counts = append(counts, m["count"])
		}
	}
	return counts
}

func rows(n int) func(*testing.T, map[string]any) {
	return func(t *testing.T, out map[string]any) {
		t.Helper()
		// The CLI answers actors as {columns, results}, a person as its
		// first distinct id, email and name.
		page, _ := out["results"].(map[string]any)
		if r, _ := page["results"].([]any); len(r) != n {
			t.Errorf("%d actors, want %d: %v", len(r), n, out)
		}
	}
}

func field(name string, want any) func(*testing.T, map[string]any) {
	return func(t *testing.T, out map[string]any) {
		t.Helper()
		if out[name] != want {
			t.Errorf("%s %v, want %v: %v", name, out[name], want, out)
		}
	}
}

func contains(s string) func(*testing.T, map[string]any) {
	return func(t *testing.T, out map[string]any) {
		t.Helper()
		if b, _ := json.Marshal(out); !strings.Contains(string(b), s) {
			t.Errorf("no %q in %s", s, b)
		}
	}
}

// PostHog's MCP server (PostHog/mcp, typescript/src/api/client.ts; not
// on npm) sends these requests for its tools; each answers what the
// tool reads, or a clear 4xx for a product insightd does not have.
func TestPostHogMCPServerRequests(t *testing.T) {
	f := newServer(t)
	f.capture(t, map[string]any{"event": "$pageview", "distinct_id": "u1", "properties": map[string]any{"$current_url": "/a"}})
	p := fmt.Sprintf("/api/projects/%d", f.a.ProjectID)
	env := fmt.Sprintf("/api/environments/%d", f.a.ProjectID)
	var insight, dashboard string
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		check              func(t *testing.T, body map[string]any)
	}{
		{"users-me reads the caller's distinct id", "GET", "/api/users/@me/", nil, 200, func(t *testing.T, b map[string]any) {
			if s, _ := b["distinct_id"].(string); s == "" {
				t.Errorf("no distinct_id: %v", b)
			}
		}},
		{"organizations-list", "GET", "/api/organizations/", nil, 200, contains("Acme")},
		{"the organization's projects", "GET", "/api/organizations/" + f.a.OrganizationID.String() + "/projects/", nil, 200, contains("Acme web")},
		{"projects-get", "GET", p + "/", nil, 200, field("name", "Acme web")},
		{"insight-create", "POST", p + "/insights/", map[string]any{"name": "Views", "saved": true, "query": map[string]any{"kind": "InsightVizNode",
			"source": map[string]any{"kind": "TrendsQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "$pageview"}}}}},
			201, func(t *testing.T, b map[string]any) {
				insight = fmt.Sprint(b["id"])
				if s, _ := b["short_id"].(string); len(s) != 8 {
					t.Errorf("short_id %v", b["short_id"])
				}
			}},
		{"insights-get-all with its parameters", "GET", p + "/insights/?limit=10&saved=true&search=Views", nil, 200, contains("Views")},
		{"insight-get", "GET", p + "/insights/ID/", nil, 200, field("name", "Views")},
		{"dashboard-create", "POST", p + "/dashboards/", map[string]any{"name": "Board", "description": "d", "pinned": false}, 201,
			func(t *testing.T, b map[string]any) { dashboard = fmt.Sprint(b["id"]) }},
		{"dashboards-get-all with its parameters", "GET", p + "/dashboards/?limit=10&search=Board", nil, 200, contains("Board")},
		{"add-insight-to-dashboard", "PATCH", p + "/insights/ID/", map[string]any{"dashboards": []any{"DASH"}}, 200, contains("dashboard_tiles")},
		{"dashboard-get", "GET", p + "/dashboards/DASH/", nil, 200, contains("Views")},
		{"query-run with a HogQL query", "POST", env + "/query/", map[string]any{"query": map[string]any{"kind": "HogQLQuery",
			"query": "SELECT count() FROM events"}}, 200, func(t *testing.T, b map[string]any) {
			if got := fmt.Sprint(b["results"]); got != "[[1]]" {
				t.Errorf("results %s, want [[1]]", got)
			}
		}},
		{"insight-delete", "PATCH", p + "/insights/ID/", map[string]any{"deleted": true}, 200, field("deleted", true)},
		{"dashboard-delete", "PATCH", p + "/dashboards/DASH/", map[string]any{"deleted": true}, 200, field("deleted", true)},
		{"event-definitions-list", "GET", p + "/event_definitions/?limit=50&offset=0&search=page", nil, 200, contains("$pageview")},
		{"properties-list of an event", "GET", p + "/property_definitions/?type=event&event_names=%5B%22%24pageview%22%5D&filter_by_event_names=true&exclude_core_properties=false&is_feature_flag=false&limit=50", nil, 200, contains("$current_url")},
		{"properties-list of persons", "GET", p + "/property_definitions/?type=person&limit=50", nil, 200, field("count", float64(0))},
		{"get-sql-insight asks PostHog's AI", "POST", env + "/max_tools/create_and_query_insight/", map[string]any{"query": "x", "insight_type": "sql"}, 404, nil},
		{"feature-flag-get-all", "GET", p + "/feature_flags/", nil, 404, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := strings.NewReplacer("ID", insight, "DASH", dashboard).Replace(tc.path)
			body := tc.body
			if m, ok := body.(map[string]any); ok && fmt.Sprint(m["dashboards"]) == "[DASH]" {
				id, _ := strconv.Atoi(dashboard)
				body = map[string]any{"dashboards": []any{id}}
			}
			st, got := f.call(t, tc.method, path, f.a.PersonalAPIKey, body)
			if st != tc.status {
				t.Fatalf("%s %s: %d, want %d: %v", tc.method, path, st, tc.status, got)
			}
			if st >= 400 {
				if got["detail"] == nil || got["code"] == nil {
					t.Errorf("a refusal names no code and detail: %v", got)
				}
				return
			}
			tc.check(t, got)
		})
	}
}

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
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &server{base: srv.URL, a: a}
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
