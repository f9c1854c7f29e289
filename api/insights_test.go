package api

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func (f *fixture) insights(projectID int64) string {
	return fmt.Sprintf("/api/projects/%d/insights/", projectID)
}

func (f *fixture) insight(projectID int64, id any) string {
	return fmt.Sprintf("/api/projects/%d/insights/%v/", projectID, id)
}

// newInsight creates an insight in Ada's project and returns it.
func (f *fixture) newInsight(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	st, out := call(t, f.h, "POST", f.insights(f.a.ProjectID), f.a.PersonalAPIKey, body)
	if st != 201 {
		t.Fatalf("create insight: %d %v", st, out)
	}
	return out
}

// send is a request with a raw body (or none), for bodies call cannot
// make and answers that are not JSON objects.
func send(t *testing.T, f *fixture, method, path, key, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Host = "insightd.test"
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w
}

// addMember puts a new user (with an all-scope key) into Ada's organization.
func (f *fixture) addMember(t *testing.T, email string) (userID int64, key string) {
	t.Helper()
	b, err := f.s.store.Bootstrap(context.Background(), email, "Own "+email, "Own project")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.store.DB().Exec("INSERT INTO memberships (organization_id, user_id, level) VALUES ($1, $2, 1)",
		f.a.OrganizationID, b.UserID); err != nil {
		t.Fatal(err)
	}
	return b.UserID, b.PersonalAPIKey
}

func names(t *testing.T, list any) []string {
	t.Helper()
	out := []string{}
	for _, r := range list.([]any) {
		out = append(out, r.(map[string]any)["name"].(string))
	}
	return out
}

var insightFields = []string{"cache_target_age", "columns", "created_at", "created_by", "dashboard_tiles", "dashboards",
	"deleted", "derived_name", "description", "effective_privilege_level", "effective_restriction_level", "favorited",
	"filters", "id", "is_cached", "is_sample", "last_modified_at", "last_modified_by", "last_refresh", "name",
	"next_allowed_client_refresh", "order", "query", "query_status", "result", "saved", "short_id", "tags", "timezone",
	"updated_at"}

var userFields = []string{"distinct_id", "email", "first_name", "hedgehog_config", "id", "is_email_verified", "last_name", "uuid"}

var trendsFilters = map[string]any{"insight": "TRENDS", "events": []any{map[string]any{"id": "$pageview", "math": "total"}},
	"date_from": "-7d", "interval": "day"}

func TestInsightCreateAndRetrieveCarryEveryField(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	if st, p := call(t, f.h, "PATCH", f.project(f.a.OrganizationID, f.a.ProjectID), key, map[string]any{"timezone": "Europe/Paris"}); st != 200 {
		t.Fatal(st, p)
	}
	created := f.newInsight(t, map[string]any{"name": "  Pageviews  ", "filters": trendsFilters, "description": "Daily views",
		"tags": []any{"web", " web ", "kpi"}, "saved": true, "order": 3, "id": 999, "short_id": "mine", "is_sample": true})
	for _, tc := range []struct {
		name string
		get  func() map[string]any
	}{
		{"the create answer", func() map[string]any { return created }},
		{"the retrieve answer", func() map[string]any {
			st, out := call(t, f.h, "GET", f.insight(f.a.ProjectID, created["id"]), key, nil)
			if st != 200 {
				t.Fatalf("%d %v", st, out)
			}
			return out
		}},
	} {
		t.Run(tc.name+" has every contract field with its value", func(t *testing.T) {
			i := tc.get()
			if !reflect.DeepEqual(keys(i), insightFields) {
				t.Fatalf("fields %v\nwant %v", keys(i), insightFields)
			}
			want := map[string]any{
				"name": "Pageviews", "derived_name": nil, "description": "Daily views", "filters": trendsFilters, "query": nil,
				"order": float64(3), "deleted": false, "dashboards": []any{}, "dashboard_tiles": []any{}, "last_refresh": nil,
				"cache_target_age": nil, "next_allowed_client_refresh": nil, "result": nil, "columns": nil,
				"tags": []any{"web", "kpi"}, "favorited": false, "saved": true, "is_sample": false,
				"effective_restriction_level": float64(21), "effective_privilege_level": float64(37),
				"timezone": "Europe/Paris", "is_cached": false, "query_status": nil,
			}
			if tc.name == "the retrieve answer" {
				// A retrieve computes the trend (analytics_cache_test.go
				// checks the values); the other answers carry none.
				for _, k := range []string{"last_refresh", "cache_target_age", "next_allowed_client_refresh", "result"} {
					if i[k] == nil {
						t.Errorf("%s is null", k)
					}
					delete(want, k)
				}
			}
			for k, v := range want {
				if !reflect.DeepEqual(normalize(i[k]), normalize(v)) {
					t.Errorf("%s = %#v, want %#v", k, i[k], v)
				}
			}
			if i["id"] == float64(999) || i["short_id"] == "mine" {
				t.Error("read-only fields were taken from the body")
			}
			if !regexp.MustCompile(`^[A-Za-z0-9]{8}$`).MatchString(i["short_id"].(string)) {
				t.Errorf("short_id %q is not 8 letters and digits", i["short_id"])
			}
			for _, u := range []string{"created_by", "last_modified_by"} {
				user := i[u].(map[string]any)
				if !reflect.DeepEqual(keys(user), userFields) || user["email"] != "ada@example.com" {
					t.Errorf("%s = %v", u, user)
				}
			}
			for _, ts := range []string{"created_at", "updated_at", "last_modified_at"} {
				if at, err := time.Parse(time.RFC3339Nano, i[ts].(string)); err != nil || time.Since(at) > time.Minute {
					t.Errorf("%s = %v", ts, i[ts])
				}
			}
		})
	}
	t.Run("an empty body creates an insight with empty filters", func(t *testing.T) {
		i := f.newInsight(t, map[string]any{})
		if !reflect.DeepEqual(i["filters"], map[string]any{}) || i["name"] != nil || i["description"] != "" {
			t.Fatalf("%v", i)
		}
	})
	t.Run("short ids are unique within the project", func(t *testing.T) {
		seen := map[any]bool{}
		for range 20 {
			id := f.newInsight(t, map[string]any{})["short_id"]
			if seen[id] {
				t.Fatalf("short_id %v given twice", id)
			}
			seen[id] = true
		}
	})
	query := map[string]any{"kind": "InsightVizNode", "source": map[string]any{"kind": "TrendsQuery", "series": []any{}}}
	for _, tc := range []struct {
		name string
		send any
	}{{"an object", query}, {"a JSON string of an object", `{"kind":"InsightVizNode","source":{"kind":"TrendsQuery","series":[]}}`}} {
		t.Run("query is accepted as "+tc.name+" and answered as an object", func(t *testing.T) {
			i := f.newInsight(t, map[string]any{"query": tc.send})
			if !reflect.DeepEqual(i["query"], query) {
				t.Fatalf("query %#v", i["query"])
			}
		})
	}
}

// normalize makes []string and []any comparable.
func normalize(v any) any {
	if s, ok := v.([]string); ok {
		out := make([]any, len(s))
		for k := range s {
			out[k] = s[k]
		}
		return out
	}
	return v
}

func TestInsightRetrieveAcceptsDashboardAndRefresh(t *testing.T) {
	f := newFixture(t)
	path := f.insight(f.a.ProjectID, f.newInsight(t, map[string]any{"name": "R"})["id"])
	for _, tc := range []struct {
		query, attr string
		status      int
	}{
		{"from_dashboard=4", "", 200}, {"refresh=true", "", 200}, {"refresh=blocking", "", 200}, {"refresh=0", "", 200},
		{"from_dashboard=x", "from_dashboard", 400}, {"from_dashboard=0", "from_dashboard", 400},
		{"refresh=sometimes", "refresh", 400}, {"format=xml", "format", 400},
	} {
		name := tc.query + " answers " + fmt.Sprint(tc.status)
		t.Run(name, func(t *testing.T) {
			st, body := call(t, f.h, "GET", path+"?"+tc.query, f.a.PersonalAPIKey, nil)
			if st != tc.status || (tc.attr != "" && body["attr"] != tc.attr) {
				t.Fatalf("%d %v", st, body)
			}
			if st == 200 && (body["result"] != nil || body["is_cached"] != false) {
				t.Fatalf("an insight has no result before the query builder computes one: %v", body)
			}
		})
	}
}

// TestInsightValidation sends one bad value per rule, on create and on update.
func TestInsightValidation(t *testing.T) {
	f := newFixture(t)
	path := f.insight(f.a.ProjectID, f.newInsight(t, map[string]any{"name": "Target"})["id"])
	deep := any(map[string]any{})
	for range 70 {
		deep = map[string]any{"a": deep}
	}
	bad := []struct {
		field string
		value any
	}{
		{"name", 5}, {"name", true}, {"name", []any{"x"}}, {"name", strings.Repeat("n", 401)}, {"name", "nul\x00byte"},
		{"derived_name", map[string]any{}}, {"derived_name", strings.Repeat("é", 401)}, {"derived_name", "\x00"},
		{"description", 1.5}, {"description", strings.Repeat("d", 401)}, {"description", "a\x00b"},
		{"filters", nil}, {"filters", "not an object"}, {"filters", []any{}}, {"filters", 3},
		{"filters", map[string]any{"insight": "PIES"}}, {"filters", map[string]any{"insight": 1}},
		{"filters", map[string]any{"name": "nul\x00"}}, {"filters", map[string]any{"k\x00ey": 1}}, {"filters", deep},
		{"query", "not json"}, {"query", "[1, 2]"}, {"query", `"a string"`}, {"query", 42}, {"query", []any{}},
		{"query", map[string]any{"kind": "x\x00"}}, {"query", `{"kind": "\u0000"}`},
		{"order", "first"}, {"order", 1.5}, {"order", 1 << 31}, {"order", -(1 << 31) - 1},
		{"deleted", "yes"}, {"deleted", nil}, {"favorited", 1}, {"saved", "true"},
		{"tags", "web"}, {"tags", []any{1}}, {"tags", []any{"ok", nil}}, {"tags", []any{" "}},
		{"tags", []any{strings.Repeat("t", 256)}}, {"tags", []any{"t\x00"}}, {"tags", nil},
		{"dashboards", []any{1}}, {"dashboards", []any{"x"}}, {"dashboards", "1"}, {"dashboards", nil},
	}
	for _, b := range bad {
		t.Run(fmt.Sprintf("%s=%.40v is 400 naming the field", b.field, b.value), func(t *testing.T) {
			st, out := call(t, f.h, "POST", f.insights(f.a.ProjectID), f.a.PersonalAPIKey, map[string]any{b.field: b.value})
			if st != 400 || out["attr"] != b.field || out["code"] != "invalid_input" {
				t.Fatalf("create: %d %v", st, out)
			}
			st, out = call(t, f.h, "PATCH", path, f.a.PersonalAPIKey, map[string]any{b.field: b.value})
			if st != 400 || out["attr"] != b.field {
				t.Fatalf("update: %d %v", st, out)
			}
		})
	}
	t.Run("a body that is not a JSON object is 400", func(t *testing.T) {
		for _, raw := range []string{`[1,2]`, `{"name":`, `"text"`, `null`, "{\"name\": \"a\x00\"}"} {
			if w := send(t, f, "POST", f.insights(f.a.ProjectID), f.a.PersonalAPIKey, raw); w.Code != 400 {
				t.Errorf("%q: %d %s", raw, w.Code, w.Body)
			}
		}
	})
	t.Run("a lone surrogate in filters is stored as U+FFFD, not refused by PostgreSQL", func(t *testing.T) {
		w := send(t, f, "POST", f.insights(f.a.ProjectID), f.a.PersonalAPIKey, `{"filters": {"name": "a\ud800b"}}`)
		if w.Code != 201 || !strings.Contains(w.Body.String(), `"name":"a`+"\ufffd"+`b"`) {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	})
	t.Run("unknown and read-only fields are ignored, as for projects", func(t *testing.T) {
		st, out := call(t, f.h, "PATCH", path, f.a.PersonalAPIKey, map[string]any{"unknown": 1, "is_sample": true, "result": "x"})
		if st != 200 || out["is_sample"] != false || out["result"] != nil {
			t.Fatalf("%d %v", st, out)
		}
	})
	var name string
	f.s.store.DB().Get(&name, "SELECT name FROM insights WHERE id = $1", strings.Split(path, "/")[5])
	if name != "Target" {
		t.Fatalf("a refused update changed the insight: %q", name)
	}
}

func TestInsightHostileStringsRoundTripAndSearch(t *testing.T) {
	f := newFixture(t)
	hostile := []string{
		`'; DROP TABLE insights; --`, `quote " and backslash \ and \\ double`, `percent 100% and under_score`,
		"tab\tnew\nline", "ünïcødé 😀 中文 العربية", "\u202eright-to-left override", strings.Repeat("長", 400),
	}
	for k, s := range hostile {
		t.Run(fmt.Sprintf("string %d survives name, description and tags", k), func(t *testing.T) {
			i := f.newInsight(t, map[string]any{"name": s, "description": s, "tags": []any{string([]rune(s)[:min(len([]rune(s)), 200)])}})
			want := strings.TrimSpace(s)
			st, got := call(t, f.h, "GET", f.insight(f.a.ProjectID, i["id"]), f.a.PersonalAPIKey, nil)
			if st != 200 || got["name"] != want || got["description"] != want {
				t.Fatalf("%d name %q description %q", st, got["name"], got["description"])
			}
		})
	}
	for _, tc := range []struct {
		search string
		want   []string
	}{
		{"DROP TABLE", []string{`'; DROP TABLE insights; --`}},
		{`backslash \ and \\`, []string{`quote " and backslash \ and \\ double`}},
		{"100%", []string{`percent 100% and under_score`}},
		{"under_", []string{`percent 100% and under_score`}},
		{"_", []string{`percent 100% and under_score`}},
		{"ÜNÏ", []string{"ünïcødé 😀 中文 العربية"}},
		{"%", []string{`percent 100% and under_score`}},
		{strings.Repeat("x", 5000), []string{}},
	} {
		t.Run(fmt.Sprintf("searching %.30q finds exactly the literal match", tc.search), func(t *testing.T) {
			q := url.Values{"search": {tc.search}}
			st, body := call(t, f.h, "GET", f.insights(f.a.ProjectID)+"?"+q.Encode(), f.a.PersonalAPIKey, nil)
			if st != 200 || !reflect.DeepEqual(names(t, body["results"]), tc.want) {
				t.Fatalf("%d %v", st, body["results"])
			}
		})
	}
	for _, q := range []string{"search=a%00b", "search=%FF%FE", "short_id=%00", "short_id=%C3%28"} {
		t.Run(q+" is 400, not a PostgreSQL error", func(t *testing.T) {
			st, body := call(t, f.h, "GET", f.insights(f.a.ProjectID)+"?"+q, f.a.PersonalAPIKey, nil)
			if st != 400 || body["attr"] != strings.Split(q, "=")[0] {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
}

func TestInsightListFiltersOrderAndPages(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	carol, carolKey := f.addMember(t, "carol@example.com")
	f.newInsight(t, map[string]any{"name": "Signups", "filters": map[string]any{"insight": "TRENDS"}, "saved": true})
	funnel := f.newInsight(t, map[string]any{"name": "Checkout", "filters": map[string]any{"insight": "FUNNELS"}, "favorited": true,
		"description": "cart to payment"})
	st, carols := call(t, f.h, "POST", f.insights(f.a.ProjectID), carolKey, map[string]any{"name": "Retained",
		"filters": map[string]any{"insight": "retention"}})
	if st != 201 {
		t.Fatal(st, carols)
	}
	gone := f.newInsight(t, map[string]any{"name": "Gone", "saved": true})
	call(t, f.h, "PATCH", f.insight(f.a.ProjectID, gone["id"]), key, map[string]any{"deleted": true})
	// Bob's insight lives in another organization's project.
	call(t, f.h, "POST", f.insights(f.b.ProjectID), f.b.PersonalAPIKey, map[string]any{"name": "Bob's", "saved": true})

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"Retained", "Checkout", "Signups"}},
		{"saved=true", []string{"Signups"}},
		{"saved=false", []string{"Retained", "Checkout"}},
		{"favorited=1", []string{"Checkout"}},
		{"favorited=false", []string{"Retained", "Signups"}},
		{fmt.Sprintf("created_by=%d", carol), []string{"Retained"}},
		{fmt.Sprintf("created_by=%d", f.b.UserID), []string{}},
		{"short_id=" + funnel["short_id"].(string), []string{"Checkout"}},
		{"short_id=" + gone["short_id"].(string), []string{}},
		{"search=sign", []string{"Signups"}},
		{"search=PAYMENT", []string{"Checkout"}},
		{"search=Gone", []string{}},
		{"insight=FUNNELS", []string{"Checkout"}},
		{"insight=retention", []string{"Retained"}},
		{"insight=TRENDS&saved=true", []string{"Signups"}},
		{"insight=PATHS", []string{}},
	} {
		t.Run(fmt.Sprintf("?%s lists %v", tc.query, tc.want), func(t *testing.T) {
			st, body := call(t, f.h, "GET", f.insights(f.a.ProjectID)+"?"+tc.query, key, nil)
			if st != 200 || !reflect.DeepEqual(names(t, body["results"]), tc.want) || body["count"] != float64(len(tc.want)) {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
	t.Run("a modified insight moves to the top", func(t *testing.T) {
		call(t, f.h, "PATCH", f.insight(f.a.ProjectID, funnel["id"]), key, map[string]any{"description": "new"})
		_, body := call(t, f.h, "GET", f.insights(f.a.ProjectID), key, nil)
		if got := names(t, body["results"]); !reflect.DeepEqual(got, []string{"Checkout", "Retained", "Signups"}) {
			t.Fatalf("%v", got)
		}
	})
	t.Run("pages carry count, next and previous", func(t *testing.T) {
		_, body := call(t, f.h, "GET", f.insights(f.a.ProjectID)+"?limit=1&offset=1", key, nil)
		// The links keep the request's trailing slash (see TestPaginationLinksKeepThePathAsSent).
		base := "http://insightd.test" + f.insights(f.a.ProjectID)
		if body["count"] != float64(3) || body["next"] != base+"?limit=1&offset=2" || body["previous"] != base+"?limit=1&offset=0" ||
			!reflect.DeepEqual(names(t, body["results"]), []string{"Retained"}) {
			t.Fatalf("%v", body)
		}
		_, past := call(t, f.h, "GET", f.insights(f.a.ProjectID)+"?offset=10&saved=true", key, nil)
		if past["count"] != float64(1) || len(past["results"].([]any)) != 0 {
			t.Fatalf("past the end: %v", past)
		}
		_, last := call(t, f.h, "GET", f.insights(f.a.ProjectID)+"?offset=9223372036854775807", key, nil)
		if last["count"] != float64(3) || last["next"] != nil || len(last["results"].([]any)) != 0 {
			t.Fatalf("the largest offset: %v", last)
		}
	})
	for _, q := range []string{"created_by=x", "created_by=0", "saved=maybe", "favorited=", "insight=PIE", "limit=0", "offset=-1"} {
		t.Run(q+" is 400 naming the parameter", func(t *testing.T) {
			st, body := call(t, f.h, "GET", f.insights(f.a.ProjectID)+"?"+q, key, nil)
			if st != 400 || body["attr"] != strings.Split(q, "=")[0] {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
}

// The list's insight filter names what an insight computes: its query
// node's kind (which wins over filters), else filters' insight, else
// TRENDS for legacy filters with events and no insight.
func TestInsightListFilterKnowsQueryInsights(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	f.newInsight(t, map[string]any{"name": "viz", "query": map[string]any{"kind": "InsightVizNode",
		"source": map[string]any{"kind": "TrendsQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "$pageview"}}}}})
	f.newInsight(t, map[string]any{"name": "paths", "query": map[string]any{"kind": "PathsQuery", "pathsFilter": map[string]any{}}})
	f.newInsight(t, map[string]any{"name": "query wins", "filters": map[string]any{"insight": "FUNNELS"},
		"query": map[string]any{"kind": "InsightVizNode", "source": map[string]any{"kind": "LifecycleQuery", "series": []any{}}}})
	f.newInsight(t, map[string]any{"name": "legacy", "filters": map[string]any{"events": []any{map[string]any{"id": "$pageview"}}}})
	f.newInsight(t, map[string]any{"name": "nothing"})
	for kind, want := range map[string][]string{
		"TRENDS": {"legacy", "viz"}, "PATHS": {"paths"}, "LIFECYCLE": {"query wins"}, "FUNNELS": {}, "lifecycle": {"query wins"},
	} {
		t.Run(kind, func(t *testing.T) {
			st, body := call(t, f.h, "GET", f.insights(f.a.ProjectID)+"?insight="+kind, key, nil)
			got := names(t, body["results"])
			slices.Sort(got)
			if st != 200 || !reflect.DeepEqual(got, want) {
				t.Fatalf("%d %v", st, got)
			}
		})
	}
}
