package api

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestTaxonomyFromCapture: events, person $set and $groupidentify
// captured show up in event_definitions/ and property_definitions/ with
// PostHog's types, filters and paging, under both prefixes.
func TestTaxonomyFromCapture(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	at := time.Now().UTC().Add(-time.Hour)
	f.capture(t,
		groupEvent("$pageview", "u1", at, map[string]any{"$browser": "Chrome", "price": 9.5, "paid": true,
			"signed_up_at": "2026-01-02T03:04:05Z", "utm_source": "42", "nested": map[string]any{"deep": 1}, "$group_0": "acme"}),
		groupEvent("$pageview", "u2", at, map[string]any{"$browser": "Safari", "price": "not a number"}),
		groupEvent("signup", "u1", at, map[string]any{"plan": "pro", "$set": map[string]any{"email": "a@x.test", "age": 31}}),
		identifyGroup("company", "acme", at, map[string]any{"employees": 12, "name": "Acme"}),
		groupEvent(`it's "odd"; DROP TABLE events --`, "u3", at, map[string]any{`k\ey'"`: "v"}),
	)
	for _, prefix := range []string{"/api/projects", "/api/environments"} {
		base := fmt.Sprintf("%s/%d/", prefix, f.a.ProjectID)
		st, out := call(t, f.h, "GET", base+"event_definitions/", key, nil)
		if st != 200 || out["count"] != float64(4) {
			t.Fatalf("%s event_definitions: %d %v", prefix, st, out)
		}
		names := []string{}
		for _, r := range out["results"].([]any) {
			d := r.(map[string]any)
			names = append(names, d["name"].(string))
			if d["name"] == "$pageview" && d["volume_30_day"] != float64(0) && d["volume_30_day"] != float64(2) {
				t.Errorf("volume %v", d)
			}
		}
		if got := strings.Join(names, ","); got != `$groupidentify,$pageview,it's "odd"; DROP TABLE events --,signup` {
			t.Errorf("names %s", got)
		}
		types := map[string]any{}
		_, out = call(t, f.h, "GET", base+"property_definitions/?limit=100", key, nil)
		for _, r := range out["results"].([]any) {
			d := r.(map[string]any)
			types[d["name"].(string)] = d["property_type"]
		}
		want := map[string]any{"$browser": "String", "price": "Numeric", "paid": "Boolean", "signed_up_at": "DateTime",
			"utm_source": "String", "nested": nil, "plan": "String", `k\ey'"`: "String"}
		for k, v := range want {
			if got, ok := types[k]; !ok || got != v {
				t.Errorf("%s: property %q type %v (listed %v), want %v", prefix, k, got, ok, v)
			}
		}
		_, out = call(t, f.h, "GET", base+"property_definitions/?type=person", key, nil)
		if s := fmt.Sprint(out["results"]); !strings.Contains(s, "email") || !strings.Contains(s, "age") || out["count"] != float64(2) {
			t.Errorf("person properties %v", out)
		}
		_, out = call(t, f.h, "GET", base+"property_definitions/?type=group&group_type_index=0", key, nil)
		if out["count"] != float64(2) || !strings.Contains(fmt.Sprint(out["results"]), "employees") {
			t.Errorf("group properties %v", out)
		}
	}
	base := fmt.Sprintf("/api/projects/%d/", f.a.ProjectID)
	t.Run("filters", func(t *testing.T) {
		q := url.Values{"event_names": {`["signup"]`}, "filter_by_event_names": {"true"}}
		_, out := call(t, f.h, "GET", base+"property_definitions/?"+q.Encode(), key, nil)
		// Capture adds $ip; $set stays an event property, as in PostHog.
		if s := fmt.Sprint(out["results"]); out["count"] != float64(3) || !strings.Contains(s, "name:plan") || strings.Contains(s, "$browser") {
			t.Errorf("filter_by_event_names %v", out)
		}
		q.Del("filter_by_event_names")
		_, out = call(t, f.h, "GET", base+"property_definitions/?"+q.Encode(), key, nil)
		first := out["results"].([]any)[2].(map[string]any)
		if first["name"] != "plan" || first["is_seen_on_filtered_events"] != true || out["count"].(float64) < 8 {
			t.Errorf("event_names without the filter %v", out)
		}
		_, out = call(t, f.h, "GET", base+"property_definitions/?is_numerical=true", key, nil)
		if out["count"] != float64(1) {
			t.Errorf("is_numerical %v", out)
		}
		_, out = call(t, f.h, "GET", base+"property_definitions/?search=BROW", key, nil)
		if out["count"] != float64(1) {
			t.Errorf("search %v", out)
		}
		_, out = call(t, f.h, "GET", base+"property_definitions/?exclude_core_properties=true&excluded_properties="+url.QueryEscape(`["plan"]`), key, nil)
		if s := fmt.Sprint(out["results"]); strings.Contains(s, "$browser") || strings.Contains(s, "plan") || !strings.Contains(s, "price") {
			t.Errorf("exclusions %v", out)
		}
		_, out = call(t, f.h, "GET", base+"property_definitions/?properties=price,paid", key, nil)
		if out["count"] != float64(2) {
			t.Errorf("properties %v", out)
		}
	})
	t.Run("paging and ids", func(t *testing.T) {
		_, out := call(t, f.h, "GET", base+"event_definitions/?limit=2&offset=1", key, nil)
		r := out["results"].([]any)
		if len(r) != 2 || r[0].(map[string]any)["name"] != "$pageview" || out["next"] == nil || out["previous"] == nil {
			t.Fatalf("page %v", out)
		}
		id := r[0].(map[string]any)["id"].(string)
		if st, d := call(t, f.h, "GET", base+"event_definitions/"+id+"/", key, nil); st != 200 || d["name"] != "$pageview" {
			t.Errorf("by id: %d %v", st, d)
		}
		_, out = call(t, f.h, "GET", base+"property_definitions/?type=person", key, nil)
		pid := out["results"].([]any)[0].(map[string]any)["id"].(string)
		if st, d := call(t, f.h, "GET", base+"property_definitions/"+pid+"/", key, nil); st != 200 || d["type"] != "person" {
			t.Errorf("property by id: %d %v", st, d)
		}
		if st, _ := call(t, f.h, "GET", base+"event_definitions/nope/", key, nil); st != 404 {
			t.Errorf("unknown id: %d", st)
		}
	})
	t.Run("hostile search and bad parameters", func(t *testing.T) {
		for _, s := range []string{`' OR 1=1 --`, `{search:String}`, `%_\`, "\x00", `"odd"; DROP`} {
			st, out := call(t, f.h, "GET", base+"event_definitions/?search="+url.QueryEscape(s), key, nil)
			if st != 200 {
				t.Errorf("search %q: %d %v", s, st, out)
			}
			if s == `"odd"; DROP` && out["count"] != float64(1) {
				t.Errorf("search %q: %v", s, out)
			}
		}
		for q, attr := range map[string]string{"limit=0": "limit", "offset=-1": "offset", "type=cat": "type",
			"type=group": "group_type_index", "event_names=signup": "event_names", "is_numerical=maybe": "is_numerical",
			"property_type=Float": "property_type", "excluded_properties=x": "excluded_properties"} {
			st, out := call(t, f.h, "GET", base+"property_definitions/?"+q, key, nil)
			if st != 400 || out["attr"] != attr {
				t.Errorf("%s: %d %v, want a 400 naming %s", q, st, out, attr)
			}
		}
		if st, out := call(t, f.h, "GET", base+"event_definitions/?ordering=evil", key, nil); st != 400 || out["attr"] != "ordering" {
			t.Errorf("ordering: %d %v", st, out)
		}
	})
}

// TestMCPTools: execute_sql answers as the query API, read_taxonomy at
// each level; the tools and products insightd lacks answer a 404 naming
// them.
func TestMCPTools(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	at := time.Now().UTC().Add(-time.Hour)
	f.capture(t,
		groupEvent("$pageview", "u1", at, map[string]any{"$browser": "Chrome", "$set": map[string]any{"email": "a@x.test"}}),
		groupEvent("$pageview", "u2", at, map[string]any{"$browser": "Chrome"}),
		groupEvent("$pageview", "u2", at, map[string]any{"$browser": "Safari"}),
		identifyGroup("company", "acme", at, map[string]any{"employees": 12}),
	)
	env := fmt.Sprintf("/api/environments/%d/mcp_tools/", f.a.ProjectID)
	tool := func(name string, args any) (int, map[string]any) {
		return call(t, f.h, "POST", env+name+"/", key, map[string]any{"args": args})
	}
	st, out := tool("execute_sql", map[string]any{"query": "SELECT event, count() AS n FROM events GROUP BY event ORDER BY event", "truncate": true})
	if st != 200 || out["success"] != true || !strings.Contains(out["content"].(string), "event|n\n$groupidentify|1\n$pageview|3") {
		t.Errorf("execute_sql: %d %v", st, out)
	}
	for args, attr := range map[string]string{`{"query": "SELEC nonsense"}`: "args.query", `{"query": "SELECT nope FROM events"}`: "args.query",
		`{}`: "args.query", `{"query": "SELECT 1", "connectionId": "pg"}`: "args.connectionId"} {
		st, out := call(t, f.h, "POST", env+"execute_sql/", key, map[string]any{"args": rawJSON(args)})
		if st != 400 || out["attr"] != attr || out["type"] != "validation_error" {
			t.Errorf("execute_sql %s: %d %v, want a 400 naming %s", args, st, out, attr)
		}
	}
	if st, out := call(t, f.h, "POST", env+"execute_sql/", key, map[string]any{"args": "SELECT 1"}); st != 400 || out["attr"] != "args" {
		t.Errorf("args not an object: %d %v", st, out)
	}
	for _, tc := range []struct {
		query map[string]any
		want  []string
	}{
		{map[string]any{"kind": "events"}, []string{"events:", `name: "$pageview"`, "volume_30_day"}},
		{map[string]any{"kind": "event_properties", "event_name": "$pageview"}, []string{"String:", `name: "$browser"`}},
		{map[string]any{"kind": "event_properties", "event_name": "nothing"}, []string{"Properties do not exist"}},
		{map[string]any{"kind": "event_property_values", "event_name": "$pageview", "property_name": "$browser"}, []string{`- "Chrome"` + "\n" + `- "Safari"`}},
		{map[string]any{"kind": "entity_properties", "entity": "person"}, []string{`name: "email"`}},
		{map[string]any{"kind": "entity_properties", "entity": "company"}, []string{"Numeric:", `name: "employees"`}},
		{map[string]any{"kind": "entity_property_values", "entity": "person", "property_name": "email"}, []string{`- "a@x.test"`}},
		{map[string]any{"kind": "entity_property_values", "entity": "company", "property_name": "employees"}, []string{`- "12"`}},
	} {
		st, out := tool("read_taxonomy", map[string]any{"query": tc.query})
		content, _ := out["content"].(string)
		for _, w := range tc.want {
			if st != 200 || !strings.Contains(content, w) {
				t.Errorf("read_taxonomy %v: %d %q lacks %q", tc.query, st, content, w)
			}
		}
	}
	for q, attr := range map[string]string{`{"kind": "cats"}`: "args.query.kind", `{"kind": "event_properties"}`: "args.query.event_name",
		`{"kind": "entity_properties", "entity": "spaceship"}`: "args.query.entity", `{"kind": "action_properties", "action_id": 1}`: "args.query.kind"} {
		st, out := tool("read_taxonomy", map[string]any{"query": rawJSON(q)})
		if st != 400 || out["attr"] != attr {
			t.Errorf("read_taxonomy %s: %d %v, want a 400 naming %s", q, st, out, attr)
		}
	}
	for path, names := range map[string]string{
		env + "create_feature_flag/":                                                           `"create_feature_flag"`,
		fmt.Sprintf("/api/projects/%d/feature_flags/", f.a.ProjectID):                          "Feature flags",
		fmt.Sprintf("/api/environments/%d/experiments/1/", f.a.ProjectID):                      "Experiments",
		fmt.Sprintf("/api/projects/%d/surveys/", f.a.ProjectID):                                "Surveys",
		fmt.Sprintf("/api/environments/%d/error_tracking/issues/", f.a.ProjectID):              "Error tracking",
		fmt.Sprintf("/api/environments/%d/max_tools/create_and_query_insight/", f.a.ProjectID): "PostHog AI",
	} {
		st, out := call(t, f.h, "POST", path, key, map[string]any{})
		if st != 404 || !strings.Contains(fmt.Sprint(out["detail"]), names) || out["code"] != "not_found" {
			t.Errorf("%s: %d %v, want a 404 naming %s", path, st, out, names)
		}
	}
}

type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }
