package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// getJSON sends a GET with a Bearer key and decodes the body into v.
func getJSON(t *testing.T, f *fixture, path, key string, v any) int {
	t.Helper()
	r := httptest.NewRequest("GET", path, nil)
	r.Host = "insightd.test"
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	if v != nil && w.Code == 200 {
		if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
			t.Fatalf("GET %s: %q: %v", path, w.Body, err)
		}
	}
	return w.Code
}

// groupEvent is a captured event as a batch item.
func groupEvent(name, who string, at time.Time, props map[string]any) map[string]any {
	return map[string]any{"event": name, "distinct_id": who, "uuid": uuid.NewString(),
		"timestamp": at.UTC().Format(time.RFC3339Nano), "properties": props}
}

// identifyGroup is a $groupidentify of the group (typ, key) setting set.
func identifyGroup(typ, key string, at time.Time, set map[string]any) map[string]any {
	return groupEvent("$groupidentify", "server", at, map[string]any{"$group_type": typ, "$group_key": key, "$group_set": set})
}

// postCapture posts a capture body to /batch/.
func postCapture(t *testing.T, f *fixture, body map[string]any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	r := httptest.NewRequest("POST", "/batch/", bytes.NewReader(b))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	var out map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	return w.Code, out
}

func captureBatch(t *testing.T, f *fixture, token string, events ...map[string]any) (int, map[string]any) {
	t.Helper()
	items := make([]any, len(events))
	for i, e := range events {
		items[i] = e
	}
	return postCapture(t, f, map[string]any{"api_key": token, "batch": items})
}

type apiGroup struct {
	GroupTypeIndex  int             `json:"group_type_index"`
	GroupKey        string          `json:"group_key"`
	GroupProperties json.RawMessage `json:"group_properties"`
	CreatedAt       time.Time       `json:"created_at"`
}

type apiGroupType struct {
	GroupType      string  `json:"group_type"`
	GroupTypeIndex int     `json:"group_type_index"`
	NameSingular   *string `json:"name_singular"`
	NamePlural     *string `json:"name_plural"`
}

func groupTypesOf(t *testing.T, f *fixture, project int64, key string) string {
	t.Helper()
	var types []apiGroupType
	if code := getJSON(t, f, fmt.Sprintf("/api/projects/%d/groups_types/", project), key, &types); code != 200 {
		t.Fatalf("groups_types: %d", code)
	}
	parts := make([]string, len(types))
	for i, gt := range types {
		if gt.NameSingular != nil || gt.NamePlural != nil {
			t.Fatalf("names: %+v", gt)
		}
		parts[i] = fmt.Sprintf("%d:%s", gt.GroupTypeIndex, gt.GroupType)
	}
	return strings.Join(parts, " ")
}

func hasGroupTypes(t *testing.T, f *fixture) bool {
	t.Helper()
	var p struct {
		HasGroupTypes *bool `json:"has_group_types"`
	}
	if code := getJSON(t, f, fmt.Sprintf("/api/projects/%d/", f.a.ProjectID), f.a.PersonalAPIKey, &p); code != 200 || p.HasGroupTypes == nil {
		t.Fatalf("project: %d", code)
	}
	return *p.HasGroupTypes
}

// TestGroupsCapture: $groups and $groupidentify at capture: types
// numbered in order of first use, a sixth refused naming the event's
// field, group properties applied in event-time order whatever the order
// they arrive in, and $group_N written on the events.
func TestGroupsCapture(t *testing.T) {
	f := newFixture(t)
	token, key := f.a.ProjectAPIToken, f.a.PersonalAPIKey
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return day.Add(time.Duration(h) * time.Hour) }
	if hasGroupTypes(t, f) {
		t.Fatal("a new project has group types")
	}
	if got := groupTypesOf(t, f, f.a.ProjectID, key); got != "" {
		t.Fatalf("types before any event: %q", got)
	}
	// The $groupidentify of 10:00 arrives first, the earlier one of 9:00
	// after it: plan stays the later "pro", name comes from the earlier.
	if code, out := captureBatch(t, f, token,
		groupEvent("$pageview", "u1", at(8), map[string]any{"$groups": map[string]any{"company": "acme", "team": "t-1"}}),
		identifyGroup("company", "acme", at(10), map[string]any{"plan": "pro", "seats": 10}),
	); code != 200 {
		t.Fatalf("capture: %d %v", code, out)
	}
	if code, out := captureBatch(t, f, token, identifyGroup("company", "acme", at(9), map[string]any{"plan": "free", "name": "Acme Inc"})); code != 200 {
		t.Fatalf("capture: %d %v", code, out)
	}
	if got := groupTypesOf(t, f, f.a.ProjectID, key); got != "0:company 1:team" {
		t.Fatalf("types: %q", got)
	}
	if !hasGroupTypes(t, f) {
		t.Fatal("has_group_types is still false")
	}
	var acme apiGroup
	if code := getJSON(t, f, fmt.Sprintf("/api/projects/%d/groups/find?group_type_index=0&group_key=acme", f.a.ProjectID), key, &acme); code != 200 {
		t.Fatalf("find: %d", code)
	}
	var props map[string]any
	json.Unmarshal(acme.GroupProperties, &props)
	if want := map[string]any{"plan": "pro", "seats": float64(10), "name": "Acme Inc"}; !reflect.DeepEqual(props, want) ||
		!acme.CreatedAt.Equal(at(9)) || acme.GroupTypeIndex != 0 || acme.GroupKey != "acme" {
		t.Fatalf("acme: %+v %v", acme, props)
	}

	t.Run("a later $group_set of the same time order wins; an older one changes nothing", func(t *testing.T) {
		captureBatch(t, f, token, identifyGroup("company", "acme", at(7), map[string]any{"plan": "trial", "seats": 1}))
		captureBatch(t, f, token, identifyGroup("company", "acme", at(11), map[string]any{"seats": 12}))
		var g apiGroup
		getJSON(t, f, fmt.Sprintf("/api/projects/%d/groups/find?group_type_index=0&group_key=acme", f.a.ProjectID), key, &g)
		json.Unmarshal(g.GroupProperties, &props)
		if want := map[string]any{"plan": "pro", "seats": float64(12), "name": "Acme Inc"}; !reflect.DeepEqual(props, want) || !g.CreatedAt.Equal(at(7)) {
			t.Fatalf("acme: %+v %v", g, props)
		}
	})

	t.Run("another server (a restart) reads the group back: an older $group_set still loses", func(t *testing.T) {
		s2 := New(testConfig(), quietLog(), f.s.store, engine)
		defer s2.writer.Close()
		f2 := &fixture{s: s2, h: validated(t, s2.Handler()), a: f.a, b: f.b}
		if code, out := captureBatch(t, f2, token, identifyGroup("company", "acme", at(8), map[string]any{"seats": 2, "city": "Paris"})); code != 200 {
			t.Fatalf("capture: %d %v", code, out)
		}
		var g apiGroup
		getJSON(t, f2, fmt.Sprintf("/api/projects/%d/groups/find?group_type_index=0&group_key=acme", f.a.ProjectID), key, &g)
		json.Unmarshal(g.GroupProperties, &props)
		if want := map[string]any{"plan": "pro", "seats": float64(12), "name": "Acme Inc", "city": "Paris"}; !reflect.DeepEqual(props, want) {
			t.Fatalf("acme: %+v %v", g, props)
		}
	})

	t.Run("events carry $group_N for each of their groups", func(t *testing.T) {
		var series []struct {
			BreakdownValue string   `json:"breakdown_value"`
			Value          *float64 `json:"aggregated_value"`
		}
		for _, tc := range []struct{ prop, want string }{{"$group_0", "acme"}, {"$group_1", "t-1"}} {
			code, body := call(t, f.h, "POST", fmt.Sprintf("/api/projects/%d/insights/trend/", f.a.ProjectID), key, map[string]any{
				"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "2026-03-02", "date_to": "2026-03-02",
				"display": "ActionsTable", "breakdown": tc.prop})
			b, _ := json.Marshal(body["result"])
			json.Unmarshal(b, &series)
			if code != 200 || len(series) != 1 || series[0].BreakdownValue != tc.want || *series[0].Value != 1 {
				t.Fatalf("%s: %d %s", tc.prop, code, b)
			}
		}
	})

	t.Run("types get the next indexes in order; a sixth is refused for the batch", func(t *testing.T) {
		ev := groupEvent("$pageview", "u2", at(12), map[string]any{"$groups": map[string]any{"a": "1"}})
		ev["properties"] = json.RawMessage(`{"$groups": {"zeta": "1", "alpha": 2, "mid": "x"}}`)
		if code, out := captureBatch(t, f, token, ev); code != 200 {
			t.Fatalf("capture: %d %v", code, out)
		}
		if got := groupTypesOf(t, f, f.a.ProjectID, key); got != "0:company 1:team 2:zeta 3:alpha 4:mid" {
			t.Fatalf("types: %q", got)
		}
		code, out := captureBatch(t, f, token,
			groupEvent("$pageview", "u3", at(12), map[string]any{"$groups": map[string]any{"company": "beta"}}),
			groupEvent("$pageview", "u3", at(12), map[string]any{"$groups": map[string]any{"sixth": "s"}}))
		if code != 400 || out["attr"] != "batch[1].properties.$groups" || out["code"] != "too_many_group_types" ||
			!strings.Contains(fmt.Sprint(out["detail"]), `"sixth"`) {
			t.Fatalf("sixth type: %d %v", code, out)
		}
		single := identifyGroup("sixth", "s", at(12), nil)
		single["api_key"] = token
		if code, out := postCapture(t, f, single); code != 400 || out["attr"] != "properties.$group_type" {
			t.Fatalf("sixth type, one event: %d %v", code, out)
		}
		if got := groupTypesOf(t, f, f.a.ProjectID, key); got != "0:company 1:team 2:zeta 3:alpha 4:mid" {
			t.Fatalf("types after refusals: %q", got)
		}
		// A known type still goes through.
		if code, out := captureBatch(t, f, token, groupEvent("$pageview", "u3", at(12), map[string]any{"$groups": map[string]any{"company": "beta"}})); code != 200 {
			t.Fatalf("known type: %d %v", code, out)
		}
	})

	t.Run("a $groups key spelled with escapes is read", func(t *testing.T) {
		ev := groupEvent("escaped", "u4", at(14), nil)
		ev["properties"] = json.RawMessage(`{"\u0024groups": {"company": "escaped-co"}}`)
		if code, out := captureBatch(t, f, token, ev); code != 200 {
			t.Fatalf("capture: %d %v", code, out)
		}
		code, body := call(t, f.h, "POST", fmt.Sprintf("/api/projects/%d/insights/trend/", f.a.ProjectID), key, map[string]any{
			"events": []any{map[string]any{"id": "escaped"}}, "date_from": "2026-03-02", "date_to": "2026-03-02",
			"display": "ActionsTable", "breakdown": "$group_0"})
		b, _ := json.Marshal(body["result"])
		if code != 200 || !strings.Contains(string(b), `"breakdown_value":"escaped-co"`) {
			t.Fatalf("%d %s", code, b)
		}
	})

	t.Run("bad group input is a 400 naming the field", func(t *testing.T) {
		for name, tc := range map[string]struct {
			props map[string]any
			event string
			attr  string
		}{
			"$groups not an object":         {map[string]any{"$groups": []any{"acme"}}, "$pageview", "batch[0].properties.$groups"},
			"a group key that is an object": {map[string]any{"$groups": map[string]any{"company": map[string]any{}}}, "$pageview", "batch[0].properties.$groups"},
			"a key too long":                {map[string]any{"$groups": map[string]any{"company": strings.Repeat("k", 401)}}, "$pageview", "batch[0].properties.$groups"},
			"no $group_type":                {map[string]any{"$group_key": "acme"}, "$groupidentify", "batch[0].properties.$group_type"},
			"no $group_key":                 {map[string]any{"$group_type": "company"}, "$groupidentify", "batch[0].properties.$group_key"},
			"$group_set not an object":      {map[string]any{"$group_type": "company", "$group_key": "acme", "$group_set": "x"}, "$groupidentify", "batch[0].properties.$group_set"},
		} {
			t.Run(name, func(t *testing.T) {
				code, out := captureBatch(t, f, token, groupEvent(tc.event, "u9", at(13), tc.props))
				if code != 400 || out["attr"] != tc.attr {
					t.Fatalf("%d %v", code, out)
				}
			})
		}
	})
}

// TestGroupsAPI: the list (newest first, search on key and properties,
// one key), find, the parameters it needs, scopes and other
// organizations.
func TestGroupsAPI(t *testing.T) {
	f := newFixture(t)
	token, key := f.a.ProjectAPIToken, f.a.PersonalAPIKey
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return day.Add(time.Duration(h) * time.Hour) }
	if code, out := captureBatch(t, f, token,
		identifyGroup("company", "acme", at(1), map[string]any{"name": "Acme Rockets", "industry": "aerospace"}),
		identifyGroup("company", "beta", at(3), map[string]any{"name": "Beta Foods", "industry": "food"}),
		identifyGroup("company", "gamma-rocket", at(2), map[string]any{"name": "Gamma", "industry": "food"}),
		identifyGroup("team", "acme", at(4), map[string]any{"size": 3}),
	); code != 200 {
		t.Fatalf("capture: %d %v", code, out)
	}
	base := fmt.Sprintf("/api/projects/%d/groups/", f.a.ProjectID)
	list := func(t *testing.T, query string) (int, []string) {
		t.Helper()
		var page struct {
			Count   int        `json:"count"`
			Next    *string    `json:"next"`
			Results []apiGroup `json:"results"`
		}
		if code := getJSON(t, f, base+"?"+query, key, &page); code != 200 {
			t.Fatalf("list %s: %d", query, code)
		}
		keys := make([]string, len(page.Results))
		for i, g := range page.Results {
			keys[i] = g.GroupKey
		}
		return page.Count, keys
	}
	for name, tc := range map[string]struct {
		query string
		count int
		keys  []string
	}{
		"newest first": {"group_type_index=0", 3, []string{"beta", "gamma-rocket", "acme"}},
		"a page":       {"group_type_index=0&limit=1&offset=1", 3, []string{"gamma-rocket"}},
		"past the end": {"group_type_index=0&offset=1000", 3, []string{}},
		"search on the key or the properties, any case": {"group_type_index=0&search=ROCKET", 2, []string{"gamma-rocket", "acme"}},
		"search on a property value":                    {"group_type_index=0&search=food", 2, []string{"beta", "gamma-rocket"}},
		"one key":                                       {"group_type_index=0&group_key=acme", 1, []string{"acme"}},
		"another type":                                  {"group_type_index=1", 1, []string{"acme"}},
		"a type without groups":                         {"group_type_index=4", 0, []string{}},
		"a key that does not exist":                     {"group_type_index=0&group_key=acm", 0, []string{}},
	} {
		t.Run(name, func(t *testing.T) {
			count, keys := list(t, tc.query)
			if count != tc.count || !reflect.DeepEqual(keys, tc.keys) {
				t.Fatalf("count %d keys %v", count, keys)
			}
		})
	}
	t.Run("find and its 404", func(t *testing.T) {
		var g apiGroup
		if code := getJSON(t, f, base+"find?group_type_index=1&group_key=acme", key, &g); code != 200 || string(g.GroupProperties) != `{"size":3}` || g.GroupTypeIndex != 1 {
			t.Fatalf("%d %+v", code, g)
		}
		if code := getJSON(t, f, base+"find?group_type_index=0&group_key=nope", key, nil); code != 404 {
			t.Fatalf("unknown key: %d", code)
		}
	})
	t.Run("group_type_index is required and checked", func(t *testing.T) {
		for _, q := range []string{"", "group_type_index=5", "group_type_index=-1", "group_type_index=x"} {
			if code, out := call(t, f.h, "GET", base+"?"+q, key, nil); code != 400 || out["attr"] != "group_type_index" {
				t.Fatalf("%q: %d %v", q, code, out)
			}
		}
		if code, out := call(t, f.h, "GET", base+"find?group_type_index=0", key, nil); code != 400 || out["attr"] != "group_key" {
			t.Fatalf("find without a key: %d %v", code, out)
		}
	})
	t.Run("scopes and other organizations", func(t *testing.T) {
		types := fmt.Sprintf("/api/projects/%d/groups_types/", f.a.ProjectID)
		reader := f.key(t, "ada@example.com", "group:read")
		if code := getJSON(t, f, base+"?group_type_index=0", reader, nil); code != 200 {
			t.Fatalf("group:read: %d", code)
		}
		if code := getJSON(t, f, types, reader, nil); code != 200 {
			t.Fatalf("group:read, types: %d", code)
		}
		other := f.key(t, "ada@example.com", "insight:read", "person:read")
		for _, p := range []string{base + "?group_type_index=0", base + "find?group_type_index=0&group_key=acme", types} {
			if code := getJSON(t, f, p, other, nil); code != 403 {
				t.Fatalf("%s without group:read: %d", p, code)
			}
			if code := getJSON(t, f, p, f.b.PersonalAPIKey, nil); code != 404 {
				t.Fatalf("%s from another organization: %d", p, code)
			}
		}
		// Bob's own project has no groups: acme is not his.
		if code := getJSON(t, f, fmt.Sprintf("/api/projects/%d/groups/find?group_type_index=0&group_key=acme", f.b.ProjectID), f.b.PersonalAPIKey, nil); code != 404 {
			t.Fatalf("acme through bob's project: %d", code)
		}
	})
}
