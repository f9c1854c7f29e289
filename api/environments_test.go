package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"
)

// rawCall is call without decoding: the status and the body as sent.
func rawCall(t testing.TB, h http.Handler, method, path, key string, body any) (int, string) {
	t.Helper()
	var r *http.Request
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = httptest.NewRequest(method, path, bytes.NewReader(b))
		r.Header.Set("Content-Type", "application/json")
	} else {
		r = httptest.NewRequest(method, path, nil)
	}
	r.Host = "insightd.test"
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

// envRoute is one request to a project route, made under both prefixes.
type envRoute struct {
	method string
	// route is the route's pattern under /api/projects: ":project_id" is
	// the fixture's project, ":id" the fixture's resource named by id
	// (envFixture.ids); query is the query string, body the JSON body,
	// want the status under /api/projects.
	route, id, query string
	body             any
	want             int
}

// envFixture is a project holding one of every resource, with the ids the
// routes name.
type envFixture struct {
	*fixture
	ids map[string]string // "insight", "dashboard", ... -> id
}

func newEnvFixture(t *testing.T) *envFixture {
	t.Helper()
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	at := time.Now().UTC().Add(-time.Hour)
	var events []map[string]any
	for k, who := range []string{"u1", "u2", "u1"} {
		for s, name := range []string{"$pageview", "signup"} {
			events = append(events, map[string]any{"event": name, "distinct_id": who,
				"timestamp":  at.Add(time.Duration(k*10+s) * time.Minute).Format(time.RFC3339Nano),
				"properties": map[string]any{"$current_url": fmt.Sprintf("https://a.test/%d", s), "plan": "pro"}})
		}
	}
	f.capture(t, events...)
	ids := map[string]string{"missing": "987654321"}
	views := map[string]any{"events": []any{map[string]any{"id": "$pageview"}}}
	in := f.newInsight(t, map[string]any{"name": "Views", "filters": views})
	ids["insight"], ids["short_id"] = fmt.Sprint(in["id"]), in["short_id"].(string)
	d := f.newDashboard(t, map[string]any{"name": "Board"})
	ids["dashboard"] = fmt.Sprint(d["id"])
	if st, out := call(t, f.h, "PATCH", f.dashboard(f.a.ProjectID, d["id"]), key, map[string]any{"tiles": []any{
		map[string]any{"insight": in["id"]}, map[string]any{"text": map[string]any{"body": "Notes"}}}}); st != 200 {
		t.Fatalf("tiles: %d %v", st, out)
	}
	base := fmt.Sprintf("/api/projects/%d/", f.a.ProjectID)
	create := func(what, path string, body map[string]any) {
		st, out := call(t, f.h, "POST", base+path, key, body)
		if st != http.StatusCreated {
			t.Fatalf("create %s: %d %v", what, st, out)
		}
		ids[what] = fmt.Sprint(out["id"])
	}
	create("action", "actions/", map[string]any{"name": "Signed up", "steps": []any{map[string]any{"event": "signup"}}})
	create("annotation", "annotations/", map[string]any{"content": "Launch", "date_marker": at.Format(time.RFC3339)})
	create("cohort", "cohorts/", map[string]any{"name": "Pro", "groups": []any{map[string]any{"properties": []any{
		map[string]any{"key": "plan", "value": "pro", "type": "person"}}}}})
	// The cohort's members are computed in the background: wait, so its
	// answers stay put while both prefixes read it.
	for deadline := time.Now().Add(30 * time.Second); ; {
		_, co := call(t, f.h, "GET", base+"cohorts/"+ids["cohort"]+"/", key, nil)
		if co["is_calculating"] == false {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cohort not calculated: %v", co)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, persons := call(t, f.h, "GET", base+"persons/?distinct_id=u1", key, nil)
	_, evs := call(t, f.h, "GET", base+"events/?limit=1", key, nil)
	if len(persons["results"].([]any)) != 1 || len(evs["results"].([]any)) != 1 {
		t.Fatalf("persons %v events %v", persons, evs)
	}
	ids["person"] = fmt.Sprint(persons["results"].([]any)[0].(map[string]any)["id"])
	ids["event"] = fmt.Sprint(evs["results"].([]any)[0].(map[string]any)["id"])
	return &envFixture{fixture: f, ids: ids}
}

func jsonQuery(kv ...any) string {
	v := url.Values{}
	for k := 0; k < len(kv); k += 2 {
		s, ok := kv[k+1].(string)
		if !ok {
			b, _ := json.Marshal(kv[k+1])
			s = string(b)
		}
		if n, ok := kv[k+1].(int); ok {
			s = fmt.Sprint(n)
		}
		v.Set(kv[k].(string), s)
	}
	return v.Encode()
}

// envRoutes is one request to every route under /api/projects. Writes
// are ones whose answer does not depend on being made first (a change
// to what is already there, a refused body, an id that names nothing),
// so the answer under one prefix can be compared with the other's.
func envRoutes() []envRoute {
	pv := []any{map[string]any{"id": "$pageview"}}
	steps := []any{map[string]any{"id": "$pageview", "order": 0}, map[string]any{"id": "signup", "order": 1}}
	trend, funnel := jsonQuery("events", pv), jsonQuery("events", steps)
	retention := jsonQuery("target_entity", map[string]any{"id": "$pageview", "type": "events"},
		"returning_entity", map[string]any{"id": "$pageview", "type": "events"})
	today := time.Now().UTC().Format("2006-01-02")
	actors := map[string]map[string]any{
		"trends":             {"events": pv, "series": 0, "bucket": today, "entity_id": "$pageview"},
		"funnel":             {"events": steps, "funnel_step": 1},
		"funnel/correlation": {"events": steps, "funnel_correlation_person_entity": map[string]any{"id": "$pageview", "type": "events"}, "funnel_correlation_person_converted": "true"},
		"lifecycle":          {"events": pv, "shown_as": "Lifecycle", "lifecycle_type": "new", "target_date": today + "T00:00:00Z"},
		"path":               {"path_end_key": "2_signup"},
		"retention":          {"target_entity": map[string]any{"id": "$pageview", "type": "events"}, "selected_interval": 0},
		"stickiness":         {"events": pv, "shown_as": "Stickiness", "entity_id": "$pageview", "series": 0, "stickiness_days": 1},
	}
	rs := []envRoute{
		{"GET", "", "", "", nil, 200},
		{"GET", "/:project_id", "", "", nil, 200},
		{"PATCH", "/:project_id", "", "", map[string]any{"name": "Acme web"}, 200},
		{"PUT", "/:project_id", "", "", map[string]any{"name": "Acme web"}, 200},
		{"POST", "/:project_id/query", "", "", map[string]any{"query": map[string]any{"kind": "TrendsQuery",
			"series": []any{map[string]any{"kind": "EventsNode", "event": "$pageview"}}}}, 200},

		{"GET", "/:project_id/insights", "", "", nil, 200},
		{"POST", "/:project_id/insights", "", "", map[string]any{"filters": "not an object"}, 400},
		{"GET", "/:project_id/insights/activity", "", "", nil, 200},
		{"GET", "/:project_id/insights/my_last_viewed", "", "", nil, 200},
		{"POST", "/:project_id/insights/cancel", "", "", map[string]any{"client_query_id": "environments-test"}, 201},
		{"GET", "/:project_id/insights/:id", "insight", "", nil, 200},
		{"PATCH", "/:project_id/insights/:id", "insight", "", map[string]any{"name": "Views"}, 200},
		{"PUT", "/:project_id/insights/:id", "short_id", "", map[string]any{"name": "Views"}, 200},
		{"DELETE", "/:project_id/insights/:id", "insight", "", nil, 405},
		{"POST", "/:project_id/insights/:id/viewed", "insight", "", map[string]any{}, 200},
		{"GET", "/:project_id/insights/:id/activity", "insight", "", nil, 200},
		{"GET", "/:project_id/insights/:id/sharing", "insight", "", nil, 200},
		{"PATCH", "/:project_id/insights/:id/sharing", "insight", "", map[string]any{"enabled": true}, 200},
		{"PUT", "/:project_id/insights/:id/sharing", "short_id", "", map[string]any{"enabled": true}, 200},
		{"GET", "/:project_id/insights/trend", "", trend, nil, 200},
		{"POST", "/:project_id/insights/trend", "", "", map[string]any{"events": pv, "interval": "hour"}, 200},
		{"GET", "/:project_id/insights/funnel", "", funnel, nil, 200},
		{"POST", "/:project_id/insights/funnel", "", "", map[string]any{"events": steps, "funnel_viz_type": "steps"}, 200},
		{"GET", "/:project_id/insights/funnel/correlation", "", funnel, nil, 200},
		{"POST", "/:project_id/insights/funnel/correlation", "", "", map[string]any{"events": steps, "funnel_correlation_type": "properties", "funnel_correlation_names": []any{"plan"}}, 200},
		{"GET", "/:project_id/insights/path", "", "", nil, 200},
		{"POST", "/:project_id/insights/path", "", "", map[string]any{"include_event_types": []any{"$pageview"}}, 200},
		{"GET", "/:project_id/insights/retention", "", retention, nil, 200},
		{"POST", "/:project_id/insights/retention", "", "", map[string]any{"period": "Week"}, 200},
		{"GET", "/:project_id/insights/timing", "", funnel, nil, 200},
		{"POST", "/:project_id/insights/timing", "", "", map[string]any{"events": steps}, 200},

		{"GET", "/:project_id/dashboards", "", "", nil, 200},
		{"POST", "/:project_id/dashboards", "", "", map[string]any{"name": 7}, 400},
		{"GET", "/:project_id/dashboards/:id", "dashboard", "", nil, 200},
		{"PATCH", "/:project_id/dashboards/:id", "dashboard", "", map[string]any{"name": "Board"}, 200},
		{"PUT", "/:project_id/dashboards/:id", "dashboard", "", map[string]any{"name": "Board"}, 200},
		{"DELETE", "/:project_id/dashboards/:id", "dashboard", "", nil, 405},
		{"GET", "/:project_id/dashboards/:id/activity", "dashboard", "", nil, 200},

		{"GET", "/:project_id/actions", "", "", nil, 200},
		{"POST", "/:project_id/actions", "", "", map[string]any{"name": ""}, 400},
		{"GET", "/:project_id/actions/:id", "action", "", nil, 200},
		{"PATCH", "/:project_id/actions/:id", "action", "", map[string]any{"name": "Signed up"}, 200},
		{"PUT", "/:project_id/actions/:id", "action", "", map[string]any{"name": "Signed up", "steps": []any{map[string]any{"event": "signup"}}}, 200},
		{"DELETE", "/:project_id/actions/:id", "missing", "", nil, 404},
		{"GET", "/:project_id/actions/:id/activity", "action", "", nil, 200},

		{"GET", "/:project_id/annotations", "", "", nil, 200},
		{"POST", "/:project_id/annotations", "", "", map[string]any{"scope": "galaxy"}, 400},
		{"GET", "/:project_id/annotations/activity", "", "", nil, 200},
		{"GET", "/:project_id/annotations/:id", "annotation", "", nil, 200},
		{"PATCH", "/:project_id/annotations/:id", "annotation", "", map[string]any{"content": "Launch"}, 200},
		{"PUT", "/:project_id/annotations/:id", "annotation", "", map[string]any{"content": "Launch"}, 200},
		{"DELETE", "/:project_id/annotations/:id", "missing", "", nil, 404},
		{"GET", "/:project_id/annotations/:id/activity", "annotation", "", nil, 200},

		{"GET", "/:project_id/cohorts", "", "", nil, 200},
		{"POST", "/:project_id/cohorts", "", "", map[string]any{"groups": "none"}, 400},
		{"GET", "/:project_id/cohorts/:id", "cohort", "", nil, 200},
		{"PATCH", "/:project_id/cohorts/:id", "cohort", "", map[string]any{"description": 3}, 400},
		{"PUT", "/:project_id/cohorts/:id", "cohort", "", map[string]any{"name": 3}, 400},
		{"DELETE", "/:project_id/cohorts/:id", "missing", "", nil, 404},
		{"GET", "/:project_id/cohorts/:id/persons", "cohort", "", nil, 200},
		{"POST", "/:project_id/cohorts/:id/calculate", "missing", "", nil, 404},
		{"GET", "/:project_id/cohorts/:id/activity", "cohort", "", nil, 200},

		{"GET", "/:project_id/events", "", "event=signup", nil, 200},
		{"GET", "/:project_id/events/values", "", "key=plan", nil, 200},
		{"GET", "/:project_id/events/:id", "event", "", nil, 200},
		{"GET", "/:project_id/event_definitions", "", "search=sign", nil, 200},
		{"GET", "/:project_id/event_definitions/:id", "missing", "", nil, 404},
		{"GET", "/:project_id/property_definitions", "", "event_names=%5B%22signup%22%5D", nil, 200},
		{"GET", "/:project_id/property_definitions/:id", "missing", "", nil, 404},
		{"POST", "/:project_id/mcp_tools/execute_sql", "", "", map[string]any{"args": map[string]any{"query": "SELECT count() FROM events"}}, 200},
		{"POST", "/:project_id/mcp_tools/read_taxonomy", "", "", map[string]any{"args": map[string]any{"query": map[string]any{"kind": "events"}}}, 200},

		{"GET", "/:project_id/persons", "", "", nil, 200},
		{"GET", "/:project_id/persons/values", "", "key=plan", nil, 200},
		{"GET", "/:project_id/persons/:id", "person", "", nil, 200},
		{"PATCH", "/:project_id/persons/:id", "person", "", map[string]any{"properties": "flat"}, 400},
		{"PUT", "/:project_id/persons/:id", "person", "", map[string]any{"properties": "flat"}, 400},
		{"DELETE", "/:project_id/persons/:id", "missing", "", nil, 404},

		{"GET", "/:project_id/groups_types", "", "", nil, 200},
		{"GET", "/:project_id/groups", "", "group_type_index=0", nil, 200},
		{"GET", "/:project_id/groups/find", "", "group_type_index=0&group_key=nobody", nil, 404},
	}
	for _, route := range []string{"trends", "funnel", "funnel/correlation", "lifecycle", "path", "retention", "stickiness"} {
		var kv []any
		for k, v := range actors[route] {
			kv = append(kv, k, v)
		}
		rs = append(rs, envRoute{"GET", "/:project_id/persons/" + route, "", jsonQuery(kv...), nil, 200},
			envRoute{"POST", "/:project_id/persons/" + route, "", "", actors[route], 200})
	}
	return rs
}

// PostHog serves every project resource under /api/environments/:id/ as
// under /api/projects/:id/ (one id): so does insightd, for every route.
func TestEveryProjectRouteAnswersTheSameUnderEnvironments(t *testing.T) {
	t.Parallel()
	f := newEnvFixture(t)
	key := f.a.PersonalAPIKey
	rows := envRoutes()
	t.Run("every route under /api/projects has a row", func(t *testing.T) {
		covered := map[string]bool{}
		for _, r := range rows {
			covered[r.method+" /api/projects"+r.route] = true
		}
		var missing []string
		for _, r := range f.s.router().Routes() {
			if (r.Path == "/api/projects" || strings.HasPrefix(r.Path, "/api/projects/")) && !covered[r.Method+" "+r.Path] {
				missing = append(missing, r.Method+" "+r.Path)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Fatalf("add a row to envRoutes for:\n  %s", strings.Join(missing, "\n  "))
		}
	})
	for _, r := range rows {
		path := strings.Replace(r.route, ":project_id", fmt.Sprint(f.a.ProjectID), 1)
		if r.id != "" {
			path = strings.Replace(path, ":id", f.ids[r.id], 1)
		}
		path += "/"
		if r.query != "" {
			path += "?" + r.query
		}
		t.Run(r.method+" "+r.route+" answers alike", func(t *testing.T) {
			// The first request makes what a write or an analysis leaves
			// (a change, a cached result); the two compared come after it.
			rawCall(t, f.h, r.method, "/api/projects"+path, key, r.body)
			envStatus, envBody := rawCall(t, f.h, r.method, "/api/environments"+path, key, r.body)
			status, body := rawCall(t, f.h, r.method, "/api/projects"+path, key, r.body)
			if status != r.want {
				t.Fatalf("/api/projects%s: %d, want %d: %.400s", path, status, r.want, body)
			}
			// Links back keep the prefix the client used.
			envBody = strings.ReplaceAll(envBody, "/api/environments/", "/api/projects/")
			if envStatus != status || envBody != body {
				t.Fatalf("/api/environments%s: %d %.600s\n/api/projects%s: %d %.600s", path, envStatus, envBody, path, status, body)
			}
		})
	}
}

func TestEnvironmentsIsTheSameProjectWithTheSameRules(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	env := fmt.Sprintf("/api/environments/%d/", f.a.ProjectID)
	proj := fmt.Sprintf("/api/projects/%d/", f.a.ProjectID)
	t.Run("an insight created under environments is the project's, by id and by short id", func(t *testing.T) {
		st, created := call(t, f.h, "POST", env+"insights/", key, map[string]any{"name": "Made there"})
		if st != http.StatusCreated {
			t.Fatalf("create: %d %v", st, created)
		}
		for _, ref := range []any{created["id"], created["short_id"]} {
			st, out := call(t, f.h, "GET", fmt.Sprintf("%sinsights/%v/", proj, ref), key, nil)
			if st != 200 || out["id"] != created["id"] || out["name"] != "Made there" {
				t.Fatalf("read under projects: %d %v", st, out)
			}
		}
	})
	t.Run("a soft delete under environments deletes the project's action", func(t *testing.T) {
		st, a := call(t, f.h, "POST", proj+"actions/", key, map[string]any{"name": "Gone", "steps": []any{map[string]any{"event": "x"}}})
		if st != http.StatusCreated {
			t.Fatalf("create: %d %v", st, a)
		}
		if st, out := call(t, f.h, "PATCH", fmt.Sprintf("%sactions/%v/", env, a["id"]), key, map[string]any{"deleted": true}); st != 200 {
			t.Fatalf("delete: %d %v", st, out)
		}
		if st, _ := call(t, f.h, "GET", fmt.Sprintf("%sactions/%v/", proj, a["id"]), key, nil); st != 404 {
			t.Fatalf("read after delete: %d", st)
		}
	})
	t.Run("a page's next link keeps the environments prefix", func(t *testing.T) {
		f.newInsight(t, map[string]any{"name": "Second"})
		st, page := call(t, f.h, "GET", env+"insights/?limit=1", key, nil)
		next, _ := page["next"].(string)
		if st != 200 || !strings.HasPrefix(next, "http://insightd.test"+env+"insights/?") {
			t.Fatalf("%d next %q", st, next)
		}
	})
	readOnly := f.key(t, "ada@example.com", "insight:read")
	for _, tc := range []struct {
		name, method, path, key string
		body                    any
		want                    int
	}{
		{"a key without the write scope is refused alike", "POST", "%d/insights/", readOnly, map[string]any{}, 403},
		{"a key with the read scope reads alike", "GET", "%d/insights/", readOnly, nil, 200},
		{"a key without the resource's scope is refused alike", "GET", "%d/dashboards/", readOnly, nil, 403},
		{"no key is a 401 alike", "GET", "%d/insights/", "", nil, 401},
		{"another organization's project is a 404 alike", "GET", "%d/insights/", f.b.PersonalAPIKey, nil, 404},
		{"a route that does not exist is the same 404", "GET", "%d/no_such_resource/", key, nil, 404},
		{"a method a route does not take is the same 405", "POST", "%d/events/", key, map[string]any{}, 405},
		{"the query route is refused alike without its body", "POST", "%d/query/", key, map[string]any{}, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := fmt.Sprintf(tc.path, f.a.ProjectID)
			envStatus, envBody := rawCall(t, f.h, tc.method, "/api/environments/"+path, tc.key, tc.body)
			status, body := rawCall(t, f.h, tc.method, "/api/projects/"+path, tc.key, tc.body)
			if status != tc.want || envStatus != status || envBody != body {
				t.Fatalf("environments %d %s\nprojects %d %s (want %d)", envStatus, envBody, status, body, tc.want)
			}
		})
	}
	t.Run("a longer first segment is no alias", func(t *testing.T) {
		st, out := call(t, f.h, "GET", fmt.Sprintf("/api/environmentsx/%d/insights/", f.a.ProjectID), key, nil)
		if st != 404 || out["code"] != "not_found" {
			t.Fatalf("%d %v", st, out)
		}
	})
}
