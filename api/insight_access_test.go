package api

import (
	"encoding/json"
	"strings"
	"testing"
)

// callEndpoint calls e with key; the body is decoded when it is a JSON
// object (my_last_viewed answers a list).
func callEndpoint(t *testing.T, f *fixture, e insightEndpoint, key string) (int, map[string]any) {
	t.Helper()
	body := ""
	if e.body != nil {
		b, _ := json.Marshal(e.body)
		body = string(b)
	}
	w := send(t, f, e.method, e.path, key, body)
	var out map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	return w.Code, out
}

// insightEndpoint is one route of the insights API with a body that
// works on it.
type insightEndpoint struct {
	name, method, path string
	body               any
	scope              string // the scope it needs
}

func (f *fixture) insightEndpoints(projectID int64, id any) []insightEndpoint {
	list, one := f.insights(projectID), f.insight(projectID, id)
	return []insightEndpoint{
		{"listing insights", "GET", list, nil, "insight:read"},
		{"creating an insight", "POST", list, map[string]any{"name": "x"}, "insight:write"},
		{"retrieving an insight", "GET", one, nil, "insight:read"},
		{"updating an insight", "PATCH", one, map[string]any{"name": "hijack"}, "insight:write"},
		{"deleting an insight", "DELETE", one, nil, "insight:write"},
		{"viewing an insight", "POST", one + "viewed/", nil, "insight:read"},
		{"reading my last viewed insights", "GET", list + "my_last_viewed/", nil, "insight:read"},
		{"reading an insight's activity", "GET", one + "activity/", nil, "activity_log:read"},
		{"reading the project's insight activity", "GET", list + "activity/", nil, "activity_log:read"},
		{"reading an insight's sharing", "GET", one + "sharing/", nil, "sharing_configuration:read"},
		{"changing an insight's sharing", "PATCH", one + "sharing/", map[string]any{"enabled": true}, "sharing_configuration:write"},
		{"cancelling a query", "POST", list + "cancel/", map[string]any{"client_query_id": "q1"}, "insight:read"},
		// Last, so that the calls before it still find the insight.
		{"soft deleting an insight", "PATCH", one, map[string]any{"deleted": true}, "insight:write"},
	}
}

func TestInsightScopes(t *testing.T) {
	f := newFixture(t)
	id := f.newInsight(t, map[string]any{"name": "Scoped"})["id"]
	wrong := map[string]string{ // a key with a scope that is not the one needed
		"insight:read": "project:read", "insight:write": "insight:read", "activity_log:read": "insight:write",
		"sharing_configuration:read": "insight:write", "sharing_configuration:write": "sharing_configuration:read",
	}
	for _, e := range f.insightEndpoints(f.a.ProjectID, id) {
		t.Run(e.name+" without "+e.scope+" is 403 naming it", func(t *testing.T) {
			st, body := callEndpoint(t, f, e, f.key(t, "ada@example.com", wrong[e.scope]))
			if st != 403 || body["code"] != "permission_denied" || !strings.Contains(body["detail"].(string), e.scope) {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
	// Run the allowed calls after the refusals: one of them soft-deletes.
	for _, e := range f.insightEndpoints(f.a.ProjectID, id) {
		t.Run(e.name+" with only "+e.scope+" is allowed", func(t *testing.T) {
			st, body := callEndpoint(t, f, e, f.key(t, "ada@example.com", e.scope))
			if st >= 400 && !(e.method == "DELETE" && st == 405) {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
}

func TestInsightsOfOtherOrganizationsDoNotExist(t *testing.T) {
	f := newFixture(t)
	i := f.newInsight(t, map[string]any{"name": "Ada's"})
	bob := f.b.PersonalAPIKey
	st, bobs := call(t, f.h, "POST", f.insights(f.b.ProjectID), bob, map[string]any{"name": "Bob's"})
	if st != 201 {
		t.Fatal(st, bobs)
	}
	for _, e := range f.insightEndpoints(f.a.ProjectID, i["id"]) {
		t.Run(e.name+" in another organization's project is 404", func(t *testing.T) {
			if st, body := callEndpoint(t, f, e, bob); st != 404 || body["code"] != "not_found" {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
	for _, e := range f.insightEndpoints(f.b.ProjectID, i["id"]) {
		if e.path == f.insights(f.b.ProjectID) || strings.HasPrefix(e.name, "reading my") || strings.Contains(e.name, "project's") ||
			strings.HasPrefix(e.name, "cancelling") {
			continue // routes without an insight id: bob's own project
		}
		t.Run(e.name+" through one's own project is 404", func(t *testing.T) {
			if st, body := callEndpoint(t, f, e, bob); st != 404 {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
	for _, path := range []string{"/api/projects/abc/insights/", "/api/projects/0/insights/", "/api/projects/999999/insights/",
		f.insight(f.a.ProjectID, "abc"), f.insight(f.a.ProjectID, 0), f.insight(f.a.ProjectID, 99999999)} {
		t.Run(path+" is 404", func(t *testing.T) {
			if st, body := call(t, f.h, "GET", path, f.a.PersonalAPIKey, nil); st != 404 {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
	var name string
	f.s.store.DB().Get(&name, "SELECT name FROM insights WHERE id = $1", i["id"])
	_, ada := call(t, f.h, "GET", f.insight(f.a.ProjectID, i["id"]), f.a.PersonalAPIKey, nil)
	if name != "Ada's" || ada["deleted"] != false {
		t.Fatalf("another organization changed the insight: %q %v", name, ada)
	}
}
