package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func (f *fixture) dashboards(projectID int64) string {
	return fmt.Sprintf("/api/projects/%d/dashboards/", projectID)
}

func (f *fixture) dashboard(projectID int64, id any) string {
	return fmt.Sprintf("/api/projects/%d/dashboards/%v/", projectID, id)
}

// newDashboard creates a dashboard in Ada's project and returns it.
func (f *fixture) newDashboard(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	st, out := call(t, f.h, "POST", f.dashboards(f.a.ProjectID), f.a.PersonalAPIKey, body)
	if st != http.StatusCreated {
		t.Fatalf("create dashboard: %d %v", st, out)
	}
	return out
}

func (f *fixture) getDashboard(t *testing.T, id any, query string) map[string]any {
	t.Helper()
	st, out := call(t, f.h, "GET", f.dashboard(f.a.ProjectID, id)+query, f.a.PersonalAPIKey, nil)
	if st != 200 {
		t.Fatalf("retrieve dashboard: %d %v", st, out)
	}
	return out
}

// tileInsights lists the insight ids of a dashboard's tiles, in order
// (0 for a text tile).
func tileInsights(t *testing.T, d map[string]any) []int64 {
	t.Helper()
	var out []int64
	for _, x := range d["tiles"].([]any) {
		tile := x.(map[string]any)
		if in, ok := tile["insight"].(map[string]any); ok {
			out = append(out, int64(in["id"].(float64)))
		} else {
			out = append(out, 0)
		}
	}
	return out
}

func idOf(m map[string]any) int64 { return int64(m["id"].(float64)) }

func TestDashboardsAPI(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	base := f.dashboards(f.a.ProjectID)
	d := f.newDashboard(t, map[string]any{"name": "Growth", "description": "Weekly", "pinned": true, "tags": []string{"team"},
		"filters": map[string]any{"date_from": "-30d"}})
	if d["name"] != "Growth" || d["pinned"] != true || d["deleted"] != false || d["creation_mode"] != "default" ||
		d["restriction_level"] != float64(21) || d["effective_privilege_level"] != float64(37) ||
		fmt.Sprint(d["filters"]) != "map[date_from:-30d]" || fmt.Sprint(d["tiles"]) != "[]" || d["created_by"] == nil {
		t.Fatalf("created %v", d)
	}
	path := f.dashboard(f.a.ProjectID, d["id"])

	t.Run("list pages, searches and leaves tiles out", func(t *testing.T) {
		f.newDashboard(t, map[string]any{"name": "Revenue"})
		st, out := call(t, f.h, "GET", base+"?search=gROW", key, nil)
		if st != 200 || out["count"] != float64(1) {
			t.Fatalf("search: %d %v", st, out)
		}
		if _, has := out["results"].([]any)[0].(map[string]any)["tiles"]; has {
			t.Errorf("a list item carries tiles: %v", out)
		}
		st, out = call(t, f.h, "GET", base+"?limit=1", key, nil)
		if st != 200 || out["count"] != float64(2) || out["next"] == nil ||
			out["results"].([]any)[0].(map[string]any)["name"] != "Growth" { // pinned first
			t.Fatalf("list: %d %v", st, out)
		}
	})
	t.Run("PATCH and PUT change fields; the activity log records them", func(t *testing.T) {
		st, out := call(t, f.h, "PATCH", path, key, map[string]any{"description": "Monthly", "filters": map[string]any{"date_from": "-90d"}})
		if st != 200 || out["description"] != "Monthly" || fmt.Sprint(out["filters"]) != "map[date_from:-90d]" {
			t.Fatalf("patch: %d %v", st, out)
		}
		if st, out = call(t, f.h, "PUT", path, key, map[string]any{"name": "Growth 2"}); st != 200 || out["name"] != "Growth 2" {
			t.Fatalf("put: %d %v", st, out)
		}
		st, out = call(t, f.h, "GET", path+"activity/", key, nil)
		if st != 200 || out["count"] != float64(3) {
			t.Fatalf("activity: %d %v", st, out)
		}
		last := out["results"].([]any)[0].(map[string]any)
		if last["activity"] != "updated" || !strings.Contains(fmt.Sprint(last["detail"]), "Growth 2") {
			t.Fatalf("latest entry %v", last)
		}
	})
	t.Run("tiles: insight and text tiles added, edited and deleted by PATCH", func(t *testing.T) {
		ins := f.newInsight(t, map[string]any{"name": "Views", "filters": map[string]any{"events": []any{map[string]any{"id": "$pageview"}}}})
		st, out := call(t, f.h, "PATCH", path, key, map[string]any{"tiles": []any{
			map[string]any{"insight": ins["id"], "layouts": map[string]any{"sm": map[string]any{"x": 0, "w": 6}}, "color": "blue"},
			map[string]any{"text": map[string]any{"body": "Read me"}}}})
		if st != 200 || !slices.Equal(tileInsights(t, out), []int64{idOf(ins), 0}) {
			t.Fatalf("add: %d %v", st, out)
		}
		tiles := out["tiles"].([]any)
		insightTile, textTile := tiles[0].(map[string]any), tiles[1].(map[string]any)
		if insightTile["color"] != "blue" || fmt.Sprint(insightTile["layouts"]) != "map[sm:map[w:6 x:0]]" ||
			textTile["text"].(map[string]any)["body"] != "Read me" || textTile["insight"] != nil {
			t.Fatalf("tiles %v", tiles)
		}
		st, out = call(t, f.h, "PATCH", path, key, map[string]any{"tiles": []any{
			map[string]any{"id": insightTile["id"], "color": nil, "layouts": map[string]any{"sm": map[string]any{"x": 6}}},
			map[string]any{"id": textTile["id"], "text": map[string]any{"body": "Read me twice"}}}})
		tiles = out["tiles"].([]any)
		if st != 200 || tiles[0].(map[string]any)["color"] != nil || fmt.Sprint(tiles[0].(map[string]any)["layouts"]) != "map[sm:map[x:6]]" ||
			tiles[1].(map[string]any)["text"].(map[string]any)["body"] != "Read me twice" {
			t.Fatalf("edit: %d %v", st, out)
		}
		// A tile read and sent back whole names its own insight.
		sentBack := map[string]any{"id": insightTile["id"], "insight": insightTile["insight"], "layouts": map[string]any{"sm": map[string]any{"x": 3}}}
		if st, out := call(t, f.h, "PATCH", path, key, map[string]any{"tiles": []any{sentBack}}); st != 200 {
			t.Fatalf("a tile sent back: %d %v", st, out)
		}
		other := f.newInsight(t, map[string]any{"name": "Other", "filters": map[string]any{"events": []any{map[string]any{"id": "$pageview"}}}})
		if st, out := call(t, f.h, "PATCH", path, key, map[string]any{"tiles": []any{map[string]any{"id": insightTile["id"], "insight": other["id"]}}}); st != 400 {
			t.Fatalf("a tile's insight changed: %d %v", st, out)
		}
		st, out = call(t, f.h, "PATCH", path, key, map[string]any{"tiles": []any{map[string]any{"id": textTile["id"], "deleted": true}}})
		if st != 200 || !slices.Equal(tileInsights(t, out), []int64{idOf(ins)}) {
			t.Fatalf("delete a tile: %d %v", st, out)
		}
	})
	t.Run("DELETE is refused; deleted: true soft-deletes, then 404 and out of the list", func(t *testing.T) {
		if st, _ := call(t, f.h, "DELETE", path, key, nil); st != http.StatusMethodNotAllowed {
			t.Fatalf("hard delete: %d", st)
		}
		if st, out := call(t, f.h, "PATCH", path, key, map[string]any{"deleted": true}); st != 200 || out["deleted"] != true {
			t.Fatalf("soft delete: %d %v", st, out)
		}
		if st, _ := call(t, f.h, "GET", path, key, nil); st != 404 {
			t.Fatalf("deleted dashboard: %d", st)
		}
		if st, out := call(t, f.h, "GET", base, key, nil); st != 200 || out["count"] != float64(1) {
			t.Fatalf("list after delete: %d %v", st, out)
		}
		if st, _ := call(t, f.h, "PATCH", path, key, map[string]any{"name": "x"}); st != 404 {
			t.Fatalf("patching a deleted dashboard: %d", st)
		}
		st, out := call(t, f.h, "PATCH", path, key, map[string]any{"deleted": false})
		if st != 200 || out["deleted"] != false || len(out["tiles"].([]any)) != 1 {
			t.Fatalf("restore: %d %v", st, out)
		}
	})
}

func TestDashboardValidation(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	base := f.dashboards(f.a.ProjectID)
	d := f.newDashboard(t, map[string]any{"name": "D"})
	other := f.newDashboard(t, map[string]any{"name": "Other"})
	st, otherOut := call(t, f.h, "PATCH", f.dashboard(f.a.ProjectID, other["id"]), key, map[string]any{
		"tiles": []any{map[string]any{"text": map[string]any{"body": "x"}}}})
	if st != 200 {
		t.Fatalf("%d %v", st, otherOut)
	}
	otherTile := otherOut["tiles"].([]any)[0].(map[string]any)["id"]
	for name, tc := range map[string]struct {
		method string
		body   map[string]any
		attr   string
		says   string
	}{
		"a name over 400 characters":         {"POST", map[string]any{"name": strings.Repeat("n", 401)}, "name", "at most 400"},
		"a NUL in the name":                  {"POST", map[string]any{"name": "a\x00b"}, "name", "NUL"},
		"a NUL in the description":           {"PATCH", map[string]any{"description": "a\x00b"}, "description", "NUL"},
		"filters that are not an object":     {"POST", map[string]any{"filters": []any{}}, "filters", "object"},
		"a filter dashboards do not apply":   {"POST", map[string]any{"filters": map[string]any{"interval": "week"}}, "filters", "interval"},
		"a date that is not a string":        {"PATCH", map[string]any{"filters": map[string]any{"date_from": 7}}, "filters", "date_from"},
		"a date that does not parse":         {"PATCH", map[string]any{"filters": map[string]any{"date_from": "garbage"}}, "filters", "filters.date_from: \"garbage\" is not a date"},
		"a date before 1970":                 {"PATCH", map[string]any{"filters": map[string]any{"date_to": "1969-12-31"}}, "filters", "1970 to 2199"},
		"a date_to of all":                   {"PATCH", map[string]any{"filters": map[string]any{"date_to": "all"}}, "filters", "cannot be all"},
		"properties that are not conditions": {"PATCH", map[string]any{"filters": map[string]any{"properties": "x"}}, "filters", "properties"},
		"a NUL inside filters":               {"PATCH", map[string]any{"filters": map[string]any{"date_from": "\x00"}}, "filters", "NUL"},
		"a regex that does not compile":      {"PATCH", map[string]any{"filters": map[string]any{"properties": []any{map[string]any{"key": "$browser", "operator": "regex", "value": "("}}}}, "filters", "filters.properties"},
		"a condition that is not one":        {"PATCH", map[string]any{"filters": map[string]any{"properties": []any{1, 2}}}, "filters", "filters.properties"},
		"a cohort that does not exist":       {"PATCH", map[string]any{"filters": map[string]any{"properties": []any{map[string]any{"type": "cohort", "key": "id", "value": 987654}}}}, "filters", "987654"},
		"tiles that are not a list":          {"PATCH", map[string]any{"tiles": map[string]any{}}, "tiles", "list"},
		"a tile with nothing to show":        {"PATCH", map[string]any{"tiles": []any{map[string]any{"color": "red"}}}, "tiles", "needs an id"},
		"an insight that does not exist":     {"PATCH", map[string]any{"tiles": []any{map[string]any{"insight": 987654}}}, "tiles", "insight 987654"},
		"a text tile with a NUL":             {"PATCH", map[string]any{"tiles": []any{map[string]any{"text": map[string]any{"body": "\x00"}}}}, "tiles", "NUL"},
		"a text over 4000 characters":        {"POST", map[string]any{"tiles": []any{map[string]any{"text": map[string]any{"body": strings.Repeat("t", 4001)}}}}, "tiles", "4000"},
		"layouts that are not an object":     {"PATCH", map[string]any{"tiles": []any{map[string]any{"text": map[string]any{"body": "b"}, "layouts": "wide"}}}, "tiles", "layouts"},
		"another dashboard's tile":           {"PATCH", map[string]any{"tiles": []any{map[string]any{"id": otherTile, "color": "red"}}}, "tiles", "not on this dashboard"},
		"a dashboard to copy that is absent": {"POST", map[string]any{"name": "copy", "use_dashboard": 987654}, "use_dashboard", "987654"},
		"an unknown restriction level":       {"PATCH", map[string]any{"restriction_level": 5}, "restriction_level", "21"},
		"tags that are not a list":           {"PATCH", map[string]any{"tags": "a"}, "tags", "list"},
	} {
		t.Run(name, func(t *testing.T) {
			target := base
			if tc.method == "PATCH" {
				target = f.dashboard(f.a.ProjectID, d["id"])
			}
			st, out := call(t, f.h, tc.method, target, key, tc.body)
			if st != 400 || out["attr"] != tc.attr || !strings.Contains(fmt.Sprint(out["detail"]), tc.says) {
				t.Fatalf("%d %v", st, out)
			}
		})
	}
	t.Run("a body that is not JSON is a 400", func(t *testing.T) {
		w := send(t, f, "PATCH", f.dashboard(f.a.ProjectID, d["id"]), key, `{"name": `)
		if w.Code != 400 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	})
	t.Run("nothing was stored by the refused requests", func(t *testing.T) {
		got := f.getDashboard(t, d["id"], "")
		if got["name"] != "D" || fmt.Sprint(got["filters"]) != "map[]" || len(got["tiles"].([]any)) != 0 {
			t.Fatalf("%v", got)
		}
	})
}

func TestDashboardScopesAndOrganizations(t *testing.T) {
	f := newFixture(t)
	d := f.newDashboard(t, map[string]any{"name": "Mine"})
	path := f.dashboard(f.a.ProjectID, d["id"])
	t.Run("dashboard:read reads and cannot write; insight scopes do neither", func(t *testing.T) {
		readOnly := f.key(t, "ada@example.com", "dashboard:read")
		if st, _ := call(t, f.h, "GET", path, readOnly, nil); st != 200 {
			t.Fatalf("read: %d", st)
		}
		if st, _ := call(t, f.h, "GET", f.dashboards(f.a.ProjectID), readOnly, nil); st != 200 {
			t.Fatalf("list: %d", st)
		}
		if st, _ := call(t, f.h, "PATCH", path, readOnly, map[string]any{"name": "x"}); st != 403 {
			t.Fatalf("write with dashboard:read: %d", st)
		}
		insightOnly := f.key(t, "ada@example.com", "insight:read", "insight:write")
		if st, _ := call(t, f.h, "GET", path, insightOnly, nil); st != 403 {
			t.Fatalf("read with insight scopes: %d", st)
		}
		writer := f.key(t, "ada@example.com", "dashboard:write")
		if st, _ := call(t, f.h, "POST", f.dashboards(f.a.ProjectID), writer, map[string]any{"name": "w"}); st != 201 {
			t.Fatalf("create with dashboard:write: %d", st)
		}
	})
	t.Run("another organization's dashboards answer 404 to every method", func(t *testing.T) {
		bob := f.b.PersonalAPIKey
		for _, tc := range []struct{ method, path string }{
			{"GET", f.dashboards(f.a.ProjectID)}, {"POST", f.dashboards(f.a.ProjectID)}, {"GET", path}, {"PATCH", path},
			{"PUT", path}, {"DELETE", path}, {"GET", path + "activity/"},
			{"GET", f.dashboard(f.b.ProjectID, d["id"])}, {"PATCH", f.dashboard(f.b.ProjectID, d["id"])},
		} {
			if st, out := call(t, f.h, tc.method, tc.path, bob, map[string]any{"name": "x"}); st != 404 {
				t.Errorf("%s %s: %d %v", tc.method, tc.path, st, out)
			}
		}
		if got := f.getDashboard(t, d["id"], ""); got["name"] != "Mine" {
			t.Fatalf("changed by another organization: %v", got)
		}
	})
	t.Run("an insight cannot join another organization's dashboard, nor copy one", func(t *testing.T) {
		st, theirs := call(t, f.h, "POST", f.dashboards(f.b.ProjectID), f.b.PersonalAPIKey, map[string]any{"name": "Bob's"})
		if st != 201 {
			t.Fatalf("%d %v", st, theirs)
		}
		st, out := call(t, f.h, "POST", f.insights(f.a.ProjectID), f.a.PersonalAPIKey, map[string]any{"dashboards": []any{theirs["id"]}})
		if st != 400 || out["attr"] != "dashboards" {
			t.Fatalf("%d %v", st, out)
		}
		st, out = call(t, f.h, "POST", f.dashboards(f.a.ProjectID), f.a.PersonalAPIKey, map[string]any{"use_dashboard": theirs["id"]})
		if st != 400 || out["attr"] != "use_dashboard" {
			t.Fatalf("%d %v", st, out)
		}
		st, out = call(t, f.h, "PATCH", f.project(f.a.OrganizationID, f.a.ProjectID), f.a.PersonalAPIKey,
			map[string]any{"primary_dashboard": theirs["id"]})
		if st != 400 || out["attr"] != "primary_dashboard" {
			t.Fatalf("primary_dashboard of another organization: %d %v", st, out)
		}
	})
}
