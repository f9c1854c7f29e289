package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/posthog/posthog-go"

	"github.com/insightd/insightd/querybuilder"
)

// The official SDKs drive a real insightd (the whole server on a TCP
// port, as a client reaches it): every event they send must be stored
// once and counted, an anonymous id merged into the user it was aliased
// to included.

// sdkServer is a serving insightd with one project.
type sdkServer struct {
	*fixture
	base string
}

func newSDKServer(t *testing.T) *sdkServer {
	t.Helper()
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- f.s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &sdkServer{fixture: f, base: "http://" + ln.Addr().String()}
}

// checkFlow checks what a flow of anonymous pageviews by anon, an alias
// of anon to user and purchases by user stored and what the API counts.
func (s *sdkServer) checkFlow(t *testing.T, sent map[string]int, anon, user string) {
	t.Helper()
	rows, err := engine.Query(context.Background(), querybuilder.Statement{
		SQL:    "SELECT event, count() FROM events WHERE team_id = {team:Int64} GROUP BY event ORDER BY event",
		Params: map[string]any{"team": s.a.ProjectID}})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]int{}
	for _, r := range rows.Data {
		stored[r[0].(string)] = int(r[1].(uint64))
	}
	t.Run("every event sent is stored once", func(t *testing.T) {
		if fmt.Sprint(stored) != fmt.Sprint(sent) {
			t.Fatalf("stored %v, sent %v", stored, sent)
		}
	})
	t.Run("the trend counts every pageview", func(t *testing.T) {
		st, body := call(t, s.h, "POST", fmt.Sprintf("/api/projects/%d/insights/trend/", s.a.ProjectID), s.a.PersonalAPIKey,
			map[string]any{"events": []any{map[string]any{"id": "$pageview"}, map[string]any{"id": "purchase"}}, "date_from": "-1d"})
		if st != 200 {
			t.Fatalf("%d %v", st, body)
		}
		for i, ev := range []string{"$pageview", "purchase"} {
			series := body["result"].([]any)[i].(map[string]any)
			if series["count"] != float64(sent[ev]) {
				t.Fatalf("%s counted %v, sent %d", ev, series["count"], sent[ev])
			}
		}
	})
	t.Run("the anonymous visitor and the user are one person", func(t *testing.T) {
		st, body := call(t, s.h, "POST", fmt.Sprintf("/api/projects/%d/insights/funnel/", s.a.ProjectID), s.a.PersonalAPIKey,
			map[string]any{"events": []any{map[string]any{"id": "$pageview", "order": 0}, map[string]any{"id": "purchase", "order": 1}}, "date_from": "-1d"})
		if st != 200 {
			t.Fatalf("%d %v", st, body)
		}
		steps := body["result"].([]any)
		if steps[0].(map[string]any)["count"] != float64(1) || steps[1].(map[string]any)["count"] != float64(1) {
			t.Fatalf("the pageviews (%s) and purchases (%s) must be one converting person: %v", anon, user, steps)
		}
		st, body = call(t, s.h, "POST", fmt.Sprintf("/api/projects/%d/insights/trend/", s.a.ProjectID), s.a.PersonalAPIKey,
			map[string]any{"events": []any{map[string]any{"id": "$pageview", "math": "dau"}}, "date_from": "-1d", "display": "BoldNumber"})
		if st != 200 || body["result"].([]any)[0].(map[string]any)["aggregated_value"] != float64(1) {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("the events list shows the user's person on the anonymous events", func(t *testing.T) {
		anonEvents, _ := s.eventList(t, s.events(s.a.ProjectID)+"?distinct_id="+anon+"&limit=1")
		userEvents, _ := s.eventList(t, s.events(s.a.ProjectID)+"?event=purchase&limit=1")
		if len(anonEvents) != 1 || len(userEvents) != 1 {
			t.Fatalf("%v %v", anonEvents, userEvents)
		}
		a, u := anonEvents[0]["person"].(map[string]any), userEvents[0]["person"].(map[string]any)
		if a["uuid"] != u["uuid"] || u["properties"].(map[string]any)["plan"] != "pro" {
			t.Fatalf("anonymous %v, user %v", a, u)
		}
	})
}

// sdkCallback counts what posthog-go reports.
type sdkCallback struct {
	mu       sync.Mutex
	ok, fail int
	errs     []string
}

func (c *sdkCallback) Success(posthog.APIMessage) { c.mu.Lock(); c.ok++; c.mu.Unlock() }
func (c *sdkCallback) Failure(_ posthog.APIMessage, err error) {
	c.mu.Lock()
	c.fail++
	c.errs = append(c.errs, err.Error())
	c.mu.Unlock()
}
func (c *sdkCallback) Logf(string, ...any) {}
func (c *sdkCallback) Errorf(format string, args ...any) {
	c.mu.Lock()
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
	c.mu.Unlock()
}

func TestGoSDKFlowIsStoredAndCounted(t *testing.T) {
	s := newSDKServer(t)
	cb := &sdkCallback{}
	client, err := posthog.NewWithConfig(s.a.ProjectAPIToken, posthog.Config{
		Endpoint: s.base, BatchSize: 4, Interval: 20 * time.Millisecond, Callback: cb, Logger: cb,
		RetryAfter: func(int) time.Duration { return time.Millisecond },
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := map[string]int{}
	enqueue := func(m posthog.Message, event string) {
		t.Helper()
		if err := client.Enqueue(m); err != nil {
			t.Fatal(err)
		}
		sent[event]++
	}
	for i := range 12 {
		// No Uuid: the SDK sends "uuid": "" on every event.
		enqueue(posthog.Capture{DistinctId: "anon-go", Event: "$pageview",
			Properties: posthog.NewProperties().Set("$current_url", fmt.Sprintf("https://shop.example/p/%d", i))}, "$pageview")
	}
	enqueue(posthog.Identify{DistinctId: "go-user", Properties: posthog.NewProperties().Set("email", "go@example.com").Set("plan", "pro")}, "$identify")
	enqueue(posthog.Alias{DistinctId: "go-user", Alias: "anon-go"}, "$create_alias")
	enqueue(posthog.GroupIdentify{Type: "company", Key: "acme", Properties: posthog.NewProperties().Set("name", "Acme")}, "$groupidentify")
	for i := range 5 {
		enqueue(posthog.Capture{DistinctId: "go-user", Event: "purchase", Properties: posthog.NewProperties().Set("amount", 10*(i+1)),
			Groups: posthog.NewGroups().Set("company", "acme")}, "purchase")
	}
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range sent {
		total += n
	}
	if cb.ok != total || cb.fail != 0 || len(cb.errs) > 0 {
		t.Fatalf("the SDK sent %d of %d, %d failed: %v", cb.ok, total, cb.fail, cb.errs)
	}
	s.checkFlow(t, sent, "anon-go", "go-user")
	t.Run("the group identified is stored and its purchases are in it", func(t *testing.T) {
		if got := groupTypesOf(t, s.fixture, s.a.ProjectID, s.a.PersonalAPIKey); got != "0:company" {
			t.Fatalf("types %q", got)
		}
		var g apiGroup
		if code := getJSON(t, s.fixture, fmt.Sprintf("/api/projects/%d/groups/find?group_type_index=0&group_key=acme", s.a.ProjectID),
			s.a.PersonalAPIKey, &g); code != 200 || string(g.GroupProperties) != `{"name":"Acme"}` {
			t.Fatalf("%d %+v", code, g)
		}
		st, body := call(t, s.h, "POST", fmt.Sprintf("/api/projects/%d/insights/trend/", s.a.ProjectID), s.a.PersonalAPIKey,
			map[string]any{"events": []any{map[string]any{"id": "purchase"}}, "date_from": "-1d", "display": "BoldNumber",
				"properties": []any{map[string]any{"key": "name", "value": "Acme", "type": "group", "group_type_index": 0}}})
		if st != 200 || body["result"].([]any)[0].(map[string]any)["aggregated_value"] != float64(sent["purchase"]) {
			t.Fatalf("%d %v", st, body)
		}
	})
}

// The Node SDK (posthog-node, pinned in scripts/sdk/node) runs in node,
// which every machine here has: a missing node or SDK fails the test
// rather than skipping it, so a broken set-up cannot pass unnoticed.
func TestNodeSDKFlowIsStoredAndCounted(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on the PATH: the Node SDK client test needs it (install Node.js)")
	}
	dir, err := filepath.Abs(filepath.Join("..", "scripts", "sdk", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "posthog-node", "package.json")); err != nil {
		t.Fatalf("posthog-node is not installed in %s: run `make test` or scripts/setup.sh, which install it (%v)", dir, err)
	}
	s := newSDKServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "flow.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "INSIGHTD_HOST="+s.base, "INSIGHTD_TOKEN="+s.a.ProjectAPIToken)
	out, err := cmd.Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	if err != nil {
		t.Fatalf("node flow.mjs: %v\n%s\n%s", err, out, stderr)
	}
	var report struct {
		Sent   map[string]int `json:"sent"`
		Errors []string       `json:"errors"`
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &report); err != nil {
		t.Fatalf("the flow's report: %v in %s", err, out)
	}
	if len(report.Errors) > 0 || len(report.Sent) == 0 {
		t.Fatalf("the SDK reported %v", report)
	}
	s.checkFlow(t, report.Sent, "anon-node", "node-user")
}
