package api

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func (f *fixture) annotations(projectID int64) string {
	return fmt.Sprintf("/api/projects/%d/annotations/", projectID)
}

func (f *fixture) annotation(projectID int64, id any) string {
	return fmt.Sprintf("/api/projects/%d/annotations/%v/", projectID, id)
}

var annotationFieldNames = []string{"content", "created_at", "created_by", "creation_type", "dashboard_id", "dashboard_item",
	"dashboard_name", "date_marker", "deleted", "id", "insight_derived_name", "insight_name", "insight_short_id", "scope", "updated_at"}

func TestAnnotationLifecycle(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	list := f.annotations(f.a.ProjectID)
	st, a := call(t, f.h, "POST", list, key, map[string]any{"content": "Launch", "date_marker": "2026-03-01T12:00:00+01:00"})
	if st != 201 {
		t.Fatalf("%d %v", st, a)
	}
	t.Run("a new annotation carries every field, made by the caller", func(t *testing.T) {
		if !reflect.DeepEqual(keys(a), annotationFieldNames) {
			t.Fatalf("fields %v", keys(a))
		}
		want := map[string]any{"content": "Launch", "date_marker": "2026-03-01T11:00:00Z", "scope": "project",
			"creation_type": "USR", "deleted": false, "dashboard_item": nil, "dashboard_id": nil}
		for k, v := range want {
			if !reflect.DeepEqual(a[k], v) {
				t.Errorf("%s = %#v, want %#v", k, a[k], v)
			}
		}
		if a["created_by"].(map[string]any)["email"] != "ada@example.com" {
			t.Errorf("created_by %v", a["created_by"])
		}
	})
	one := f.annotation(f.a.ProjectID, a["id"])
	t.Run("retrieve answers the same annotation", func(t *testing.T) {
		st, got := call(t, f.h, "GET", one, key, nil)
		if st != 200 || !reflect.DeepEqual(got, a) {
			t.Fatalf("%d %v", st, got)
		}
	})
	t.Run("PATCH changes the given fields", func(t *testing.T) {
		st, got := call(t, f.h, "PATCH", one, key, map[string]any{"content": "Launch day"})
		if st != 200 || got["content"] != "Launch day" || got["date_marker"] != "2026-03-01T11:00:00Z" {
			t.Fatalf("%d %v", st, got)
		}
	})
	t.Run("PUT validates as PATCH does", func(t *testing.T) {
		st, got := call(t, f.h, "PUT", one, key, map[string]any{"content": "Launch week", "date_marker": nil, "scope": "project"})
		if st != 200 || got["content"] != "Launch week" || got["date_marker"] != nil {
			t.Fatalf("%d %v", st, got)
		}
		st, got = call(t, f.h, "PUT", one, key, map[string]any{"scope": "recording"})
		if st != 400 || got["attr"] != "scope" {
			t.Fatalf("%d %v", st, got)
		}
	})
	t.Run("DELETE is refused: PATCH deleted true instead", func(t *testing.T) {
		w := send(t, f, "DELETE", one, key, "")
		if w.Code != 405 || !strings.Contains(w.Body.String(), `\"deleted\": true`) {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	})
	t.Run("a soft-deleted annotation is gone until restored", func(t *testing.T) {
		if st, got := call(t, f.h, "PATCH", one, key, map[string]any{"deleted": true}); st != 200 || got["deleted"] != true {
			t.Fatalf("%d %v", st, got)
		}
		if st, _ := call(t, f.h, "GET", one, key, nil); st != 404 {
			t.Fatalf("retrieve after delete: %d", st)
		}
		if _, body := call(t, f.h, "GET", list, key, nil); body["count"] != float64(0) {
			t.Fatalf("list after delete: %v", body)
		}
		if st, _ := call(t, f.h, "PATCH", one, key, map[string]any{"content": "edit a deleted one"}); st != 404 {
			t.Fatalf("edit after delete: %d", st)
		}
		if st, got := call(t, f.h, "PATCH", one, key, map[string]any{"deleted": false}); st != 200 || got["deleted"] != false {
			t.Fatalf("restore: %d %v", st, got)
		}
	})
	t.Run("the activity log says who did what", func(t *testing.T) {
		st, body := call(t, f.h, "GET", one+"activity/", key, nil)
		if st != 200 {
			t.Fatalf("%d %v", st, body)
		}
		var acts []string
		for _, e := range body["results"].([]any) {
			e := e.(map[string]any)
			acts = append(acts, e["activity"].(string))
			if e["scope"] != "Annotation" || e["user"].(map[string]any)["email"] != "ada@example.com" {
				t.Fatalf("entry %v", e)
			}
		}
		if !reflect.DeepEqual(acts, []string{"restored", "deleted", "updated", "updated", "created"}) {
			t.Fatalf("activities %v", acts)
		}
		_, all := call(t, f.h, "GET", list+"activity/", key, nil)
		if all["count"] != float64(5) {
			t.Fatalf("project-wide %v", all)
		}
	})
}

func TestAnnotationScopesAndSearch(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	_, other := call(t, f.h, "POST", f.projects(f.a.OrganizationID), key, map[string]any{"name": "Second"})
	second := int64(other["id"].(float64))
	insight := f.newInsight(t, map[string]any{"name": "Signups"})
	create := func(project int64, body map[string]any) map[string]any {
		t.Helper()
		st, a := call(t, f.h, "POST", f.annotations(project), key, body)
		if st != 201 {
			t.Fatalf("%d %v", st, a)
		}
		return a
	}
	create(f.a.ProjectID, map[string]any{"content": "Deploy 100% of traffic", "date_marker": "2026-01-01"})
	create(f.a.ProjectID, map[string]any{"content": "Pricing_change", "date_marker": "2026-01-03"})
	org := create(second, map[string]any{"content": "Company offsite", "scope": "organization", "date_marker": "2026-01-02"})
	item := create(f.a.ProjectID, map[string]any{"content": "On the chart", "scope": "dashboard_item", "dashboard_item": insight["id"]})
	create(second, map[string]any{"content": "Only in second"})
	t.Run("a project sees its own and its organization's annotations, latest first", func(t *testing.T) {
		_, body := call(t, f.h, "GET", f.annotations(f.a.ProjectID), key, nil)
		got := []string{}
		for _, r := range body["results"].([]any) {
			got = append(got, r.(map[string]any)["content"].(string))
		}
		if !reflect.DeepEqual(got, []string{"Pricing_change", "Company offsite", "Deploy 100% of traffic", "On the chart"}) || body["count"] != float64(4) {
			t.Fatalf("%v", body)
		}
		if st, a := call(t, f.h, "GET", f.annotation(f.a.ProjectID, org["id"]), key, nil); st != 200 || a["scope"] != "organization" {
			t.Fatalf("%d %v", st, a)
		}
	})
	t.Run("an organization's annotation updated through another project stays its own project's", func(t *testing.T) {
		// The insight is the first project's; the annotation the second's.
		st, out := call(t, f.h, "PATCH", f.annotation(f.a.ProjectID, org["id"]), key, map[string]any{"scope": "dashboard_item", "dashboard_item": insight["id"]})
		if st != 400 || out["attr"] != "dashboard_item" {
			t.Fatalf("%d %v", st, out)
		}
	})
	t.Run("a dashboard_item annotation names its insight", func(t *testing.T) {
		if item["dashboard_item"] != insight["id"] || item["insight_short_id"] != insight["short_id"] || item["insight_name"] != "Signups" {
			t.Fatalf("%v", item)
		}
	})
	for _, tc := range []struct {
		search string
		want   []string
	}{
		{"deploy", []string{"Deploy 100% of traffic"}},
		{"100%", []string{"Deploy 100% of traffic"}},
		{"%", []string{"Deploy 100% of traffic"}},
		{"_", []string{"Pricing_change"}},
		{"OFFSITE", []string{"Company offsite"}},
		{"'; DROP TABLE annotations; --", []string{}},
	} {
		t.Run("search "+tc.search+" is a literal substring, any case", func(t *testing.T) {
			_, body := call(t, f.h, "GET", f.annotations(f.a.ProjectID)+"?search="+url.QueryEscape(tc.search), key, nil)
			got := []string{}
			for _, r := range body["results"].([]any) {
				got = append(got, r.(map[string]any)["content"].(string))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%v", got)
			}
		})
	}
	t.Run("pages carry count, next and previous", func(t *testing.T) {
		_, body := call(t, f.h, "GET", f.annotations(f.a.ProjectID)+"?limit=2&offset=1", key, nil)
		base := "http://insightd.test" + f.annotations(f.a.ProjectID)
		if len(body["results"].([]any)) != 2 || body["count"] != float64(4) || body["next"] != base+"?limit=2&offset=3" ||
			body["previous"] != base+"?limit=2&offset=0" {
			t.Fatalf("%v", body)
		}
	})
}

func TestAnnotationValidationAndAccess(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	list := f.annotations(f.a.ProjectID)
	bobInsight := func() any {
		_, i := call(t, f.h, "POST", f.insights(f.b.ProjectID), f.b.PersonalAPIKey, map[string]any{"name": "Bob's"})
		return i["id"]
	}()
	for _, tc := range []struct {
		field string
		value any
	}{
		{"content", 5}, {"content", strings.Repeat("c", 401)}, {"content", "nul\x00"}, {"content", []any{}},
		{"date_marker", "yesterday"}, {"date_marker", 1700000000}, {"date_marker", "0000-01-01T00:00:00Z"},
		{"scope", "dashboard"}, {"scope", "recording"}, {"scope", nil}, {"scope", "PROJECT"},
		{"creation_type", "API"}, {"dashboard_item", "x"}, {"dashboard_item", -1}, {"dashboard_item", 999999999},
		{"dashboard_item", bobInsight}, {"deleted", "yes"},
	} {
		t.Run(fmt.Sprintf("%s=%v is 400 naming the field", tc.field, tc.value), func(t *testing.T) {
			st, body := call(t, f.h, "POST", list, key, map[string]any{tc.field: tc.value})
			if st != 400 || body["attr"] != tc.field || body["code"] != "invalid_input" {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
	t.Run("scope dashboard_item without an insight is 400", func(t *testing.T) {
		st, body := call(t, f.h, "POST", list, key, map[string]any{"scope": "dashboard_item"})
		if st != 400 || body["attr"] != "dashboard_item" {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("hostile text and lone surrogates are stored as data", func(t *testing.T) {
		hostile := `'; DROP TABLE annotations; -- \ "q" {p0:String} ünï 🦔`
		st, a := call(t, f.h, "POST", list, key, map[string]any{"content": hostile})
		if st != 201 || a["content"] != hostile {
			t.Fatalf("%d %v", st, a)
		}
		w := send(t, f, "POST", list, key, `{"content": "lone \ud800 half"}`)
		if w.Code != 201 || !strings.Contains(w.Body.String(), `"lone \ufffd half"`) && !strings.Contains(w.Body.String(), "lone \ufffd half") {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	})
	_, mine := call(t, f.h, "POST", list, key, map[string]any{"content": "Ada's"})
	bob := f.b.PersonalAPIKey
	for _, tc := range []struct{ name, method, path string }{
		{"listing another organization's annotations", "GET", list},
		{"creating in another organization's project", "POST", list},
		{"retrieving another organization's annotation", "GET", f.annotation(f.a.ProjectID, mine["id"])},
		{"retrieving it through one's own project", "GET", f.annotation(f.b.ProjectID, mine["id"])},
		{"patching another organization's annotation", "PATCH", f.annotation(f.b.ProjectID, mine["id"])},
		{"putting another organization's annotation", "PUT", f.annotation(f.a.ProjectID, mine["id"])},
		{"deleting another organization's annotation", "DELETE", f.annotation(f.a.ProjectID, mine["id"])},
		{"an annotation id that is not a number", "GET", f.annotation(f.b.ProjectID, "abc")},
	} {
		t.Run(tc.name+" is 404", func(t *testing.T) {
			if st, body := call(t, f.h, tc.method, tc.path, bob, map[string]any{"content": "hijack"}); st != 404 {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
	read, write := f.key(t, "ada@example.com", "annotation:read"), f.key(t, "ada@example.com", "annotation:write")
	other := f.key(t, "ada@example.com", "insight:write")
	one := f.annotation(f.a.ProjectID, mine["id"])
	for _, tc := range []struct {
		name, method, path, key, missing string
		status                           int
	}{
		{"annotation:read lists", "GET", list, read, "", 200},
		{"annotation:read retrieves", "GET", one, read, "", 200},
		{"annotation:read cannot create", "POST", list, read, "annotation:write", 403},
		{"annotation:read cannot patch", "PATCH", one, read, "annotation:write", 403},
		{"annotation:read cannot put", "PUT", one, read, "annotation:write", 403},
		{"annotation:read cannot delete", "DELETE", one, read, "annotation:write", 403},
		{"annotation:write implies read", "GET", one, write, "", 200},
		{"annotation:write creates", "POST", list, write, "", 201},
		{"insight:write cannot list annotations", "GET", list, other, "annotation:read", 403},
		{"annotation:write cannot read activity", "GET", one + "activity/", write, "activity_log:read", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := call(t, f.h, tc.method, tc.path, tc.key, map[string]any{"content": "x"})
			if st != tc.status || tc.missing != "" && !strings.Contains(body["detail"].(string), tc.missing) {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
}
