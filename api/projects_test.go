package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// fixture is a server with two users in two organizations.
type fixture struct {
	s    *Server
	h    http.Handler
	a, b metadata.Bootstrapped // a: ada in Acme, b: bob in Beta
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s := newServer(t, quietLog())
	ctx := context.Background()
	a, err := s.store.Bootstrap(ctx, "ada@example.com", "Acme", "Acme web")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.store.Bootstrap(ctx, "bob@example.com", "Beta", "Beta app")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{s: s, h: validated(t, s.Handler()), a: a, b: b}
}

func (f *fixture) key(t *testing.T, email string, scopes ...string) string {
	t.Helper()
	k, err := f.s.store.CreateKey(context.Background(), email, "test", scopes, metadata.KeyScope{})
	if err != nil {
		t.Fatal(err)
	}
	return k.Key
}

// call sends a request with a Bearer key (if any) and a JSON body (if
// any), and decodes the JSON object it answers (rawCall).
func call(t testing.TB, h http.Handler, method, path, key string, body any) (int, map[string]any) {
	t.Helper()
	code, text := rawCall(t, h, method, path, key, body)
	var out map[string]any
	if text != "" {
		if err := json.Unmarshal([]byte(text), &out); err != nil {
			t.Fatalf("%s %s: %d, body is not a JSON object: %q", method, path, code, text)
		}
	}
	return code, out
}

func (f *fixture) projects(org uuid.UUID) string {
	return fmt.Sprintf("/api/organizations/%s/projects/", org)
}

func (f *fixture) project(org uuid.UUID, id int64) string {
	return fmt.Sprintf("/api/organizations/%s/projects/%d/", org, id)
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestAuthentication(t *testing.T) {
	f := newFixture(t)
	list := f.projects(f.a.OrganizationID)
	t.Run("no key is 401", func(t *testing.T) {
		st, body := call(t, f.h, "GET", list, "", nil)
		if st != 401 || body["code"] != "not_authenticated" || body["type"] != "authentication_error" {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("an unknown key is 401", func(t *testing.T) {
		st, body := call(t, f.h, "GET", list, "phx_not-a-real-key", nil)
		if st != 401 || body["code"] != "authentication_failed" {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("a non-Bearer Authorization header is 401", func(t *testing.T) {
		r := httptest.NewRequest("GET", list, nil)
		r.Header.Set("Authorization", "Basic "+f.a.PersonalAPIKey)
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, r)
		if w.Code != 401 {
			t.Fatalf("%d", w.Code)
		}
	})
	t.Run("the Bearer header works, any case", func(t *testing.T) {
		r := httptest.NewRequest("GET", list, nil)
		r.Header.Set("Authorization", "bearer "+f.a.PersonalAPIKey)
		w := httptest.NewRecorder()
		f.h.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	})
	t.Run("the personal_api_key query parameter works", func(t *testing.T) {
		st, _ := call(t, f.h, "GET", list+"?personal_api_key="+f.a.PersonalAPIKey, "", nil)
		if st != 200 {
			t.Fatalf("%d", st)
		}
	})
	t.Run("the personal_api_key body field works", func(t *testing.T) {
		st, body := call(t, f.h, "POST", list, "", map[string]any{"personal_api_key": f.a.PersonalAPIKey, "name": "From body"})
		if st != 201 || body["name"] != "From body" {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("last_used_at is recorded", func(t *testing.T) {
		var used *time.Time
		if err := f.s.store.DB().Get(&used, "SELECT last_used_at FROM personal_api_keys WHERE secure_value = $1", metadata.HashKey(f.a.PersonalAPIKey)); err != nil {
			t.Fatal(err)
		}
		if used == nil || time.Since(*used) > time.Minute {
			t.Fatalf("last_used_at %v", used)
		}
	})
}

func TestScopes(t *testing.T) {
	f := newFixture(t)
	list := f.projects(f.a.OrganizationID)
	one := f.project(f.a.OrganizationID, f.a.ProjectID)
	read := f.key(t, "ada@example.com", "project:read")
	write := f.key(t, "ada@example.com", "project:write")
	insight := f.key(t, "ada@example.com", "insight:read")
	cases := []struct {
		name, method, path, key string
		body                    any
		status                  int
		missing                 string
	}{
		{"project:read lists", "GET", list, read, nil, 200, ""},
		{"project:read retrieves", "GET", one, read, nil, 200, ""},
		{"project:read cannot create", "POST", list, read, map[string]any{"name": "x"}, 403, "project:write"},
		{"project:read cannot patch", "PATCH", one, read, map[string]any{"name": "x"}, 403, "project:write"},
		{"project:read cannot delete", "DELETE", one, read, nil, 403, "project:write"},
		{"project:read cannot reset the token", "PATCH", one + "reset_token/", read, nil, 403, "project:write"},
		{"project:read cannot read activity", "GET", one + "activity/", read, nil, 403, "activity_log:read"},
		{"insight:read cannot list projects", "GET", list, insight, nil, 403, "project:read"},
		{"project:write implies project:read", "GET", one, write, nil, 200, ""},
		{"project:write creates", "POST", list, write, map[string]any{"name": "x"}, 201, ""},
		{"* does everything", "GET", one + "activity/", f.a.PersonalAPIKey, nil, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, body := call(t, f.h, tc.method, tc.path, tc.key, tc.body)
			if st != tc.status {
				t.Fatalf("status %d, want %d: %v", st, tc.status, body)
			}
			if tc.missing != "" && (body["code"] != "permission_denied" || !strings.Contains(body["detail"].(string), tc.missing)) {
				t.Fatalf("403 body does not name %s: %v", tc.missing, body)
			}
		})
	}
}

func TestOtherOrganizationsDoNotExist(t *testing.T) {
	f := newFixture(t)
	bob := f.b.PersonalAPIKey
	for _, tc := range []struct{ name, method, path string }{
		{"another organization's project list", "GET", f.projects(f.a.OrganizationID)},
		{"another organization's project", "GET", f.project(f.a.OrganizationID, f.a.ProjectID)},
		{"another organization's project through one's own organization", "GET", f.project(f.b.OrganizationID, f.a.ProjectID)},
		{"patching another organization's project", "PATCH", f.project(f.b.OrganizationID, f.a.ProjectID)},
		{"deleting another organization's project", "DELETE", f.project(f.b.OrganizationID, f.a.ProjectID)},
		{"an organization id that is not a UUID", "GET", "/api/organizations/not-a-uuid/projects/"},
		{"a project id that is not a number", "GET", f.projects(f.b.OrganizationID) + "abc/"},
		{"a project that does not exist", "GET", f.project(f.b.OrganizationID, 999999)},
	} {
		t.Run(tc.name+" is 404", func(t *testing.T) {
			st, body := call(t, f.h, tc.method, tc.path, bob, map[string]any{"name": "hijack"})
			if st != 404 || body["code"] != "not_found" {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
	t.Run("@current is the caller's organization", func(t *testing.T) {
		st, body := call(t, f.h, "GET", "/api/organizations/@current/projects/", bob, nil)
		results := body["results"].([]any)
		if st != 200 || len(results) != 1 || results[0].(map[string]any)["name"] != "Beta app" {
			t.Fatalf("%d %v", st, body)
		}
	})
	var name string
	f.s.store.DB().Get(&name, "SELECT name FROM projects WHERE id = $1", f.a.ProjectID)
	if name != "Acme web" {
		t.Fatalf("another organization changed the project: %q", name)
	}
}

var reducedFields = []string{"access_control", "api_token", "completed_snippet_onboarding", "has_completed_onboarding_for",
	"id", "ingested_event", "is_demo", "name", "organization", "timezone", "uuid"}

var fullFields = []string{"access_control", "anonymize_ips", "api_token", "app_urls", "autocapture_exceptions_errors_to_ignore",
	"autocapture_exceptions_opt_in", "autocapture_opt_out", "autocapture_web_vitals_opt_in", "capture_console_log_opt_in",
	"capture_performance_opt_in", "completed_snippet_onboarding", "correlation_config", "created_at", "data_attributes",
	"default_modifiers", "effective_membership_level", "extra_settings", "has_completed_onboarding_for", "has_group_types",
	"heatmaps_opt_in", "id", "ingested_event", "inject_web_apps", "is_demo", "live_events_columns", "live_events_token",
	"modifiers", "name", "organization", "path_cleaning_filters", "person_display_name_properties",
	"person_on_events_querying_enabled", "primary_dashboard", "recording_domains", "session_recording_linked_flag",
	"session_recording_minimum_duration_milliseconds", "session_recording_network_payload_capture_config",
	"session_recording_opt_in", "session_recording_sample_rate", "session_replay_config", "slack_incoming_webhook",
	"surveys_opt_in", "test_account_filters", "test_account_filters_default_checked", "timezone", "updated_at", "uuid",
	"week_start_day"}

func TestListPagination(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	list := f.projects(f.a.OrganizationID)
	for i := 0; i < 4; i++ {
		if st, body := call(t, f.h, "POST", list, key, map[string]any{"name": fmt.Sprintf("P%d", i)}); st != 201 {
			t.Fatalf("%d %v", st, body)
		}
	}
	// 5 projects: the bootstrap one and P0..P3.
	t.Run("the reduced project has exactly the listed fields", func(t *testing.T) {
		_, body := call(t, f.h, "GET", list, key, nil)
		first := body["results"].([]any)[0].(map[string]any)
		if !reflect.DeepEqual(keys(first), reducedFields) {
			t.Fatalf("fields %v\nwant %v", keys(first), reducedFields)
		}
		if body["count"] != float64(5) || body["next"] != nil || body["previous"] != nil {
			t.Fatalf("default page: %v", body)
		}
	})
	t.Run("pages carry absolute next and previous URLs", func(t *testing.T) {
		_, body := call(t, f.h, "GET", list+"?limit=2&offset=2", key, nil)
		names := []string{}
		for _, r := range body["results"].([]any) {
			names = append(names, r.(map[string]any)["name"].(string))
		}
		if !reflect.DeepEqual(names, []string{"P1", "P2"}) {
			t.Fatalf("page names %v", names)
		}
		want := "http://insightd.test" + list // as sent, trailing slash included
		if body["next"] != want+"?limit=2&offset=4" || body["previous"] != want+"?limit=2&offset=0" {
			t.Fatalf("next %v previous %v", body["next"], body["previous"])
		}
		_, last := call(t, f.h, "GET", list+"?limit=2&offset=4", key, nil)
		if last["next"] != nil || len(last["results"].([]any)) != 1 {
			t.Fatalf("last page %v", last)
		}
	})
	t.Run("an offset past the end is an empty page", func(t *testing.T) {
		st, body := call(t, f.h, "GET", list+"?offset=50", key, nil)
		if st != 200 || len(body["results"].([]any)) != 0 || body["count"] != float64(5) || body["next"] != nil {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("a limit above 1000 is clamped to 1000", func(t *testing.T) {
		st, body := call(t, f.h, "GET", list+"?limit=5000&offset=1", key, nil)
		if st != 200 || !strings.Contains(body["previous"].(string), "limit=1000") {
			t.Fatalf("%d %v", st, body)
		}
	})
	for _, q := range []struct{ query, attr string }{
		{"limit=0", "limit"}, {"limit=-1", "limit"}, {"limit=abc", "limit"}, {"limit=1.5", "limit"},
		{"offset=-1", "offset"}, {"offset=x", "offset"},
	} {
		t.Run(q.query+" is 400 naming "+q.attr, func(t *testing.T) {
			st, body := call(t, f.h, "GET", list+"?"+q.query, key, nil)
			if st != 400 || body["attr"] != q.attr || body["type"] != "validation_error" {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
}

func TestCreateDefaultsAndReadOnlyFields(t *testing.T) {
	f := newFixture(t)
	st, p := call(t, f.h, "POST", f.projects(f.a.OrganizationID), f.a.PersonalAPIKey, map[string]any{
		"name": "New", "id": 424242, "api_token": "phc_mine", "ingested_event": true, "uuid": "00000000-0000-0000-0000-000000000000",
		"effective_membership_level": 1, "unknown_field": "ignored",
	})
	if st != 201 {
		t.Fatalf("%d %v", st, p)
	}
	if !reflect.DeepEqual(keys(p), fullFields) {
		t.Fatalf("fields %v\nwant %v", keys(p), fullFields)
	}
	tok, _ := p["api_token"].(string)
	if !strings.HasPrefix(tok, "phc_") || len(tok) != 47 || tok == "phc_mine" {
		t.Errorf("api_token %q", tok)
	}
	want := map[string]any{
		"timezone": "UTC", "week_start_day": nil, "primary_dashboard": nil, "app_urls": []any{}, "recording_domains": []any{},
		"test_account_filters": []any{}, "correlation_config": map[string]any{}, "ingested_event": false, "is_demo": false,
		"anonymize_ips": false, "effective_membership_level": float64(15), "slack_incoming_webhook": nil,
		"session_recording_sample_rate": nil, "has_completed_onboarding_for": map[string]any{},
	}
	for k, v := range want {
		if !reflect.DeepEqual(p[k], v) {
			t.Errorf("%s = %#v, want %#v", k, p[k], v)
		}
	}
	if p["id"] == float64(424242) || p["uuid"] == "00000000-0000-0000-0000-000000000000" {
		t.Error("read-only fields were taken from the body")
	}
	if !strings.HasPrefix(p["live_events_token"].(string), "phe_") {
		t.Errorf("live_events_token %v", p["live_events_token"])
	}
	t.Run("a missing name is 400", func(t *testing.T) {
		st, body := call(t, f.h, "POST", f.projects(f.a.OrganizationID), f.a.PersonalAPIKey, map[string]any{"timezone": "UTC"})
		if st != 400 || body["attr"] != "name" {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("a body that is not a JSON object is 400", func(t *testing.T) {
		for _, raw := range []string{`[1,2]`, `{"name":`, `"text"`, `null`} {
			r := httptest.NewRequest("POST", f.projects(f.a.OrganizationID), strings.NewReader(raw))
			r.Header.Set("Authorization", "Bearer "+f.a.PersonalAPIKey)
			w := httptest.NewRecorder()
			f.h.ServeHTTP(w, r)
			if w.Code != 400 {
				t.Errorf("%s: %d %s", raw, w.Code, w.Body)
			}
		}
	})
}

// TestValidation sends one bad value per rule, on create and on update.
func TestValidation(t *testing.T) {
	f := newFixture(t)
	bad := []struct {
		field string
		value any
	}{
		{"name", ""}, {"name", "   "}, {"name", strings.Repeat("n", 201)}, {"name", 5}, {"name", nil},
		{"timezone", "Mars/Olympus"}, {"timezone", ""}, {"timezone", "Local"}, {"timezone", 3}, {"timezone", "'; DROP TABLE projects; --"},
		{"week_start_day", 2}, {"week_start_day", -1}, {"week_start_day", "monday"}, {"week_start_day", 0.5},
		{"session_recording_sample_rate", "1.5"}, {"session_recording_sample_rate", "-0.1"}, {"session_recording_sample_rate", "0.123"},
		{"session_recording_sample_rate", "abc"}, {"session_recording_sample_rate", true},
		{"app_urls", "https://x.test"}, {"app_urls", []any{1}}, {"app_urls", nil},
		{"recording_domains", []any{"ok", nil}}, {"recording_domains", map[string]any{}},
		{"person_display_name_properties", "email"}, {"live_events_columns", 7},
		{"anonymize_ips", "yes"}, {"is_demo", 1}, {"surveys_opt_in", nil},
		{"test_account_filters", map[string]any{}}, {"test_account_filters", nil},
		{"correlation_config", []any{}}, {"modifiers", "x"}, {"extra_settings", nil},
		{"session_replay_config", []any{}}, {"session_recording_minimum_duration_milliseconds", -1},
		{"session_recording_minimum_duration_milliseconds", "abc"}, {"session_recording_minimum_duration_milliseconds", 1.5},
		{"primary_dashboard", 0}, {"primary_dashboard", "x"}, {"slack_incoming_webhook", 5},
	}
	for _, b := range bad {
		t.Run(fmt.Sprintf("%s=%v is 400 naming the field", b.field, b.value), func(t *testing.T) {
			body := map[string]any{b.field: b.value}
			if b.field != "name" {
				body["name"] = "valid"
			}
			st, out := call(t, f.h, "POST", f.projects(f.a.OrganizationID), f.a.PersonalAPIKey, body)
			if st != 400 || out["attr"] != b.field || out["code"] != "invalid_input" {
				t.Fatalf("create: %d %v", st, out)
			}
			st, out = call(t, f.h, "PATCH", f.project(f.a.OrganizationID, f.a.ProjectID), f.a.PersonalAPIKey, map[string]any{b.field: b.value})
			if st != 400 || out["attr"] != b.field {
				t.Fatalf("update: %d %v", st, out)
			}
		})
	}
}

func TestPatchEachFieldType(t *testing.T) {
	f := newFixture(t)
	path := f.project(f.a.OrganizationID, f.a.ProjectID)
	hostile := "'; DROP TABLE projects; -- \\ \"q\" \t ünï 😀"
	cases := []struct {
		field string
		send  any
		want  any
	}{
		{"name", "  Renamed  ", "Renamed"},
		{"name", hostile, strings.TrimSpace(hostile)},
		{"slack_incoming_webhook", "https://hooks.test/x?a='b'", "https://hooks.test/x?a='b'"},
		{"slack_incoming_webhook", nil, nil},
		{"anonymize_ips", true, true},
		{"anonymize_ips", false, false},
		{"app_urls", []any{"https://a.test", hostile}, []any{"https://a.test", hostile}},
		{"app_urls", []any{}, []any{}},
		{"timezone", "Europe/Berlin", "Europe/Berlin"},
		{"week_start_day", 1, float64(1)},
		{"week_start_day", nil, nil},
		{"week_start_day", "0", float64(0)},
		{"session_recording_sample_rate", "0.5", "0.50"},
		{"session_recording_sample_rate", "1", "1.00"},
		{"session_recording_sample_rate", 0.25, "0.25"},
		{"session_recording_sample_rate", nil, nil},
		{"session_recording_minimum_duration_milliseconds", 1500, float64(1500)},
		// primary_dashboard must name a dashboard of the project:
		// TestInsightsFollowDashboards sets and refuses it.
		{"test_account_filters", []any{map[string]any{"key": "email", "value": "@acme.test", "operator": "not_icontains", "type": "person"}},
			[]any{map[string]any{"key": "email", "value": "@acme.test", "operator": "not_icontains", "type": "person"}}},
		{"correlation_config", map[string]any{"excluded_event_names": []any{"$pageleave"}}, map[string]any{"excluded_event_names": []any{"$pageleave"}}},
		{"session_replay_config", map[string]any{"record_canvas": true}, map[string]any{"record_canvas": true}},
		{"session_replay_config", nil, nil},
		{"has_completed_onboarding_for", map[string]any{"product_analytics": true}, map[string]any{"product_analytics": true}},
		{"data_attributes", []any{"data-attr", hostile}, []any{"data-attr", hostile}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s=%v", tc.field, tc.send), func(t *testing.T) {
			st, p := call(t, f.h, "PATCH", path, f.a.PersonalAPIKey, map[string]any{tc.field: tc.send})
			if st != 200 || !reflect.DeepEqual(p[tc.field], tc.want) {
				t.Fatalf("%d: %s = %#v, want %#v", st, tc.field, p[tc.field], tc.want)
			}
			_, again := call(t, f.h, "GET", path, f.a.PersonalAPIKey, nil)
			if !reflect.DeepEqual(again[tc.field], tc.want) {
				t.Fatalf("after reload: %#v", again[tc.field])
			}
		})
	}
	t.Run("read-only fields in a PATCH are ignored", func(t *testing.T) {
		_, before := call(t, f.h, "GET", path, f.a.PersonalAPIKey, nil)
		st, p := call(t, f.h, "PATCH", path, f.a.PersonalAPIKey, map[string]any{"api_token": "phc_x", "id": 5, "ingested_event": true})
		if st != 200 || p["api_token"] != before["api_token"] || p["id"] != before["id"] || p["ingested_event"] != false {
			t.Fatalf("%d %v", st, p)
		}
	})
}

func TestActivityRecordsWhoChangedWhat(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	st, p := call(t, f.h, "POST", f.projects(f.a.OrganizationID), key, map[string]any{"name": "Tracked"})
	if st != 201 {
		t.Fatal(st, p)
	}
	path := f.project(f.a.OrganizationID, int64(p["id"].(float64)))
	call(t, f.h, "PATCH", path, key, map[string]any{"name": "Tracked 2", "timezone": "Asia/Tokyo"})
	call(t, f.h, "PATCH", path, key, map[string]any{"name": "Tracked 2"}) // no change: no entry
	call(t, f.h, "PATCH", path+"reset_token/", key, nil)

	st, body := call(t, f.h, "GET", path+"activity/", key, nil)
	if st != 200 || body["count"] != float64(3) {
		t.Fatalf("%d %v", st, body)
	}
	entries := body["results"].([]any)
	acts := []string{}
	for _, e := range entries {
		acts = append(acts, e.(map[string]any)["activity"].(string))
	}
	if !reflect.DeepEqual(acts, []string{"updated", "updated", "created"}) {
		t.Fatalf("activities newest first: %v", acts)
	}
	reset := entries[0].(map[string]any)["detail"].(map[string]any)["changes"].([]any)[0].(map[string]any)
	if reset["field"] != "api_token" || reset["before"] != nil || reset["after"] != nil {
		t.Fatalf("token reset entry must not show the token: %v", reset)
	}
	upd := entries[1].(map[string]any)
	if upd["user"].(map[string]any)["email"] != "ada@example.com" || upd["scope"] != "Project" {
		t.Fatalf("entry %v", upd)
	}
	changes := upd["detail"].(map[string]any)["changes"].([]any)
	got := map[string][2]any{}
	for _, c := range changes {
		c := c.(map[string]any)
		got[c["field"].(string)] = [2]any{c["before"], c["after"]}
	}
	want := map[string][2]any{"name": {"Tracked", "Tracked 2"}, "timezone": {"UTC", "Asia/Tokyo"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
	_, page2 := call(t, f.h, "GET", path+"activity/?limit=1&offset=1", key, nil)
	if len(page2["results"].([]any)) != 1 || page2["next"] == nil || page2["previous"] == nil {
		t.Fatalf("activity pagination %v", page2)
	}
}

func TestResetTokenAndDemoFlag(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	path := f.project(f.a.OrganizationID, f.a.ProjectID)
	st, p := call(t, f.h, "PATCH", path+"reset_token/", key, map[string]any{})
	if st != 200 || p["api_token"] == f.a.ProjectAPIToken || !strings.HasPrefix(p["api_token"].(string), "phc_") {
		t.Fatalf("%d %v", st, p["api_token"])
	}
	var n int
	f.s.store.DB().Get(&n, "SELECT count(*) FROM projects WHERE api_token = $1", f.a.ProjectAPIToken)
	if n != 0 {
		t.Fatal("the old token still belongs to a project")
	}

	st, demo := call(t, f.h, "POST", f.projects(f.a.OrganizationID), key, map[string]any{"name": "Demo", "is_demo": true})
	if st != 201 || demo["is_demo"] != true {
		t.Fatalf("%d %v", st, demo)
	}
	// The demo product is written in the background; the flag says when
	// it is done.
	demoID := int64(demo["id"].(float64))
	deadline := time.Now().Add(time.Minute)
	for {
		st, gen := call(t, f.h, "GET", f.project(f.a.OrganizationID, demoID)+"is_generating_demo_data/", key, nil)
		if st != 200 || gen["name"] != "Demo" {
			t.Fatalf("%d %v", st, gen)
		}
		if gen["is_generating_demo_data"] == false {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("demo data still generating after a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
	rows, err := engine.Query(context.Background(), querybuilder.Statement{
		SQL:    "SELECT count(), countIf(event = 'signup') FROM events WHERE team_id = {team:Int64}",
		Params: map[string]any{"team": demoID}})
	if err != nil {
		t.Fatal(err)
	}
	if rows.Data[0][0].(uint64) < 1000 || rows.Data[0][1].(uint64) == 0 {
		t.Fatalf("a demo project should hold a product's events, got %v", rows.Data)
	}
	if st, p := call(t, f.h, "GET", f.project(f.a.OrganizationID, demoID), key, nil); st != 200 || p["ingested_event"] != true {
		t.Fatalf("a demo project has ingested events: %d %v", st, p["ingested_event"])
	}
}

func TestDeleteTakesInsightsAndEvents(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	ctx := context.Background()
	_, p := call(t, f.h, "POST", f.projects(f.a.OrganizationID), key, map[string]any{"name": "Doomed"})
	id := int64(p["id"].(float64))
	if _, err := f.s.store.DB().Exec("INSERT INTO insights (project_id, short_id, name) VALUES ($1, 'abcdefgh', 'i')", id); err != nil {
		t.Fatal(err)
	}
	// Project ids are unique per database, not per engine: offset the
	// team so tests of other packages sharing nothing still cannot clash.
	now := time.Now().UTC()
	if err := engine.InsertEvents(ctx, []olap.Event{
		{UUID: uuid.New(), TeamID: id, Event: "e", DistinctID: "d", PersonID: uuid.New(), Timestamp: now, Properties: "{}", CreatedAt: now},
		{UUID: uuid.New(), TeamID: id, Event: "e", DistinctID: "d", PersonID: uuid.New(), Timestamp: now, Properties: "{}", CreatedAt: now},
	}); err != nil {
		t.Fatal(err)
	}
	st, body := call(t, f.h, "DELETE", f.project(f.a.OrganizationID, id), key, nil)
	if st != 204 || body != nil {
		t.Fatalf("%d %v", st, body)
	}
	if st, _ := call(t, f.h, "GET", f.project(f.a.OrganizationID, id), key, nil); st != 404 {
		t.Fatalf("deleted project answers %d", st)
	}
	var n int
	f.s.store.DB().Get(&n, "SELECT count(*) FROM insights WHERE project_id = $1", id)
	if n != 0 {
		t.Fatal("the project's insights survived it")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		rows, err := engine.Query(ctx, querybuilder.Statement{SQL: "SELECT count() FROM events WHERE team_id = {t:Int64}", Params: map[string]any{"t": id}})
		if err != nil {
			t.Fatal(err)
		}
		if rows.Data[0][0] == uint64(0) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v events of the deleted project remain after 20s", rows.Data[0][0])
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The other organization's project is untouched.
	if st, _ := call(t, f.h, "GET", f.project(f.b.OrganizationID, f.b.ProjectID), f.b.PersonalAPIKey, nil); st != 200 {
		t.Fatalf("bob's project: %d", st)
	}
}
