package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestActionsAPI(t *testing.T) {
	f := newFixture(t)
	base := fmt.Sprintf("/api/projects/%d/actions/", f.a.ProjectID)
	key := f.a.PersonalAPIKey
	steps := []any{map[string]any{"event": "signup"},
		map[string]any{"event": "$pageview", "url": "/welcome", "url_matching": "contains", "properties": []any{map[string]any{"key": "plan", "value": "pro"}}}}
	st, created := call(t, f.h, "POST", base, key, map[string]any{"name": "Signed up", "steps": steps, "tags": []string{"growth"}})
	if st != http.StatusCreated || created["name"] != "Signed up" || len(created["steps"].([]any)) != 2 || created["deleted"] != false {
		t.Fatalf("create: %d %v", st, created)
	}
	id := int64(created["id"].(float64))
	path := fmt.Sprintf("%s%d/", base, id)

	t.Run("retrieve, list and search", func(t *testing.T) {
		if st, out := call(t, f.h, "GET", path, key, nil); st != 200 || out["id"] != created["id"] {
			t.Fatalf("%d %v", st, out)
		}
		call(t, f.h, "POST", base, key, map[string]any{"name": "Purchased", "steps": []any{map[string]any{"event": "purchase"}}})
		st, out := call(t, f.h, "GET", base+"?search=sIGNED", key, nil)
		if st != 200 || out["count"] != float64(1) {
			t.Fatalf("search: %d %v", st, out)
		}
		if st, out := call(t, f.h, "GET", base+"?limit=1", key, nil); st != 200 || out["count"] != float64(2) || out["next"] == nil {
			t.Fatalf("list: %d %v", st, out)
		}
	})
	t.Run("update bumps nothing a client sees but the fields; activity records it", func(t *testing.T) {
		st, out := call(t, f.h, "PATCH", path, key, map[string]any{"description": "From the welcome page"})
		if st != 200 || out["description"] != "From the welcome page" {
			t.Fatalf("%d %v", st, out)
		}
		st, out = call(t, f.h, "GET", path+"activity/", key, nil)
		if st != 200 || out["count"] != float64(2) {
			t.Fatalf("activity: %d %v", st, out)
		}
	})
	t.Run("every step is checked, naming the field", func(t *testing.T) {
		for name, tc := range map[string]struct {
			body map[string]any
			attr string
			says string
		}{
			"a regex that does not compile": {map[string]any{"name": "x", "steps": []any{map[string]any{"url": "(", "url_matching": "regex"}}}, "steps", "regular expression"},
			"an unknown matching":           {map[string]any{"name": "x", "steps": []any{map[string]any{"url": "a", "url_matching": "fuzzy"}}}, "steps", "url_matching"},
			"a bad property condition":      {map[string]any{"name": "x", "steps": []any{map[string]any{"properties": []any{map[string]any{"key": "a", "operator": "sounds_like"}}}}}, "steps", "operator"},
			"a selector it cannot read":     {map[string]any{"name": "x", "steps": []any{map[string]any{"event": "$autocapture", "selector": "div:hover"}}}, "steps", "selector"},
			"a text regex":                  {map[string]any{"name": "x", "steps": []any{map[string]any{"text": "[", "text_matching": "regex"}}}, "steps", "regular expression"},
			"steps not a list":              {map[string]any{"name": "x", "steps": "signup"}, "steps", "list"},
			"no name":                       {map[string]any{"steps": []any{}}, "name", "required"},
			"a NUL in the name":             {map[string]any{"name": "a\x00b"}, "name", "NUL"},
			"a cohort that does not exist":  {map[string]any{"name": "x", "steps": []any{map[string]any{"properties": []any{map[string]any{"type": "cohort", "key": "id", "value": 987654}}}}}, "steps", "cohort 987654"},
		} {
			t.Run(name, func(t *testing.T) {
				st, out := call(t, f.h, "POST", base, key, tc.body)
				if st != 400 || out["attr"] != tc.attr || !strings.Contains(fmt.Sprint(out["detail"]), tc.says) {
					t.Fatalf("%d %v", st, out)
				}
			})
		}
	})
	t.Run("soft delete: 404 after, an insight using it is a 400 naming it, restore", func(t *testing.T) {
		if st, _ := call(t, f.h, "DELETE", path, key, nil); st != http.StatusMethodNotAllowed {
			t.Fatalf("hard delete: %d", st)
		}
		if st, _ := call(t, f.h, "PATCH", path, key, map[string]any{"deleted": true}); st != 200 {
			t.Fatalf("soft delete: %d", st)
		}
		if st, _ := call(t, f.h, "GET", path, key, nil); st != 404 {
			t.Fatalf("deleted: %d", st)
		}
		st, out := call(t, f.h, "POST", fmt.Sprintf("/api/projects/%d/insights/trend/", f.a.ProjectID), key,
			map[string]any{"actions": []any{map[string]any{"id": id, "type": "actions"}}})
		if st != 400 || out["attr"] != "actions" || !strings.Contains(fmt.Sprint(out["detail"]), fmt.Sprintf("action %d does not exist", id)) {
			t.Fatalf("trend of a deleted action: %d %v", st, out)
		}
		if st, out := call(t, f.h, "PATCH", path, key, map[string]any{"deleted": false}); st != 200 || out["deleted"] != false {
			t.Fatalf("restore: %d %v", st, out)
		}
	})
	t.Run("scopes and other organizations", func(t *testing.T) {
		readOnly := f.key(t, "ada@example.com", "action:read")
		if st, _ := call(t, f.h, "GET", path, readOnly, nil); st != 200 {
			t.Fatalf("read with action:read: %d", st)
		}
		if st, _ := call(t, f.h, "POST", base, readOnly, map[string]any{"name": "y"}); st != 403 {
			t.Fatalf("write with action:read: %d", st)
		}
		if st, _ := call(t, f.h, "GET", path, f.key(t, "ada@example.com", "insight:read"), nil); st != 403 {
			t.Fatalf("read without action:read: %d", st)
		}
		if st, _ := call(t, f.h, "GET", path, f.b.PersonalAPIKey, nil); st != 404 {
			t.Fatalf("another organization's action: %d", st)
		}
		otherPath := fmt.Sprintf("/api/projects/%d/actions/%d/", f.b.ProjectID, id)
		if st, _ := call(t, f.h, "GET", otherPath, f.b.PersonalAPIKey, nil); st != 404 {
			t.Fatalf("the action through another project: %d", st)
		}
	})
}
