package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/querybuilder/reference"
)

// PUT is the full update generated clients (PostHog's OpenAPI) send: the
// same fields and validation as PATCH, the same answer.
func TestInsightPutIsAFullUpdateWithTheSameValidation(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	created := f.newInsight(t, map[string]any{"name": "Before", "description": "old", "tags": []any{"old"},
		"filters": map[string]any{"insight": "TRENDS", "events": []any{map[string]any{"id": "$pageview"}}}})
	path := f.insight(f.a.ProjectID, created["id"])

	t.Run("a PUT of every field answers 200 and the insight holds the new values", func(t *testing.T) {
		body := map[string]any{"name": "After", "description": "new", "tags": []any{"web", "growth"}, "favorited": true, "saved": true,
			"filters": map[string]any{"insight": "FUNNELS", "events": []any{map[string]any{"id": "a"}, map[string]any{"id": "b"}}}}
		st, out := call(t, f.h, "PUT", path, key, body)
		if st != 200 || out["name"] != "After" || out["description"] != "new" || out["favorited"] != true || out["saved"] != true ||
			fmt.Sprint(out["tags"]) != "[web growth]" || out["filters"].(map[string]any)["insight"] != "FUNNELS" {
			t.Fatalf("%d %v", st, out)
		}
		st, got := call(t, f.h, "GET", path, key, nil)
		if st != 200 || got["name"] != "After" || got["description"] != "new" || fmt.Sprint(got["tags"]) != "[web growth]" ||
			got["filters"].(map[string]any)["insight"] != "FUNNELS" {
			t.Fatalf("retrieve after PUT: %d %v", st, got)
		}
	})

	bad := []struct {
		field string
		value any
	}{
		{"name", 5}, {"name", strings.Repeat("n", 401)}, {"description", "a\x00b"}, {"filters", "not an object"},
		{"filters", map[string]any{"insight": "PIES"}}, {"query", "[1, 2]"}, {"order", "first"}, {"deleted", "yes"},
		{"favorited", 1}, {"tags", []any{1}}, {"dashboards", []any{"x"}},
	}
	for _, b := range bad {
		t.Run(fmt.Sprintf("a PUT with %s=%.30s is 400 naming the field and changes nothing", b.field, fmt.Sprint(b.value)), func(t *testing.T) {
			st, out := call(t, f.h, "PUT", path, key, map[string]any{"name": "Refused", b.field: b.value})
			if st != 400 || out["attr"] != b.field || out["code"] != "invalid_input" {
				t.Fatalf("%d %v", st, out)
			}
			if _, got := call(t, f.h, "GET", path, key, nil); got["name"] != "After" {
				t.Fatalf("a refused PUT changed the insight: %v", got["name"])
			}
		})
	}
	t.Run("a PUT body that is not a JSON object is 400", func(t *testing.T) {
		if w := send(t, f, "PUT", path, key, `[1, 2]`); w.Code != 400 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	})

	t.Run("another organization's insight does not exist for PUT", func(t *testing.T) {
		theirs := f.insight(f.a.ProjectID, created["id"])
		if st, out := call(t, f.h, "PUT", theirs, f.b.PersonalAPIKey, map[string]any{"name": "hijack"}); st != 404 {
			t.Fatalf("Bob's key on Ada's project: %d %v", st, out)
		}
		if st, out := call(t, f.h, "PUT", f.insight(f.b.ProjectID, created["id"]), f.b.PersonalAPIKey, map[string]any{"name": "hijack"}); st != 404 {
			t.Fatalf("Ada's insight under Bob's project: %d %v", st, out)
		}
		if _, got := call(t, f.h, "GET", path, key, nil); got["name"] != "After" {
			t.Fatalf("another organization's PUT changed the insight: %v", got["name"])
		}
	})
	t.Run("a key without insight:write is refused", func(t *testing.T) {
		if st, out := call(t, f.h, "PUT", path, f.key(t, "ada@example.com", "insight:read"), map[string]any{"name": "x"}); st != 403 {
			t.Fatalf("%d %v", st, out)
		}
	})
}

// Persons have PATCH, so they take PUT too, with the same rules: PostHog
// updates a person's properties by $set either way.
func TestPersonPutSetsPropertiesLikePatch(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, []reference.Event{analysistest.Fev("ada", "A", analysistest.Mar(1, 9))})
	owner := fmt.Sprintf("funnel%d@example.com", env.n)
	other := env.project(t, []reference.Event{analysistest.Fev("zed", "A", analysistest.Mar(1, 9))})
	_, body := call(t, env.h, "GET", fmt.Sprintf("/api/projects/%d/persons/?distinct_id=ada", p.id), p.key, nil)
	ada := body["results"].([]any)[0].(map[string]any)["uuid"].(string)
	path := fmt.Sprintf("/api/projects/%d/persons/%s/", p.id, ada)

	st, out := call(t, env.h, "PUT", path, p.key, map[string]any{"properties": map[string]any{"plan": "pro", "email": "ada@example.com"}})
	if st != 200 || out["name"] != "ada@example.com" || out["properties"].(map[string]any)["plan"] != "pro" {
		t.Fatalf("%d %v", st, out)
	}
	if st, got := call(t, env.h, "GET", path, p.key, nil); st != 200 || got["properties"].(map[string]any)["plan"] != "pro" {
		t.Fatalf("retrieve after PUT: %d %v", st, got)
	}
	t.Run("bad bodies are 400 naming properties", func(t *testing.T) {
		for _, b := range []map[string]any{{"properties": "pro"}, {}, {"properties": map[string]any{"": 1}}} {
			if st, out := call(t, env.h, "PUT", path, p.key, b); st != 400 || out["attr"] != "properties" {
				t.Fatalf("%v: %d %v", b, st, out)
			}
		}
	})
	t.Run("another organization's person does not exist, and read-only keys are refused", func(t *testing.T) {
		if st, out := call(t, env.h, "PUT", path, other.key, map[string]any{"properties": map[string]any{"plan": "x"}}); st != 404 {
			t.Fatalf("%d %v", st, out)
		}
		theirs := fmt.Sprintf("/api/projects/%d/persons/%s/", other.id, ada)
		if st, out := call(t, env.h, "PUT", theirs, other.key, map[string]any{"properties": map[string]any{"plan": "x"}}); st != 404 {
			t.Fatalf("%d %v", st, out)
		}
		k, err := env.s.store.CreateKey(t.Context(), owner, "read", []string{"person:read"}, metadata.KeyScope{})
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := call(t, env.h, "PUT", path, k.Key, map[string]any{"properties": map[string]any{"x": 1}}); st != 403 {
			t.Fatalf("%d", st)
		}
		if _, got := call(t, env.h, "GET", path, p.key, nil); got["properties"].(map[string]any)["plan"] != "pro" {
			t.Fatalf("a refused PUT changed the person: %v", got["properties"])
		}
	})
}
