package api

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// lastViewed reads the caller's my_last_viewed list as names.
func (f *fixture) lastViewed(t *testing.T, key string) []string {
	t.Helper()
	w := send(t, f, "GET", f.insights(f.a.ProjectID)+"my_last_viewed/", key, "")
	var list []map[string]any
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &list) != nil {
		t.Fatalf("my_last_viewed: %d %s", w.Code, w.Body)
	}
	out := []string{}
	for _, i := range list {
		if !reflect.DeepEqual(keys(i), insightFields) {
			t.Fatalf("my_last_viewed entry fields %v", keys(i))
		}
		out = append(out, i["name"].(string))
	}
	return out
}

func TestInsightSoftDeleteAndRestore(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	i := f.newInsight(t, map[string]any{"name": "Doomed", "filters": trendsFilters})
	path := f.insight(f.a.ProjectID, i["id"])
	if st, out := call(t, f.h, "POST", path+"viewed/", key, nil); st != 200 || out["name"] != "Doomed" {
		t.Fatalf("viewed: %d %v", st, out)
	}

	t.Run("DELETE is 405, tells the client to PATCH deleted, and the insight survives", func(t *testing.T) {
		if w := send(t, f, "DELETE", path, key, ""); w.Header().Get("Allow") != "GET, PATCH" {
			t.Errorf("Allow header %q", w.Header().Get("Allow"))
		}
		st, body := call(t, f.h, "DELETE", path, key, nil)
		if st != 405 || body["code"] != "method_not_allowed" || !strings.Contains(body["detail"].(string), `{"deleted": true}`) ||
			!strings.Contains(body["detail"].(string), "PATCH") {
			t.Fatalf("%d %v", st, body)
		}
		if st, got := call(t, f.h, "GET", path, key, nil); st != 200 || got["deleted"] != false {
			t.Fatalf("after DELETE: %d %v", st, got)
		}
	})
	t.Run("PATCH deleted: true answers 200 with the deleted record", func(t *testing.T) {
		st, body := call(t, f.h, "PATCH", path, key, map[string]any{"deleted": true})
		if st != 200 || body["deleted"] != true || body["name"] != "Doomed" {
			t.Fatalf("%d %v", st, body)
		}
	})
	t.Run("a deleted insight leaves the list and my_last_viewed", func(t *testing.T) {
		_, list := call(t, f.h, "GET", f.insights(f.a.ProjectID), key, nil)
		if list["count"] != float64(0) {
			t.Fatalf("list %v", list)
		}
		if got := f.lastViewed(t, key); len(got) != 0 {
			t.Fatalf("my_last_viewed %v", got)
		}
	})
	for _, tc := range []struct{ name, method, suffix string }{
		{"retrieve", "GET", ""}, {"view", "POST", "viewed/"}, {"sharing", "GET", "sharing/"}, {"activity", "GET", "activity/"},
		{"DELETE", "DELETE", ""},
	} {
		t.Run(tc.name+" of a deleted insight is 404", func(t *testing.T) {
			if st, body := call(t, f.h, tc.method, path+tc.suffix, key, nil); st != 404 || body["code"] != "not_found" {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
	t.Run("updating a deleted insight other than restoring it is 404", func(t *testing.T) {
		for _, body := range []map[string]any{{"name": "Zombie"}, {"deleted": true}} {
			if st, out := call(t, f.h, "PATCH", path, key, body); st != 404 {
				t.Fatalf("%v: %d %v", body, st, out)
			}
		}
	})
	t.Run("PATCH deleted: false restores it to the list, retrieve and my_last_viewed", func(t *testing.T) {
		st, body := call(t, f.h, "PATCH", path, key, map[string]any{"deleted": false})
		if st != 200 || body["deleted"] != false {
			t.Fatalf("%d %v", st, body)
		}
		if st, _ := call(t, f.h, "GET", path, key, nil); st != 200 {
			t.Fatalf("retrieve %d", st)
		}
		_, list := call(t, f.h, "GET", f.insights(f.a.ProjectID), key, nil)
		if !reflect.DeepEqual(names(t, list["results"]), []string{"Doomed"}) {
			t.Fatalf("list %v", list)
		}
		if got := f.lastViewed(t, key); !reflect.DeepEqual(got, []string{"Doomed"}) {
			t.Fatalf("my_last_viewed %v", got)
		}
	})
	var deleted bool
	f.s.store.DB().Get(&deleted, "SELECT deleted FROM insights WHERE id = $1", i["id"])
	if deleted {
		t.Fatal("the row is still marked deleted")
	}
}

func TestInsightUpdateRecordsOnlyRealChanges(t *testing.T) {
	f := newFixture(t)
	_, carolKey := f.addMember(t, "carol@example.com")
	i := f.newInsight(t, map[string]any{"name": "Base", "filters": trendsFilters, "tags": []any{"a"}, "order": 1})
	path := f.insight(f.a.ProjectID, i["id"])
	activityCount := func() float64 {
		_, body := call(t, f.h, "GET", path+"activity/", f.a.PersonalAPIKey, nil)
		return body["count"].(float64)
	}
	t.Run("a PATCH of the same values changes nothing and logs nothing", func(t *testing.T) {
		same := map[string]any{"name": " Base ", "filters": map[string]any{"interval": "day", "date_from": "-7d", "insight": "TRENDS",
			"events": []any{map[string]any{"math": "total", "id": "$pageview"}}}, "tags": []any{"a"}, "order": 1, "deleted": false}
		st, out := call(t, f.h, "PATCH", path, carolKey, same)
		if st != 200 || out["last_modified_at"] != i["last_modified_at"] || out["updated_at"] != i["updated_at"] ||
			out["last_modified_by"].(map[string]any)["email"] != "ada@example.com" {
			t.Fatalf("%d %v", st, out)
		}
		if n := activityCount(); n != 1 {
			t.Fatalf("%v activity entries, want only the creation", n)
		}
	})
	t.Run("a real change moves last_modified_at and names the new modifier", func(t *testing.T) {
		time.Sleep(5 * time.Millisecond)
		st, out := call(t, f.h, "PATCH", path, carolKey, map[string]any{"name": "Renamed", "saved": true})
		if st != 200 || out["name"] != "Renamed" || out["saved"] != true || out["last_modified_at"] == i["last_modified_at"] ||
			out["last_modified_by"].(map[string]any)["email"] != "carol@example.com" ||
			out["created_by"].(map[string]any)["email"] != "ada@example.com" {
			t.Fatalf("%d %v", st, out)
		}
		if n := activityCount(); n != 2 {
			t.Fatalf("%v activity entries, want 2", n)
		}
	})
	cases := []struct {
		field string
		send  any
		want  any
	}{
		{"name", nil, nil}, {"name", "", ""}, {"derived_name", "Pageview count", "Pageview count"},
		{"description", nil, ""}, {"order", nil, nil}, {"order", -5, float64(-5)}, {"favorited", true, true},
		{"tags", []any{}, []any{}}, {"filters", map[string]any{}, map[string]any{}}, {"query", nil, nil},
		{"query", `{"kind":"HogQLQuery","query":"select 1"}`, map[string]any{"kind": "HogQLQuery", "query": "select 1"}},
		{"dashboards", []any{}, []any{}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s=%v is stored", tc.field, tc.send), func(t *testing.T) {
			st, out := call(t, f.h, "PATCH", path, f.a.PersonalAPIKey, map[string]any{tc.field: tc.send})
			if st != 200 || !reflect.DeepEqual(out[tc.field], tc.want) {
				t.Fatalf("%d: %s = %#v, want %#v", st, tc.field, out[tc.field], tc.want)
			}
			_, again := call(t, f.h, "GET", path, f.a.PersonalAPIKey, nil)
			if !reflect.DeepEqual(again[tc.field], tc.want) {
				t.Fatalf("after reload: %#v", again[tc.field])
			}
		})
	}
}

func TestInsightActivityLogsWhoDidWhat(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	i := f.newInsight(t, map[string]any{"name": "Tracked", "filters": map[string]any{"insight": "TRENDS"}})
	other := f.newInsight(t, map[string]any{"name": "Other"})
	path := f.insight(f.a.ProjectID, i["id"])
	steps := []map[string]any{
		{"name": "Tracked 2", "description": "now described", "filters": map[string]any{"insight": "FUNNELS"}},
		{"name": "Tracked 2"}, // no change: no entry
		{"deleted": true},
		{"deleted": false},
	}
	for _, body := range steps {
		if st, out := call(t, f.h, "PATCH", path, key, body); st != 200 {
			t.Fatalf("%v: %d %v", body, st, out)
		}
	}
	call(t, f.h, "PATCH", path+"sharing/", key, map[string]any{"enabled": true})

	st, body := call(t, f.h, "GET", path+"activity/", key, nil)
	if st != 200 || body["count"] != float64(5) {
		t.Fatalf("%d %v", st, body)
	}
	entries := body["results"].([]any)
	var acts []string
	for _, e := range entries {
		e := e.(map[string]any)
		acts = append(acts, e["activity"].(string))
		if e["scope"] != "Insight" || e["item_id"] != fmt.Sprint(i["id"]) || e["user"].(map[string]any)["email"] != "ada@example.com" {
			t.Fatalf("entry %v", e)
		}
		if d := e["detail"].(map[string]any); d["short_id"] != i["short_id"] || d["name"] != "Tracked 2" && e["activity"] != "created" {
			t.Fatalf("detail %v", d)
		}
	}
	t.Run("entries are newest first: created, updated, deleted, restored, sharing", func(t *testing.T) {
		if !reflect.DeepEqual(acts, []string{"updated", "restored", "deleted", "updated", "created"}) {
			t.Fatalf("%v", acts)
		}
	})
	changesOf := func(e any) map[string][2]any {
		got := map[string][2]any{}
		for _, c := range e.(map[string]any)["detail"].(map[string]any)["changes"].([]any) {
			c := c.(map[string]any)
			got[c["field"].(string)] = [2]any{c["before"], c["after"]}
		}
		return got
	}
	for _, tc := range []struct {
		name  string
		entry int
		want  map[string][2]any
	}{
		{"the update names each changed field with before and after", 3, map[string][2]any{
			"name": {"Tracked", "Tracked 2"}, "description": {"", "now described"},
			"filters": {map[string]any{"insight": "TRENDS"}, map[string]any{"insight": "FUNNELS"}}}},
		{"the soft delete records the flag", 2, map[string][2]any{"deleted": {false, true}}},
		{"the restore records the flag", 1, map[string][2]any{"deleted": {true, false}}},
		{"turning sharing on is recorded", 0, map[string][2]any{"sharing_enabled": {false, true}}},
		{"the creation has no changes", 4, map[string][2]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := changesOf(entries[tc.entry]); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%v, want %v", got, tc.want)
			}
		})
	}
	t.Run("the project-wide log holds every insight's entries, paginated", func(t *testing.T) {
		st, all := call(t, f.h, "GET", f.insights(f.a.ProjectID)+"activity/?limit=2", key, nil)
		if st != 200 || all["count"] != float64(6) || len(all["results"].([]any)) != 2 || all["next"] == nil {
			t.Fatalf("%d %v", st, all)
		}
		_, last := call(t, f.h, "GET", f.insights(f.a.ProjectID)+"activity/?limit=2&offset=4", key, nil)
		first := last["results"].([]any)[1].(map[string]any)
		if first["item_id"] != fmt.Sprint(i["id"]) || first["activity"] != "created" {
			t.Fatalf("oldest entry %v", first)
		}
		_, others := call(t, f.h, "GET", f.insight(f.a.ProjectID, other["id"])+"activity/", key, nil)
		if others["count"] != float64(1) {
			t.Fatalf("the other insight's log %v", others)
		}
	})
}

func TestMyLastViewedKeepsTheFiveMostRecent(t *testing.T) {
	f := newFixture(t)
	_, carolKey := f.addMember(t, "carol@example.com")
	var ids []any
	for k := range 7 {
		ids = append(ids, f.newInsight(t, map[string]any{"name": fmt.Sprintf("I%d", k)})["id"])
	}
	view := func(key string, k int) {
		t.Helper()
		st, out := call(t, f.h, "POST", f.insight(f.a.ProjectID, ids[k])+"viewed/", key, nil)
		if st != 200 || out["id"] != ids[k] || !reflect.DeepEqual(keys(out), insightFields) {
			t.Fatalf("viewed: %d %v", st, out)
		}
	}
	if got := f.lastViewed(t, f.a.PersonalAPIKey); len(got) != 0 {
		t.Fatalf("before any view: %v", got)
	}
	for k := range 7 {
		view(f.a.PersonalAPIKey, k)
	}
	view(f.a.PersonalAPIKey, 2) // seen again: back to the front, once
	view(carolKey, 0)           // another user's views are theirs
	t.Run("the caller's five most recent views, newest first", func(t *testing.T) {
		if got := f.lastViewed(t, f.a.PersonalAPIKey); !reflect.DeepEqual(got, []string{"I2", "I6", "I5", "I4", "I3"}) {
			t.Fatalf("%v", got)
		}
	})
	t.Run("another user sees only their own views", func(t *testing.T) {
		if got := f.lastViewed(t, carolKey); !reflect.DeepEqual(got, []string{"I0"}) {
			t.Fatalf("%v", got)
		}
	})
	t.Run("viewing does not count as a modification", func(t *testing.T) {
		_, body := call(t, f.h, "GET", f.insights(f.a.ProjectID), f.a.PersonalAPIKey, nil)
		if names(t, body["results"])[0] != "I6" {
			t.Fatalf("list order changed by views: %v", names(t, body["results"]))
		}
	})
	t.Run("an insight that does not exist cannot be viewed", func(t *testing.T) {
		if st, _ := call(t, f.h, "POST", f.insight(f.a.ProjectID, 99999999)+"viewed/", f.a.PersonalAPIKey, nil); st != 404 {
			t.Fatalf("%d", st)
		}
	})
}

func TestInsightSharingConfiguration(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	path := f.insight(f.a.ProjectID, f.newInsight(t, map[string]any{"name": "Shared"})["id"]) + "sharing/"
	st, first := call(t, f.h, "GET", path, key, nil)
	if st != 200 || !reflect.DeepEqual(keys(first), []string{"access_token", "created_at", "enabled"}) || first["enabled"] != false ||
		len(first["access_token"].(string)) < 32 {
		t.Fatalf("first read: %d %v", st, first)
	}
	t.Run("later reads answer the same configuration", func(t *testing.T) {
		if _, again := call(t, f.h, "GET", path, key, nil); !reflect.DeepEqual(again, first) {
			t.Fatalf("%v\nwant %v", again, first)
		}
	})
	t.Run("PATCH enabled: true turns it on and keeps the token", func(t *testing.T) {
		st, on := call(t, f.h, "PATCH", path, key, map[string]any{"enabled": true})
		if st != 200 || on["enabled"] != true || on["access_token"] != first["access_token"] || on["created_at"] != first["created_at"] {
			t.Fatalf("%d %v", st, on)
		}
		if _, again := call(t, f.h, "GET", path, key, nil); again["enabled"] != true {
			t.Fatalf("after reload %v", again)
		}
	})
	t.Run("PATCH without enabled changes nothing", func(t *testing.T) {
		if st, same := call(t, f.h, "PATCH", path, key, map[string]any{"access_token": "mine"}); st != 200 || same["enabled"] != true ||
			same["access_token"] != first["access_token"] {
			t.Fatalf("%d %v", st, same)
		}
	})
	for _, bad := range []any{"yes", nil, 1} {
		t.Run(fmt.Sprintf("enabled=%v is 400 naming enabled", bad), func(t *testing.T) {
			if st, out := call(t, f.h, "PATCH", path, key, map[string]any{"enabled": bad}); st != 400 || out["attr"] != "enabled" {
				t.Fatalf("%d %v", st, out)
			}
		})
	}
	t.Run("the first read of an insight never read before works on PATCH too", func(t *testing.T) {
		p := f.insight(f.a.ProjectID, f.newInsight(t, map[string]any{})["id"]) + "sharing/"
		if st, out := call(t, f.h, "PATCH", p, key, map[string]any{"enabled": false}); st != 200 || out["enabled"] != false {
			t.Fatalf("%d %v", st, out)
		}
	})
}

func TestInsightCancel(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	cancel := f.insights(f.a.ProjectID) + "cancel/"
	for _, tc := range []struct {
		name string
		body string
	}{
		{"no body", ""}, {"an empty object", "{}"}, {"a null id", `{"client_query_id": null}`},
		{"a numeric id", `{"client_query_id": 5}`}, {"an empty id", `{"client_query_id": ""}`},
		{"an id with SQL in it", `{"client_query_id": "x'; KILL QUERY --"}`},
		{"an id that is too long", `{"client_query_id": "` + strings.Repeat("a", 44) + `"}`},
	} {
		t.Run(tc.name+" is 400 naming client_query_id", func(t *testing.T) {
			w := send(t, f, "POST", cancel, key, tc.body)
			var out map[string]any
			json.Unmarshal(w.Body.Bytes(), &out)
			if w.Code != 400 || out["attr"] != "client_query_id" {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
		})
	}
	t.Run("an id under which nothing runs answers 201", func(t *testing.T) {
		st, out := call(t, f.h, "POST", cancel, key, map[string]any{"client_query_id": "8f0b3c1e-0000-4000-8000-000000000000"})
		if st != 201 || out["cancelled"] != false {
			t.Fatalf("%d %v", st, out)
		}
	})
	t.Run("a running query of the project is stopped", func(t *testing.T) {
		id := "running-query-1"
		errc := make(chan error, 1)
		go func() {
			ctx := olap.WithQueryID(context.Background(), analysis.ProjectQueryID(f.a.ProjectID, id))
			_, err := engine.Query(ctx, querybuilder.Statement{SQL: "SELECT count() FROM numbers(1e11) WHERE NOT ignore(sipHash64(number))"})
			errc <- err
		}()
		deadline := time.Now().Add(5 * time.Second)
		for {
			// Bob cannot stop Ada's query with the same client id from his project.
			if st, out := call(t, f.h, "POST", f.insights(f.b.ProjectID)+"cancel/", f.b.PersonalAPIKey,
				map[string]any{"client_query_id": id}); st != 201 || out["cancelled"] != false {
				t.Fatalf("bob: %d %v", st, out)
			}
			st, out := call(t, f.h, "POST", cancel, key, map[string]any{"client_query_id": id})
			if st != 201 {
				t.Fatalf("%d %v", st, out)
			}
			if out["cancelled"] == true {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the query never showed up to be cancelled")
			}
			time.Sleep(20 * time.Millisecond)
		}
		select {
		case err := <-errc:
			if code, ok := olap.ErrorCode(err); !ok || code != olap.CodeQueryWasCancelled {
				t.Fatalf("err = %v, want the cancelled code", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the cancelled query still runs")
		}
	})
}
