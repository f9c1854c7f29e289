package api

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/insightd/insightd/metadata"
)

// clientsFixture is Ada in two organizations, Acme (her first, with two
// projects) and Zeta (one project), and Bob in Beta, with the gin engine
// kept to list every route.
type clientsFixture struct {
	*fixture
	acme2   int64                 // Acme's second project
	zeta    metadata.Bootstrapped // Ada's second organization
	routes  gin.RoutesInfo
	limited func(t *testing.T, scope metadata.KeyScope, scopes ...string) string
}

func newClientsFixture(t *testing.T) *clientsFixture {
	t.Helper()
	s := newServer(t, quietLog())
	var r *gin.Engine
	probes := s.extraRoutes
	s.extraRoutes = func(e *gin.Engine) { probes(e); r = e }
	ctx := context.Background()
	a, err := s.store.Bootstrap(ctx, "ada@example.com", "Acme", "Acme web")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.store.Bootstrap(ctx, "bob@example.com", "Beta", "Beta app")
	if err != nil {
		t.Fatal(err)
	}
	zeta, err := s.store.Bootstrap(ctx, "ada@example.com", "Zeta", "Zeta site")
	if err != nil {
		t.Fatal(err)
	}
	f := &clientsFixture{fixture: &fixture{s: s, h: validated(t, s.Handler()), a: a, b: b}, zeta: zeta}
	f.routes = r.Routes()
	st, p := call(t, f.h, "POST", f.projects(a.OrganizationID), a.PersonalAPIKey, map[string]any{"name": "Acme app"})
	if st != 201 {
		t.Fatalf("%d %v", st, p)
	}
	f.acme2 = int64(p["id"].(float64))
	f.limited = func(t *testing.T, scope metadata.KeyScope, scopes ...string) string {
		t.Helper()
		if len(scopes) == 0 {
			scopes = []string{"*"}
		}
		k, err := s.store.CreateKey(ctx, "ada@example.com", "limited", scopes, scope)
		if err != nil {
			t.Fatal(err)
		}
		return k.Key
	}
	return f
}

func TestProjectRoutesWithoutTheOrganization(t *testing.T) {
	f := newClientsFixture(t)
	key := f.a.PersonalAPIKey
	t.Run("the list is the current organization's projects, paginated like the organization's", func(t *testing.T) {
		st, body := call(t, f.h, "GET", "/api/projects/?limit=1", key, nil)
		if st != 200 || body["count"] != float64(2) || names(t, body["results"])[0] != "Acme web" ||
			body["next"] != "http://insightd.test/api/projects/?limit=1&offset=1" {
			t.Fatalf("%d %v", st, body)
		}
		first := body["results"].([]any)[0].(map[string]any)
		if !reflect.DeepEqual(keys(first), reducedFields) {
			t.Fatalf("fields %v", keys(first))
		}
		_, same := call(t, f.h, "GET", "/api/organizations/@current/projects/?limit=1", key, nil)
		if !reflect.DeepEqual(same["results"], body["results"]) {
			t.Fatalf("the two lists differ: %v", same)
		}
	})
	one := fmt.Sprintf("/api/projects/%d/", f.acme2)
	t.Run("a project is retrieved by id alone", func(t *testing.T) {
		st, p := call(t, f.h, "GET", one, key, nil)
		if st != 200 || p["name"] != "Acme app" || !reflect.DeepEqual(keys(p), fullFields) {
			t.Fatalf("%d %v", st, p)
		}
	})
	t.Run("a project of another organization the caller belongs to is found too", func(t *testing.T) {
		st, p := call(t, f.h, "GET", fmt.Sprintf("/api/projects/%d", f.zeta.ProjectID), key, nil)
		if st != 200 || p["name"] != "Zeta site" {
			t.Fatalf("%d %v", st, p)
		}
	})
	t.Run("PATCH changes the given fields and logs them", func(t *testing.T) {
		st, p := call(t, f.h, "PATCH", one, key, map[string]any{"timezone": "Asia/Tokyo"})
		if st != 200 || p["timezone"] != "Asia/Tokyo" || p["name"] != "Acme app" {
			t.Fatalf("%d %v", st, p)
		}
		_, log := call(t, f.h, "GET", fmt.Sprintf("%s%d/activity/", f.projects(f.a.OrganizationID), f.acme2), key, nil)
		if log["count"] != float64(2) {
			t.Fatalf("activity %v", log)
		}
	})
	for _, path := range []string{one, fmt.Sprintf("%s%d/", f.projects(f.a.OrganizationID), f.acme2)} {
		t.Run("PUT on "+path+" needs the name, as a create does", func(t *testing.T) {
			st, body := call(t, f.h, "PUT", path, key, map[string]any{"timezone": "UTC"})
			if st != 400 || body["attr"] != "name" {
				t.Fatalf("%d %v", st, body)
			}
			st, p := call(t, f.h, "PUT", path, key, map[string]any{"name": "Acme app 2", "timezone": "Europe/Paris", "app_urls": []string{"https://a.test"}})
			if st != 200 || p["name"] != "Acme app 2" || p["timezone"] != "Europe/Paris" || p["anonymize_ips"] != false {
				t.Fatalf("%d %v", st, p)
			}
			st, body = call(t, f.h, "PUT", path, key, map[string]any{"name": "x", "week_start_day": 9})
			if st != 400 || body["attr"] != "week_start_day" {
				t.Fatalf("PUT validates as PATCH does: %d %v", st, body)
			}
		})
	}
	for _, tc := range []struct{ name, method, path string }{
		{"another organization's project", "GET", fmt.Sprintf("/api/projects/%d/", f.b.ProjectID)},
		{"patching another organization's project", "PATCH", fmt.Sprintf("/api/projects/%d/", f.b.ProjectID)},
		{"putting another organization's project", "PUT", fmt.Sprintf("/api/projects/%d/", f.b.ProjectID)},
		{"a project id that is not a number", "GET", "/api/projects/abc/"},
		{"a project that does not exist", "GET", "/api/projects/999999999/"},
	} {
		t.Run(tc.name+" is 404", func(t *testing.T) {
			st, body := call(t, f.h, tc.method, tc.path, key, map[string]any{"name": "hijack"})
			if st != 404 || body["code"] != "not_found" {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
	t.Run("Bob's list holds only Bob's project", func(t *testing.T) {
		_, body := call(t, f.h, "GET", "/api/projects", f.b.PersonalAPIKey, nil)
		if !reflect.DeepEqual(names(t, body["results"]), []string{"Beta app"}) {
			t.Fatalf("%v", body)
		}
	})
	scoped := map[string]string{"project:read": f.key(t, "ada@example.com", "project:read"), "insight:read": f.key(t, "ada@example.com", "insight:read")}
	for _, tc := range []struct {
		name, method, path, key string
		status                  int
	}{
		{"project:read lists", "GET", "/api/projects/", scoped["project:read"], 200},
		{"insight:read cannot list", "GET", "/api/projects/", scoped["insight:read"], 403},
		{"insight:read cannot retrieve", "GET", one, scoped["insight:read"], 403},
		{"project:read cannot patch", "PATCH", one, scoped["project:read"], 403},
		{"project:read cannot put", "PUT", one, scoped["project:read"], 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := call(t, f.h, tc.method, tc.path, tc.key, map[string]any{"name": "x"})
			if st != tc.status || (st == 403 && !strings.Contains(body["detail"].(string), "project:")) {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
}

func TestPaginationLinksKeepThePathAsSent(t *testing.T) {
	f := newClientsFixture(t)
	key := f.a.PersonalAPIKey
	for _, list := range []string{
		"/api/projects", f.projects(f.a.OrganizationID), "/api/organizations",
		fmt.Sprintf("/api/projects/%d/insights", f.a.ProjectID), fmt.Sprintf("/api/projects/%d/annotations", f.a.ProjectID),
	} {
		for _, path := range []string{strings.TrimSuffix(list, "/"), strings.TrimSuffix(list, "/") + "/"} {
			t.Run(path, func(t *testing.T) {
				st, body := call(t, f.h, "GET", path+"?limit=1&offset=1", key, nil)
				if st != 200 {
					t.Fatalf("%d %v", st, body)
				}
				if prev, _ := body["previous"].(string); prev != "http://insightd.test"+path+"?limit=1&offset=0" {
					t.Fatalf("previous %q, want the path as sent", prev)
				}
			})
		}
	}
}

func TestWhoAmI(t *testing.T) {
	f := newClientsFixture(t)
	key := f.a.PersonalAPIKey
	t.Run("@me is the user, the current organization and project, and every organization", func(t *testing.T) {
		st, me := call(t, f.h, "GET", "/api/users/@me/", key, nil)
		if st != 200 || me["email"] != "ada@example.com" || me["id"] != float64(f.a.UserID) {
			t.Fatalf("%d %v", st, me)
		}
		org := me["organization"].(map[string]any)
		team := me["team"].(map[string]any)
		if org["id"] != f.a.OrganizationID.String() || org["name"] != "Acme" || team["id"] != float64(f.a.ProjectID) ||
			team["project_id"] != float64(f.a.ProjectID) || team["api_token"] != f.a.ProjectAPIToken {
			t.Fatalf("organization %v team %v", org, team)
		}
		if got := names(t, org["teams"]); !reflect.DeepEqual(got, []string{"Acme web", "Acme app"}) {
			t.Fatalf("teams %v", got)
		}
		if got := names(t, me["organizations"]); !reflect.DeepEqual(got, []string{"Acme", "Zeta"}) {
			t.Fatalf("organizations %v", got)
		}
		if _, ok := me["date_joined"].(string); !ok {
			t.Fatalf("date_joined %v", me["date_joined"])
		}
	})
	t.Run("@current is the key without its secret", func(t *testing.T) {
		k := f.limited(t, metadata.KeyScope{Teams: []int64{f.acme2}}, "insight:read", "project:read")
		st, body := call(t, f.h, "GET", "/api/personal_api_keys/@current/", k, nil)
		if st != 200 || body["label"] != "limited" || !reflect.DeepEqual(body["scopes"], []any{"insight:read", "project:read"}) ||
			!reflect.DeepEqual(body["scoped_teams"], []any{float64(f.acme2)}) || !reflect.DeepEqual(body["scoped_organizations"], []any{}) ||
			body["user_id"] != float64(f.a.UserID) {
			t.Fatalf("%d %v", st, body)
		}
		for _, v := range body {
			if s, ok := v.(string); ok && s == k {
				t.Fatal("the secret is in the answer")
			}
		}
		if _, ok := body["value"]; ok {
			t.Fatal("value is answered")
		}
		if m, _ := body["mask_value"].(string); !strings.HasPrefix(m, "phx_") || strings.Contains(m, k[8:len(k)-4]) {
			t.Fatalf("mask_value %q", m)
		}
	})
	t.Run("the organization list and one organization", func(t *testing.T) {
		st, body := call(t, f.h, "GET", "/api/organizations/", key, nil)
		if st != 200 || body["count"] != float64(2) || !reflect.DeepEqual(names(t, body["results"]), []string{"Acme", "Zeta"}) {
			t.Fatalf("%d %v", st, body)
		}
		for _, ref := range []string{f.zeta.OrganizationID.String(), "@current"} {
			st, org := call(t, f.h, "GET", "/api/organizations/"+ref+"/", key, nil)
			want := map[string]string{"@current": "Acme"}[ref]
			if want == "" {
				want = "Zeta"
			}
			if st != 200 || org["name"] != want || org["membership_level"] != float64(15) || org["member_count"] != float64(1) {
				t.Fatalf("%s: %d %v", ref, st, org)
			}
		}
	})
	for _, tc := range []struct{ name, path string }{
		{"another organization", "/api/organizations/" + f.b.OrganizationID.String() + "/"},
		{"an organization id that is not a UUID", "/api/organizations/nope/"},
		{"an organization that does not exist", "/api/organizations/" + uuid.NewString() + "/"},
	} {
		t.Run(tc.name+" is 404", func(t *testing.T) {
			if st, body := call(t, f.h, "GET", tc.path, key, nil); st != 404 {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
	for _, tc := range []struct{ path, scope string }{
		{"/api/users/@me/", "user:read"}, {"/api/organizations/", "organization:read"},
		{"/api/organizations/@current/", "organization:read"},
	} {
		t.Run(tc.path+" without "+tc.scope+" is 403 naming it", func(t *testing.T) {
			k := f.key(t, "ada@example.com", "project:read")
			st, body := call(t, f.h, "GET", tc.path, k, nil)
			if st != 403 || !strings.Contains(body["detail"].(string), tc.scope) {
				t.Fatalf("%d %v", st, body)
			}
			if st, _ := call(t, f.h, "GET", tc.path, f.key(t, "ada@example.com", tc.scope), nil); st != 200 {
				t.Fatalf("with %s: %d", tc.scope, st)
			}
		})
	}
	t.Run("@current needs no scope and no key is 401", func(t *testing.T) {
		if st, _ := call(t, f.h, "GET", "/api/personal_api_keys/@current", f.key(t, "ada@example.com", "insight:read"), nil); st != 200 {
			t.Fatalf("%d", st)
		}
		if st, _ := call(t, f.h, "GET", "/api/personal_api_keys/@current", "", nil); st != 401 {
			t.Fatalf("%d", st)
		}
	})
}

// TestKeyLimitsHoldOnEveryRoute walks every registered route that names
// an organization or a project with keys limited elsewhere: each is 403
// naming what the key may not touch, before any handler runs. Within its
// limits the same key is never refused for them.
func TestKeyLimitsHoldOnEveryRoute(t *testing.T) {
	f := newClientsFixture(t)
	type target struct {
		org     uuid.UUID
		project int64
	}
	path := func(route string, to target) string {
		p := strings.NewReplacer(":organization_id", to.org.String(), ":project_id", fmt.Sprint(to.project), ":id", fmt.Sprint(to.project)).Replace(route)
		return p + "/"
	}
	kinds := func(route string) (org, project bool) {
		return strings.Contains(route, ":organization_id"), strings.Contains(route, ":project_id") || strings.Contains(route, "/projects/:id")
	}
	acme := target{f.a.OrganizationID, f.a.ProjectID}
	teamKey := f.limited(t, metadata.KeyScope{Teams: []int64{f.a.ProjectID}})
	orgKey := f.limited(t, metadata.KeyScope{Organizations: []uuid.UUID{f.a.OrganizationID}})
	covered := 0
	for _, r := range f.routes {
		org, project := kinds(r.Path)
		if !org && !project {
			continue
		}
		covered++
		call := func(t *testing.T, key string, to target) (int, string) {
			t.Helper()
			w := send(t, f.fixture, r.Method, path(r.Path, to), key, `{"name": "x"}`)
			var body map[string]any
			_ = json.Unmarshal(w.Body.Bytes(), &body) // lists and CSV are not objects
			detail, _ := body["detail"].(string)
			return w.Code, detail
		}
		route := r.Method + " " + r.Path
		t.Run("a key limited to Acme's first project: "+route, func(t *testing.T) {
			if !project {
				// Acme is the key's own organization: only a new project is refused.
				st, detail := call(t, teamKey, acme)
				if (r.Method == "POST") != (st == 403) || st == 403 && !strings.Contains(detail, "cannot create projects") {
					t.Fatalf("%d %s", st, detail)
				}
				return
			}
			if st, detail := call(t, teamKey, target{f.a.OrganizationID, f.acme2}); st != 403 ||
				!strings.Contains(detail, fmt.Sprintf("does not have access to the requested project: ID %d", f.acme2)) {
				t.Fatalf("Acme's other project: %d %s", st, detail)
			}
			if r.Method != "DELETE" { // the other keys' walks use the project
				if st, detail := call(t, teamKey, acme); st == 403 || st == 401 {
					t.Fatalf("its own project: %d %s", st, detail)
				}
			}
		})
		t.Run("a key limited to Acme: "+route, func(t *testing.T) {
			want := "project: ID " + fmt.Sprint(f.zeta.ProjectID)
			if org {
				want = "organization: ID " + f.zeta.OrganizationID.String()
			}
			if st, detail := call(t, orgKey, target{f.zeta.OrganizationID, f.zeta.ProjectID}); st != 403 ||
				!strings.Contains(detail, "does not have access to the requested "+want) {
				t.Fatalf("Zeta: %d %s", st, detail)
			}
			if r.Method != "DELETE" {
				if st, detail := call(t, orgKey, acme); st == 403 || st == 401 {
					t.Fatalf("Acme: %d %s", st, detail)
				}
			}
		})
	}
	if covered < 40 {
		t.Fatalf("only %d routes name an organization or a project: the walk missed the router", covered)
	}
	t.Run("lists hold only what the key may touch", func(t *testing.T) {
		team := f.limited(t, metadata.KeyScope{Teams: []int64{f.acme2}})
		_, body := call(t, f.h, "GET", "/api/projects/", team, nil)
		if !reflect.DeepEqual(names(t, body["results"]), []string{"Acme app"}) || body["count"] != float64(1) {
			t.Fatalf("%v", body)
		}
		_, body = call(t, f.h, "GET", f.projects(f.a.OrganizationID), team, nil)
		if !reflect.DeepEqual(names(t, body["results"]), []string{"Acme app"}) {
			t.Fatalf("%v", body)
		}
		_, me := call(t, f.h, "GET", "/api/users/@me/", team, nil)
		if me["team"].(map[string]any)["name"] != "Acme app" || !reflect.DeepEqual(names(t, me["organizations"]), []string{"Acme"}) {
			t.Fatalf("%v", me)
		}
		_, orgs := call(t, f.h, "GET", "/api/organizations/", team, nil)
		if !reflect.DeepEqual(names(t, orgs["results"]), []string{"Acme"}) ||
			!reflect.DeepEqual(names(t, orgs["results"].([]any)[0].(map[string]any)["projects"]), []string{"Acme app"}) {
			t.Fatalf("%v", orgs)
		}
	})
	t.Run("@current is the oldest organization the key may touch", func(t *testing.T) {
		z := f.limited(t, metadata.KeyScope{Organizations: []uuid.UUID{f.zeta.OrganizationID}})
		for _, p := range []string{"/api/projects/", "/api/organizations/@current/projects/"} {
			_, body := call(t, f.h, "GET", p, z, nil)
			if !reflect.DeepEqual(names(t, body["results"]), []string{"Zeta site"}) {
				t.Fatalf("%s: %v", p, body)
			}
		}
		_, org := call(t, f.h, "GET", "/api/organizations/@current/", z, nil)
		_, me := call(t, f.h, "GET", "/api/users/@me/", z, nil)
		if org["name"] != "Zeta" || me["organization"].(map[string]any)["name"] != "Zeta" {
			t.Fatalf("%v %v", org, me["organization"])
		}
		st, p := call(t, f.h, "POST", "/api/organizations/@current/projects/", z, map[string]any{"name": "In Zeta"})
		if st != 201 || p["organization"] != f.zeta.OrganizationID.String() {
			t.Fatalf("%d %v", st, p)
		}
	})
	t.Run("another organization's ids stay 404 for a limited key", func(t *testing.T) {
		k := f.limited(t, metadata.KeyScope{Teams: []int64{f.a.ProjectID}})
		for _, p := range []string{fmt.Sprintf("/api/projects/%d/insights/", f.b.ProjectID), "/api/organizations/" + f.b.OrganizationID.String() + "/projects/"} {
			if st, body := call(t, f.h, "GET", p, k, nil); st != 404 {
				t.Fatalf("%s: %d %v", p, st, body)
			}
		}
	})
	t.Run("a key cannot be limited to what its user cannot reach", func(t *testing.T) {
		for _, scope := range []metadata.KeyScope{
			{Organizations: []uuid.UUID{f.b.OrganizationID}}, {Teams: []int64{f.b.ProjectID}}, {Teams: []int64{999999999}},
			{Organizations: []uuid.UUID{f.zeta.OrganizationID}, Teams: []int64{f.a.ProjectID}},
		} {
			if _, err := f.s.store.CreateKey(context.Background(), "ada@example.com", "x", []string{"*"}, scope); err == nil {
				t.Errorf("%+v was accepted", scope)
			}
		}
	})
}
