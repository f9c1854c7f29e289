package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/insightd/insightd/api"
	"github.com/insightd/insightd/metadata/metadatatest"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/olap/olaptest"
	"github.com/insightd/insightd/querybuilder"
)

var engine olap.Engine

func TestMain(m *testing.M) {
	olaptest.Main(m, time.Minute, func(e *olap.Embedded) { engine = e })
}

// server is a running insightd (httptest, real stores) with a key.
type server struct {
	base, key string
}

func newServer(t *testing.T) (*server, int64, string) {
	t.Helper()
	store := metadatatest.NewStore(t)
	a, err := store.Bootstrap(context.Background(), "ada@example.com", "Acme", "Source")
	if err != nil {
		t.Fatal(err)
	}
	cfg := api.Config{Addr: "127.0.0.1:0", BodyLimit: 20 << 20, ShutdownTimeout: 5 * time.Second,
		Limits: querybuilder.DefaultLimits(), Schema: querybuilder.DefaultSchema()}
	s := api.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), store, engine)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &server{base: srv.URL, key: a.PersonalAPIKey}, a.ProjectID, a.ProjectAPIToken
}

// call sends a JSON request and decodes the answer; a status other than
// want fails the test.
func (s *server) call(t *testing.T, method, path string, body any, want int) any {
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
	req.Header.Set("Authorization", "Bearer "+s.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	var out any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s: not JSON: %s", method, path, b)
		}
	}
	return out
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

func id(v any) int64 { return int64(obj(v)["id"].(float64)) }

// seed writes a project worth copying: events with an $identify, an
// alias and a merge, person properties, groups, and every kind of
// metadata, an action used in a cohort... here a cohort used in an
// action (insightd's cohorts do not take action behaviours) used in an
// insight on a dashboard.
func seed(t *testing.T, s *server, project int64, token string) {
	now := time.Now().UTC().Truncate(time.Hour)
	var batch []map[string]any
	ev := func(name, distinct string, at time.Time, props map[string]any) {
		if props == nil {
			props = map[string]any{}
		}
		batch = append(batch, map[string]any{"event": name, "distinct_id": distinct, "timestamp": at.Format(time.RFC3339Nano), "properties": props})
	}
	for day := 6; day >= 0; day-- {
		at := now.Add(-time.Duration(day) * 24 * time.Hour)
		for u := 0; u < 6; u++ {
			if (u+day)%3 == 0 && day != 6 {
				continue
			}
			d := fmt.Sprintf("user-%d", u)
			ev("$pageview", d, at.Add(time.Duration(u)*time.Minute), map[string]any{"$current_url": fmt.Sprintf("/p/%d", day%2), "$groups": map[string]any{"company": fmt.Sprintf("co-%d", u%2)}})
			if u%2 == 0 {
				ev("signup", d, at.Add(time.Duration(u)*time.Minute+time.Second), map[string]any{"plan": "pro"})
			}
		}
	}
	start := now.Add(-5 * 24 * time.Hour)
	ev("$pageview", "anon-1", start.Add(time.Second), nil)
	ev("$identify", "user-1", start.Add(2*time.Second), map[string]any{"$anon_distinct_id": "anon-1", "$set": map[string]any{"email": "one@example.com", "plan": "pro"}})
	ev("$pageview", "alias-2", start.Add(3*time.Second), nil)
	ev("$create_alias", "user-2", start.Add(4*time.Second), map[string]any{"alias": "alias-2"})
	ev("$pageview", "user-9", start.Add(5*time.Second), map[string]any{"$set": map[string]any{"plan": "free"}})
	ev("$merge_dangerously", "user-3", start.Add(6*time.Second), map[string]any{"alias": "user-9"})
	ev("$set", "user-4", start.Add(7*time.Second), map[string]any{"$set": map[string]any{"email": "four@example.com"}, "$set_once": map[string]any{"first": "yes"}})
	ev("$groupidentify", "user-0", start.Add(8*time.Second), map[string]any{"$group_type": "company", "$group_key": "co-0", "$group_set": map[string]any{"name": "Zero Inc", "size": 10}})
	ev("$groupidentify", "user-1", start.Add(9*time.Second), map[string]any{"$group_type": "company", "$group_key": "co-1", "$group_set": map[string]any{"name": "One Ltd"}})
	ev("$groupidentify", "user-1", start.Add(10*time.Second), map[string]any{"$group_type": "team", "$group_key": "t-1", "$group_set": map[string]any{"name": "Team"}})
	// Two events in the same microsecond: the cursor's uuid breaks ties.
	ev("tie", "user-5", start.Add(11*time.Second), nil)
	ev("tie", "user-4", start.Add(11*time.Second), nil)
	s.call(t, "POST", "/batch/", map[string]any{"api_key": token, "batch": batch}, 200)

	p := fmt.Sprintf("/api/projects/%d/", project)
	static := id(s.call(t, "POST", p+"cohorts/", map[string]any{"name": "Hand picked", "is_static": true, "persons": []string{"user-0", "user-3"}}, 201))
	waitCohort(t, s, project, static)
	pro := id(s.call(t, "POST", p+"cohorts/", map[string]any{"name": "Pro", "filters": map[string]any{"properties": map[string]any{"type": "OR",
		"values": []any{map[string]any{"type": "OR", "values": []any{map[string]any{"type": "person", "key": "plan", "value": "pro"}}}}}}}, 201))
	waitCohort(t, s, project, pro)
	// A cohort of cohorts, listed before what it names once ids are sorted.
	both := id(s.call(t, "POST", p+"cohorts/", map[string]any{"name": "Both", "filters": map[string]any{"properties": map[string]any{"type": "OR",
		"values": []any{map[string]any{"type": "AND", "values": []any{map[string]any{"type": "cohort", "key": "id", "value": pro},
			map[string]any{"type": "cohort", "key": "id", "value": static, "negation": true}}}}}}}, 201))
	signup := id(s.call(t, "POST", p+"actions/", map[string]any{"name": "Pro signup", "tags": []string{"growth"}, "steps": []any{
		map[string]any{"event": "signup", "properties": []any{map[string]any{"type": "cohort", "key": "id", "value": pro}}},
		map[string]any{"event": "$pageview", "url": "/p/1", "url_matching": "contains"}}}, 201))

	trend := id(s.call(t, "POST", p+"insights/", map[string]any{"name": "Signups by cohort", "description": "legacy", "tags": []string{"kpi"}, "favorited": true, "saved": true,
		"filters": map[string]any{"insight": "TRENDS", "date_from": "-7d", "interval": "day",
			"actions":    []any{map[string]any{"id": signup, "type": "actions", "order": 0}},
			"events":     []any{map[string]any{"id": "$pageview", "type": "events", "order": 1, "math": "dau"}},
			"properties": []any{map[string]any{"type": "cohort", "key": "id", "value": both}}, "breakdown_type": "cohort", "breakdown": []any{pro, static}}}, 201))
	funnel := id(s.call(t, "POST", p+"insights/", map[string]any{"name": "Funnel", "saved": true, "query": map[string]any{"kind": "InsightVizNode", "source": map[string]any{
		"kind": "FunnelsQuery", "dateRange": map[string]any{"date_from": "-7d"},
		"series": []any{map[string]any{"kind": "EventsNode", "event": "$pageview"}, map[string]any{"kind": "ActionsNode", "id": signup}}}}}, 201))
	retention := id(s.call(t, "POST", p+"insights/", map[string]any{"name": "Retention", "saved": true, "filters": map[string]any{"insight": "RETENTION",
		"target_entity": map[string]any{"id": "$pageview", "type": "events"}, "returning_entity": map[string]any{"id": signup, "type": "actions"},
		"period": "Day", "total_intervals": 7}}, 201))
	groupsTrend := id(s.call(t, "POST", p+"insights/", map[string]any{"name": "Companies", "saved": true, "query": map[string]any{"kind": "InsightVizNode", "source": map[string]any{
		"kind": "TrendsQuery", "dateRange": map[string]any{"date_from": "-7d"},
		"series": []any{map[string]any{"kind": "EventsNode", "event": "$pageview", "math": "unique_group", "math_group_type_index": 0}}}}}, 201))

	dash := id(s.call(t, "POST", p+"dashboards/", map[string]any{"name": "Growth", "description": "all of it", "pinned": true, "filters": map[string]any{"date_from": "-14d"}}, 201))
	s.call(t, "POST", p+"dashboards/", map[string]any{"name": "Empty"}, 201)
	for i, in := range []int64{trend, funnel, retention, groupsTrend} {
		s.call(t, "PATCH", fmt.Sprintf("%sinsights/%d/", p, in), map[string]any{"dashboards": []int64{dash}}, 200)
		_ = i
	}
	d := obj(s.call(t, "GET", fmt.Sprintf("%sdashboards/%d/", p, dash), nil, 200))
	var tiles []any
	for i, tl := range d["tiles"].([]any) {
		tiles = append(tiles, map[string]any{"id": obj(tl)["id"], "color": []string{"blue", "green", "purple", "black"}[i],
			"layouts": map[string]any{"sm": map[string]any{"x": (i % 2) * 6, "y": 8 - (i/2)*4, "w": 6, "h": 4}}})
	}
	tiles = append(tiles, map[string]any{"text": map[string]any{"body": "# Notes"}, "layouts": map[string]any{"sm": map[string]any{"x": 0, "y": 20, "w": 12, "h": 2}}})
	s.call(t, "PATCH", fmt.Sprintf("%sdashboards/%d/", p, dash), map[string]any{"tiles": tiles}, 200)
	s.call(t, "POST", p+"annotations/", map[string]any{"content": "Launch", "date_marker": start.Format(time.RFC3339), "scope": "project"}, 201)
	s.call(t, "POST", p+"annotations/", map[string]any{"content": "On the trend", "date_marker": start.Format(time.RFC3339), "scope": "dashboard_item", "dashboard_item": trend}, 201)
}

func runImport(t *testing.T, s *server, from, to int64, checkpoint string, only string) *Report {
	t.Helper()
	parts, err := ParseOnly(only)
	if err != nil {
		t.Fatal(err)
	}
	im, err := New(Config{Source: NewClient(s.base, s.key, from), Target: NewClient(s.base, s.key, to),
		Only: parts, Checkpoint: checkpoint, PageSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	r, err := im.Run(context.Background())
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return r
}

func TestImportCopiesAProjectOnce(t *testing.T) {
	s, src, token := newServer(t)
	seed(t, s, src, token)
	dst := id(s.call(t, "POST", "/api/organizations/@current/projects/", map[string]any{"name": "Target"}, 201))
	checkpoint := filepath.Join(t.TempDir(), "checkpoint.json")
	first := runImport(t, s, src, dst, checkpoint, "")
	if first.Events.Copied != first.Events.Total || first.Events.Total == 0 {
		t.Fatalf("first run copied %d of %d events", first.Events.Copied, first.Events.Total)
	}
	if first.Corrections != 0 {
		t.Errorf("the copied events should make the persons and groups alike; %d corrections were sent (%+v %+v)", first.Corrections, first.Persons, first.Groups)
	}
	second := runImport(t, s, src, dst, checkpoint, "")
	if second.Events.Copied != 0 || second.Insights.Copied != 0 || second.Dashboards.Copied != 0 || second.Cohorts.Copied != 0 ||
		second.Actions.Copied != 0 || second.Annotations.Copied != 0 || second.Corrections != 0 {
		t.Errorf("the second run with the checkpoint copied again: %+v", second)
	}
	// Without the checkpoint the events are sent again: the target's dedup
	// counts each once.
	third := runImport(t, s, src, dst, filepath.Join(t.TempDir(), "other.json"), "events,persons,groups")
	if third.Events.Copied != third.Events.Total || third.Corrections != 0 {
		t.Errorf("the third run: %+v", third)
	}
	compareProjects(t, s, src, dst)
}

func waitCohort(t *testing.T, s *server, project, cohort int64) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if obj(s.call(t, "GET", fmt.Sprintf("/api/projects/%d/cohorts/%d/", project, cohort), nil, 200))["is_calculating"] != true {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("cohort %d is still calculating", cohort)
}
