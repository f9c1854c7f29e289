package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The resources added after projects, insights and annotations (actions,
// cohorts, annotations' other text fields, persons' PATCH) hold the same
// promise as those: a NUL anywhere in a field that reaches PostgreSQL is
// a 400 naming that field, never a 500, and a lone surrogate or a byte
// that is not UTF-8 is stored as U+FFFD (a 2xx whose answer shows it).
func TestNULInEveryResourceFieldIsRefusedNamingIt(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	base := fmt.Sprintf("/api/projects/%d/", f.a.ProjectID)
	create := func(path, body string) string {
		t.Helper()
		w := send(t, f, "POST", path, key, body)
		var out map[string]any
		if w.Code != 201 || json.Unmarshal(w.Body.Bytes(), &out) != nil {
			t.Fatalf("create %s: %d %s", path, w.Code, w.Body)
		}
		return fmt.Sprint(out["id"])
	}
	const (
		action  = `{"name": "a", "steps": [{"event": "e"}]}`
		cohort  = `{"name": "c", "groups": [{"properties": [{"key": "email", "value": "x", "operator": "icontains", "type": "person"}]}]}`
		static  = `{"name": "s", "is_static": true, "persons": ["p"]}`
		content = `{"content": "a"}`
	)
	type resource struct {
		name, create, update string
		body                 string // a valid body to which each case adds its field
	}
	resources := []resource{
		{"action", base + "actions/", base + "actions/" + create(base+"actions/", action) + "/", action},
		{"cohort", base + "cohorts/", base + "cohorts/" + create(base+"cohorts/", cohort) + "/", cohort},
		{"static cohort", base + "cohorts/", base + "cohorts/" + create(base+"cohorts/", static) + "/", static},
		{"annotation", base + "annotations/", base + "annotations/" + create(base+"annotations/", content) + "/", content},
	}
	fields := map[string][]struct {
		field string
		value func(bad string) string // the field's JSON value holding bad
	}{
		"action": {
			{"name", func(b string) string { return `"n` + b + `"` }},
			{"description", func(b string) string { return `"d` + b + `"` }},
			{"tags", func(b string) string { return `["t` + b + `"]` }},
			{"steps", func(b string) string { return `[{"event": "e` + b + `"}]` }},
			{"steps", func(b string) string {
				return `[{"event": "e", "url": "https://u` + b + `", "url_matching": "contains"}]`
			}},
			{"steps", func(b string) string { return `[{"event": "$autocapture", "text": "t` + b + `", "selector": "a"}]` }},
			{"steps", func(b string) string {
				return `[{"event": "e", "properties": [{"key": "k", "value": "v` + b + `", "type": "event"}]}]`
			}},
		},
		"cohort": {
			{"name", func(b string) string { return `"n` + b + `"` }},
			{"description", func(b string) string { return `"d` + b + `"` }},
			{"groups", func(b string) string {
				return `[{"properties": [{"key": "email", "value": "x` + b + `", "operator": "icontains", "type": "person"}]}]`
			}},
			{"groups", func(b string) string {
				return `[{"properties": [{"key": "e` + b + `", "value": "x", "operator": "icontains", "type": "person"}]}]`
			}},
			{"filters", func(b string) string {
				return `{"properties": {"type": "OR", "values": [{"type": "AND", "values": [{"key": "email", "value": "x` + b + `", "operator": "icontains", "type": "person"}]}]}}`
			}},
		},
		"static cohort": {
			{"persons", func(b string) string { return `["p` + b + `"]` }},
		},
		"annotation": {
			{"content", func(b string) string { return `"c` + b + `"` }},
			{"scope", func(b string) string { return `"project` + b + `"` }},
			{"date_marker", func(b string) string { return `"2026-01-01` + b + `"` }},
		},
	}
	for _, r := range resources {
		for _, fd := range fields[r.name] {
			for _, m := range []struct{ method, path string }{{"POST", r.create}, {"PATCH", r.update}} {
				body := func(v string) string {
					if m.method == "PATCH" {
						return `{"` + fd.field + `": ` + v + `}`
					}
					// The valid body with the field set (replacing its own
					// value if it has one): later keys win in Go's decoder.
					return strings.TrimSuffix(r.body, "}") + `, "` + fd.field + `": ` + v + `}`
				}
				t.Run(fmt.Sprintf("%s %s %s %s with NUL is 400 naming it", m.method, r.name, fd.field, fd.value("")), func(t *testing.T) {
					w := send(t, f, m.method, m.path, key, body(fd.value(`\u0000`)))
					var out map[string]any
					_ = json.Unmarshal(w.Body.Bytes(), &out)
					if w.Code != 400 || out["attr"] != fd.field {
						t.Fatalf("%d %s", w.Code, w.Body)
					}
				})
				if fd.field == "scope" || fd.field == "date_marker" {
					continue // no scope or date holds U+FFFD: those are 400s, checked above for NUL
				}
				for _, bad := range []struct{ name, text string }{{"a lone surrogate", `\ud800`}, {"a byte that is not UTF-8", "\xff"}} {
					t.Run(fmt.Sprintf("%s %s %s %s with %s stores U+FFFD", m.method, r.name, fd.field, fd.value(""), bad.name), func(t *testing.T) {
						w := send(t, f, m.method, m.path, key, body(fd.value(bad.text)))
						if w.Code >= 300 {
							t.Fatalf("%d %s", w.Code, w.Body)
						}
						if fd.field == "persons" {
							return // distinct ids, matched against the events and not echoed back
						}
						if !strings.Contains(w.Body.String(), "\ufffd") && !strings.Contains(w.Body.String(), `\ufffd`) {
							t.Fatalf("no U+FFFD in %s", w.Body)
						}
					})
				}
			}
		}
	}
	t.Run("a NUL in an actions or cohorts list's search is 400", func(t *testing.T) {
		for _, p := range []string{base + "actions/", base + "cohorts/"} {
			w := send(t, f, "GET", p+"?search=a%00b", key, "")
			if w.Code >= 500 || (w.Code != 200 && !strings.Contains(w.Body.String(), `"attr":"search"`)) {
				t.Fatalf("%s: %d %s", p, w.Code, w.Body)
			}
		}
	})
}

// A person's PATCH sets properties through ingestion (ClickHouse, not
// PostgreSQL): a NUL in a property's name is a 400 naming properties; a
// NUL in a value is data, as in a captured event, and reads back as sent.
func TestNULInAPersonPatch(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	f.capture(t, map[string]any{"event": "e", "distinct_id": "ada", "timestamp": time.Now().UTC().Format(time.RFC3339)})
	persons := fmt.Sprintf("/api/projects/%d/persons/", f.a.ProjectID)
	var id string
	for deadline := time.Now().Add(30 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if st, out := call(t, f.h, "GET", persons+"?distinct_id=ada", key, nil); st == 200 {
			if list, _ := out["results"].([]any); len(list) == 1 {
				id = list[0].(map[string]any)["uuid"].(string)
			}
		}
	}
	if id == "" {
		t.Fatal("the person never appeared")
	}
	for _, body := range []string{`{"properties": {"a\u0000b": 1}}`, `{"properties": {"\ud800": 1, "\u0000": 2}}`} {
		t.Run("PATCH "+body+" is 400 naming properties", func(t *testing.T) {
			w := send(t, f, "PATCH", persons+id+"/", key, body)
			var out map[string]any
			_ = json.Unmarshal(w.Body.Bytes(), &out)
			if w.Code != 400 || out["attr"] != "properties" {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
		})
	}
	t.Run("a NUL in a value is stored as sent", func(t *testing.T) {
		w := send(t, f, "PATCH", persons+id+"/", key, `{"properties": {"note": "a\u0000b"}}`)
		if w.Code >= 300 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		var got any
		for deadline := time.Now().Add(30 * time.Second); got != "a\x00b" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			_, out := call(t, f.h, "GET", persons+id+"/", key, nil)
			props, _ := out["properties"].(map[string]any)
			got = props["note"]
		}
		if got != "a\x00b" {
			t.Fatalf("note reads back %q", got)
		}
	})
}
