package importer

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// posthogReplay serves a PostHog project from answers written after
// PostHog's own serializers (testdata/posthog): every field PostHog adds
// that insightd does not have is in them, and the events come back from
// HogQL as PostHog answers rows (properties a JSON string, timestamps
// with a Z), filtered by the placeholders the importer sends.
func posthogReplay(t *testing.T, project int64) *httptest.Server {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "posthog", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	files := map[string]string{
		"":                      "project.json",
		"actions":               "actions.json",
		"cohorts":               "cohorts.json",
		"cohorts/502/persons":   "cohort_502_persons.json",
		"insights":              "insights.json",
		"dashboards":            "dashboards.json",
		"dashboards/77":         "dashboard_77.json",
		"annotations":           "annotations.json",
		"groups_types":          "group_types.json",
		"persons":               "persons.json",
		"groups?0":              "groups_0.json",
		"groups?1":              "",
		"personal_api_keys/@me": "key.json",
	}
	var events [][]any
	if err := json.Unmarshal(read("events.json"), &events); err != nil {
		t.Fatal(err)
	}
	limit := regexp.MustCompile(`LIMIT (\d+)$`)
	prefix := fmt.Sprintf("/api/projects/%d/", project)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer phx_narrow" && r.URL.Path == "/api/personal_api_keys/@current/" {
			fmt.Fprint(w, `{"id": "k", "label": "narrow", "scopes": ["query:read", "insight:read"], "scoped_teams": [], "scoped_organizations": []}`)
			return
		}
		if r.Header.Get("Authorization") != "Bearer phx_source" && r.Header.Get("Authorization") != "Bearer phx_narrow" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"type": "authentication_error", "code": "authentication_failed", "detail": "Invalid personal API key.", "attr": null}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		path := strings.TrimSuffix(r.URL.Path, "/")
		switch {
		case path == "/api/personal_api_keys/@current":
			w.Write(read(files["personal_api_keys/@me"]))
			return
		case path+"/" == prefix:
			w.Write(read(files[""]))
			return
		case path == prefix+"query" && r.Method == http.MethodPost:
			var body struct {
				Query struct {
					Query  string         `json:"query"`
					Values map[string]any `json:"values"`
				} `json:"query"`
			}
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				w.WriteHeader(400)
				return
			}
			rows := hogqlReplay(t, events, body.Query.Query, body.Query.Values, limit)
			out := map[string]any{"cache_key": "cache_x", "clickhouse": "SELECT ...", "columns": []string{"uuid", "event", "timestamp", "distinct_id", "properties"},
				"error": nil, "explain": nil, "hasMore": false, "hogql": body.Query.Query, "is_cached": false, "last_refresh": "2026-12-07T10:00:00Z",
				"limit": 100, "metadata": nil, "modifiers": map[string]any{"personsOnEventsMode": "person_id_override_properties_on_events"}, "offset": 0,
				"query": body.Query.Query, "query_status": nil, "results": rows, "timezone": "UTC",
				"timings": []any{map[string]any{"k": "./query", "t": 0.01}}, "types": [][]string{{"uuid", "UUID"}, {"event", "String"}}}
			json.NewEncoder(w).Encode(out)
			return
		case path == prefix+"groups":
			f := files["groups?"+r.URL.Query().Get("group_type_index")]
			if f == "" {
				fmt.Fprint(w, `{"next": null, "previous": null, "results": []}`)
				return
			}
			w.Write(read(f))
			return
		}
		if f, ok := files[strings.TrimPrefix(path, prefix)]; ok && strings.HasPrefix(path, prefix) {
			w.Write(read(f))
			return
		}
		w.WriteHeader(404)
		fmt.Fprint(w, `{"type": "invalid_request", "code": "not_found", "detail": "Not found.", "attr": null}`)
	}))
}

// hogqlReplay answers the importer's three queries over events.
func hogqlReplay(t *testing.T, events [][]any, q string, values map[string]any, limit *regexp.Regexp) [][]any {
	ts := func(e []any) time.Time {
		v, err := time.Parse(time.RFC3339Nano, e[2].(string))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	at := func(key string) time.Time {
		v, err := time.Parse(chTime, fmt.Sprint(values[key]))
		if err != nil {
			t.Fatalf("placeholder %s = %v: %v", key, values[key], err)
		}
		return v
	}
	switch {
	case strings.HasPrefix(q, "SELECT min(timestamp)"):
		return [][]any{{events[0][2], events[len(events)-1][2], len(events)}}
	case strings.Contains(q, "'$groupidentify'"):
		for _, e := range events {
			if e[1] == "$groupidentify" && strings.Contains(e[4].(string), fmt.Sprintf("%q", values["t"])) {
				return [][]any{e}
			}
		}
		return [][]any{}
	}
	lo, hi, after := at("lo"), at("hi"), fmt.Sprint(values["after"])
	var rows [][]any
	for _, e := range events {
		t := ts(e)
		if t.Before(lo) || !t.Before(hi) || (t.Equal(lo) && e[0].(string) <= after) {
			continue
		}
		rows = append(rows, e)
	}
	sort.SliceStable(rows, func(i, j int) bool { return ts(rows[i]).Before(ts(rows[j])) })
	if m := limit.FindStringSubmatch(q); m != nil {
		n, _ := strconv.Atoi(m[1])
		rows = rows[:min(n, len(rows))]
	}
	return rows
}

func TestImportReadsPostHogShapes(t *testing.T) {
	s, _, _ := newServer(t)
	dst := id(s.call(t, "POST", "/api/organizations/@current/projects/", map[string]any{"name": "Target"}, 201))
	ph := posthogReplay(t, 4242)
	defer ph.Close()
	cfg := Config{Source: NewClient(ph.URL, "phx_source", 4242), Target: NewClient(s.base, s.key, dst), PageSize: 2,
		Checkpoint: filepath.Join(t.TempDir(), "c.json")}
	im, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := im.Run(t.Context())
	if err != nil {
		t.Fatalf("import from PostHog's shapes: %v", err)
	}
	if rep.Events.Copied != 5 || rep.Actions.Copied != 1 || rep.Cohorts.Copied != 2 || rep.Insights.Copied != 2 ||
		rep.Dashboards.Copied != 1 || rep.Annotations.Copied != 1 || rep.Persons.Total != 2 || rep.Groups.Total != 1 {
		t.Fatalf("report %+v", rep)
	}
	p := fmt.Sprintf("/api/projects/%d/", dst)
	persons := map[string]any{}
	for _, pr := range obj(s.call(t, "GET", p+"persons/", nil, 200))["results"].([]any) {
		var ids []string
		for _, d := range obj(pr)["distinct_ids"].([]any) {
			ids = append(ids, d.(string))
		}
		sort.Strings(ids)
		persons[strings.Join(ids, ",")] = obj(pr)["properties"]
	}
	equal(t, "persons", persons, map[string]any{
		"ada,anon-ada": map[string]any{"email": "ada@example.com", "plan": "pro", "$initial_browser": "Chrome"},
		"bo":           map[string]any{"email": "bo@example.com"}})
	groups := obj(s.call(t, "GET", p+"groups/?group_type_index=0", nil, 200))["results"].([]any)
	if len(groups) != 1 || obj(groups[0])["group_key"] != "acme" {
		t.Errorf("groups %v", groups)
	} else {
		equal(t, "group properties", obj(groups[0])["group_properties"], map[string]any{"name": "Acme", "seats": 12})
	}
	cohorts := s.byName(t, dst, "cohorts", "name")
	actions := s.byName(t, dst, "actions", "name")
	steps := actions["Signed up (pro)"]["steps"].([]any)
	if got := obj(obj(steps[0])["properties"].([]any)[0])["value"]; got != cohorts["Pro users"]["id"] {
		t.Errorf("the action's step names cohort %v, want the copy of Pro users %v", got, cohorts["Pro users"]["id"])
	}
	waitCohort(t, s, dst, id(cohorts["Picked by hand"]))
	if c := obj(s.call(t, "GET", fmt.Sprintf("%scohorts/%d/", p, id(cohorts["Picked by hand"])), nil, 200)); c["count"] != float64(1) || c["is_static"] != true {
		t.Errorf("static cohort %v", c)
	}
	insights := s.byName(t, dst, "insights", "name")
	q := obj(obj(insights["Pro signups"]["query"])["source"])
	if got := obj(q["series"].([]any)[0])["id"]; got != actions["Signed up (pro)"]["id"] {
		t.Errorf("the insight's series names action %v, want %v", got, actions["Signed up (pro)"]["id"])
	}
	dash := s.byName(t, dst, "dashboards", "name")["Growth"]
	full := obj(s.call(t, "GET", fmt.Sprintf("%sdashboards/%d/", p, id(dash)), nil, 200))
	tiles := full["tiles"].([]any)
	if len(tiles) != 2 || obj(obj(tiles[0])["insight"])["name"] != "Pro signups" || obj(tiles[0])["color"] != "blue" ||
		obj(obj(tiles[1])["text"])["body"] != "Read me first" || full["pinned"] != true {
		t.Errorf("dashboard %v", full)
	}
	equal(t, "tile layouts", obj(tiles[0])["layouts"], map[string]any{"sm": map[string]any{"h": 5, "w": 6, "x": 0, "y": 0, "minH": 1, "minW": 1, "moved": false, "static": false}, "xs": map[string]any{"h": 5, "w": 1, "x": 0, "y": 0}})
	ann := s.byName(t, dst, "annotations", "content")["Pricing launched"]
	if ann["dashboard_item"] != insights["Pro signups"]["id"] {
		t.Errorf("annotation %v", ann)
	}

	// The key's scopes and the source are checked before anything is written.
	bad := cfg
	bad.Source = NewClient(ph.URL, "phx_wrong", 4242)
	bad.Checkpoint = ""
	if im, err := New(bad); err != nil {
		t.Fatal(err)
	} else if _, err := im.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "Invalid personal API key") {
		t.Errorf("a wrong key: %v", err)
	}
	bad.Source = NewClient(ph.URL, "phx_source", 4242)
	bad.Only, _ = ParseOnly("events,persons,groups,actions,cohorts,insights,dashboards,annotations")
	bad.Source = NewClient(ph.URL, "phx_narrow", 4242)
	if im, err := New(bad); err != nil {
		t.Fatal(err)
	} else if _, err := im.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "lacks the scopes person:read, group:read, action:read") {
		t.Errorf("a key without the scopes: %v", err)
	}
	if _, err := ParseOnly("events,flags"); err == nil || !strings.Contains(err.Error(), `unknown part "flags"`) {
		t.Errorf("--only flags: %v", err)
	}
	notPostHog := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>hello</html>") }))
	defer notPostHog.Close()
	bad.Source = NewClient(notPostHog.URL, "phx_source", 4242)
	if im, err := New(bad); err != nil {
		t.Fatal(err)
	} else if _, err := im.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "PostHog-compatible") {
		t.Errorf("a source that is not PostHog: %v", err)
	}
}
