package api

import (
	"net/http"
	"testing"
)

// PostHog's tools send an insight's short_id or its numeric id in the
// path: both name the insight, and so do the short ids with - or _ that
// insightd gave before its ids were letters and digits only.
func TestAnInsightPathTakesItsIdOrItsShortID(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	created := f.newInsight(t, map[string]any{"name": "Views", "filters": map[string]any{"events": []any{map[string]any{"id": "$pageview"}}}})
	var old []string
	for _, sid := range []string{"_ebqqFHj", "a-b_cdef"} {
		var id int64
		if err := f.s.store.DB().Get(&id, `INSERT INTO insights (project_id, short_id, created_by, last_modified_by)
			VALUES ($1, $2, $3, $3) RETURNING id`, f.a.ProjectID, sid, f.a.UserID); err != nil {
			t.Fatal(err)
		}
		if st, out := call(t, f.h, "GET", f.insight(f.a.ProjectID, id), key, nil); st != 200 || out["short_id"] != sid {
			t.Fatalf("insight %d: %d %v", id, st, out)
		}
		old = append(old, sid)
	}
	for _, sid := range append([]string{created["short_id"].(string)}, old...) {
		t.Run("short id "+sid+" names its insight on every insight route", func(t *testing.T) {
			st, byShort := call(t, f.h, "GET", f.insight(f.a.ProjectID, sid), key, nil)
			if st != 200 || byShort["short_id"] != sid {
				t.Fatalf("get: %d %v", st, byShort)
			}
			st, byID := call(t, f.h, "GET", f.insight(f.a.ProjectID, byShort["id"]), key, nil)
			if st != 200 || byID["id"] != byShort["id"] {
				t.Fatalf("by id: %d %v", st, byID)
			}
			st, out := call(t, f.h, "PATCH", f.insight(f.a.ProjectID, sid), key, map[string]any{"name": "Renamed " + sid})
			if st != 200 || out["id"] != byShort["id"] || out["name"] != "Renamed "+sid {
				t.Fatalf("patch: %d %v", st, out)
			}
			for _, sub := range []struct{ method, path string }{
				{"POST", "viewed/"}, {"GET", "activity/"}, {"GET", "sharing/"}, {"PATCH", "sharing/"},
			} {
				st, out := call(t, f.h, sub.method, f.insight(f.a.ProjectID, sid)+sub.path, key, map[string]any{})
				if st != 200 {
					t.Errorf("%s %s: %d %v", sub.method, sub.path, st, out)
				}
			}
			st, page := call(t, f.h, "GET", f.insights(f.a.ProjectID)+"?short_id="+sid, key, nil)
			if st != 200 || page["count"] != float64(1) {
				t.Fatalf("list by short_id: %d %v", st, page)
			}
		})
	}
	t.Run("a deleted insight is 404 by its short id and is restored by it", func(t *testing.T) {
		sid := old[0]
		if st, out := call(t, f.h, "PATCH", f.insight(f.a.ProjectID, sid), key, map[string]any{"deleted": true}); st != 200 {
			t.Fatalf("delete: %d %v", st, out)
		}
		if st, out := call(t, f.h, "GET", f.insight(f.a.ProjectID, sid), key, nil); st != 404 {
			t.Fatalf("get deleted: %d %v", st, out)
		}
		if st, out := call(t, f.h, "PATCH", f.insight(f.a.ProjectID, sid), key, map[string]any{"deleted": false}); st != 200 || out["deleted"] != false {
			t.Fatalf("restore: %d %v", st, out)
		}
	})
	for name, ref := range map[string]string{
		"an unknown short id":                "Zz9Zz9Zz",
		"another project's short id":         created["short_id"].(string),
		"a path of another shape":            "not.a.short.id",
		"a short id with a character beyond": "abc%25def",
		"a number that is no insight":        "99999999",
		"zero":                               "0",
	} {
		t.Run(name+" is a 404 with the error body", func(t *testing.T) {
			project := f.a.ProjectID
			k := key
			if name == "another project's short id" {
				project, k = f.b.ProjectID, f.b.PersonalAPIKey
			}
			st, out := call(t, f.h, "GET", f.insight(project, ref), k, nil)
			if st != http.StatusNotFound || out["code"] != "not_found" || out["type"] == nil || out["detail"] == nil {
				t.Fatalf("%d %v", st, out)
			}
			if _, ok := out["attr"]; !ok {
				t.Fatalf("no attr: %v", out)
			}
		})
	}
}
