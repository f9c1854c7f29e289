package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis"
)

// A plain retrieve answers a dashboard's kept answer while it is still the
// answer, and renders it again after anything it shows changed. The test
// marks the kept answer (its dashboard name) so that a retrieve tells
// which way it was answered: the mark is a kept answer served, the real
// name a render.
func TestDashboardKeptAnswer(t *testing.T) {
	f := newFixture(t)
	team, key := f.a.ProjectID, f.a.PersonalAPIKey
	writeBrowserEvents(t, team, []time.Time{day(2), day(3), day(5)}, []string{"Chrome", "Safari", "Safari"})
	closed := f.newInsight(t, map[string]any{"name": "closed", "filters": pageviews("2026-03-01", "2026-03-05")})
	byBrowser := pageviews("2026-03-01", "2026-03-05")
	byBrowser["breakdown"] = "$browser"
	broken := f.newInsight(t, map[string]any{"name": "by browser", "filters": byBrowser})
	open := f.newInsight(t, map[string]any{"name": "open", "filters": map[string]any{"insight": "TRENDS",
		"events": []any{map[string]any{"id": "$pageview", "type": "events"}}, "date_from": "-7d"}})
	d := f.newDashboard(t, map[string]any{"name": "Kept", "tiles": []any{
		map[string]any{"insight": closed["id"]}, map[string]any{"insight": broken["id"]},
		map[string]any{"insight": open["id"]}, map[string]any{"text": map[string]any{"body": "notes"}}}})
	id := idOf(d)
	path := f.dashboard(team, id)

	// mark makes sure the dashboard's answer is kept and marks it.
	mark := func(t *testing.T) {
		t.Helper()
		clearOfMinuteEnd()
		f.s.renders = renderCache{} // a marked answer kept from before goes
		f.getDashboard(t, id, "")   // computes what is missing
		f.getDashboard(t, id, "")   // every result from the cache: kept
		e := f.s.renders.get(team, id)
		if e == nil {
			t.Fatal("a retrieve answered entirely from the cache was not kept")
		}
		marked := bytes.Replace(e.body, []byte(`"name":"`+d["name"].(string)+`"`), []byte(`"name":"served kept"`), 1)
		if bytes.Equal(marked, e.body) {
			t.Fatalf("no dashboard name in %.200s", e.body)
		}
		e.body = marked
		if got := f.getDashboard(t, id, ""); got["name"] != "served kept" {
			t.Fatalf("an unchanged dashboard was rendered again: name %v", got["name"])
		}
	}
	// rendered retrieves the dashboard and fails unless it was rendered.
	rendered := func(t *testing.T, query string) map[string]any {
		t.Helper()
		got := f.getDashboard(t, id, query)
		if got["name"] == "served kept" {
			t.Fatal("the kept answer was served after a change it does not show")
		}
		return got
	}
	tileNamed := func(got map[string]any, name string) map[string]any {
		for _, x := range got["tiles"].([]any) {
			if in, ok := x.(map[string]any)["insight"].(map[string]any); ok && in["name"] == name {
				return in
			}
		}
		return nil
	}
	// exec changes something by hand, and waits until the server heard
	// of it (dashboard_watch_test.go times that).
	exec := func(t *testing.T, q string, args ...any) {
		t.Helper()
		if _, err := f.s.store.DB().Exec(q, args...); err != nil {
			t.Fatal(err)
		}
		syncRenders(t, f.s)
	}

	t.Run("the kept answer is the rendered one, byte for byte", func(t *testing.T) {
		// The first retrieve computes every tile (is_cached false); what
		// it keeps is what a retrieve reading them from the cache writes.
		exec(t, "DELETE FROM cached_results WHERE project_id = $1", team)
		f.s.renders = renderCache{}
		if in := tileNamed(f.getDashboard(t, id, ""), "closed"); in["is_cached"] != false {
			t.Fatalf("is_cached %v after computing", in["is_cached"])
		}
		e := f.s.renders.get(team, id)
		if e == nil {
			t.Fatal("not kept")
		}
		kept := string(e.body)
		var k map[string]any
		if err := json.Unmarshal(e.body, &k); err != nil {
			t.Fatal(err)
		}
		if in := tileNamed(k, "closed"); in["is_cached"] != true {
			t.Fatalf("kept is_cached %v", in["is_cached"])
		}
		f.s.renders = renderCache{} // the next retrieve renders from the cache
		r := send(t, f, "GET", path, key, "")
		if r.Code != http.StatusOK || r.Body.String() != kept {
			t.Fatalf("rendered %d %.300s\nkept %.300s", r.Code, r.Body.String(), kept)
		}
		if r.Header().Get("Content-Type") != jsonContentType {
			t.Fatalf("content type %q", r.Header().Get("Content-Type"))
		}
	})
	t.Run("concurrent retrieves with nothing kept all answer the same", func(t *testing.T) {
		f.s.renders = renderCache{}
		bodies := make([]string, 8)
		var wg sync.WaitGroup
		for k := range bodies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				bodies[k] = send(t, f, "GET", path, key, "").Body.String()
			}()
		}
		wg.Wait()
		for _, b := range bodies {
			if b != bodies[0] || !strings.Contains(b, `"tiles"`) {
				t.Fatalf("answers differ:\n%.300s\n%.300s", b, bodies[0])
			}
		}
	})
	t.Run("an insight's edit", func(t *testing.T) {
		mark(t)
		call(t, f.h, "PATCH", f.insight(team, closed["id"]), key, map[string]any{"name": "closed, renamed"})
		if tileNamed(rendered(t, ""), "closed, renamed") == nil {
			t.Fatal("the renamed insight is not shown")
		}
	})
	t.Run("the dashboard's edit", func(t *testing.T) {
		mark(t)
		call(t, f.h, "PATCH", path, key, map[string]any{"description": "edited"})
		if got := rendered(t, ""); got["description"] != "edited" {
			t.Fatalf("description %v", got["description"])
		}
	})
	t.Run("a tile removed through the insight's dashboards", func(t *testing.T) {
		mark(t)
		call(t, f.h, "PATCH", f.insight(team, broken["id"]), key, map[string]any{"dashboards": []int64{}})
		if tileNamed(rendered(t, ""), "by browser") != nil {
			t.Fatal("the removed tile is shown")
		}
		call(t, f.h, "PATCH", f.insight(team, broken["id"]), key, map[string]any{"dashboards": []int64{id}})
	})
	t.Run("a write the server did not make (by hand in PostgreSQL)", func(t *testing.T) {
		mark(t)
		exec(t, "UPDATE insights SET name = 'renamed by hand' WHERE id = $1", idOf(closed))
		if tileNamed(rendered(t, ""), "renamed by hand") == nil {
			t.Fatal("the insight renamed by hand is not shown")
		}
	})
	t.Run("a user's name", func(t *testing.T) {
		mark(t)
		exec(t, "UPDATE users SET first_name = 'Augusta' WHERE id = $1", f.a.UserID)
		in := tileNamed(rendered(t, ""), "open")
		if by := in["created_by"].(map[string]any); by["first_name"] != "Augusta" {
			t.Fatalf("created_by %v", by)
		}
	})
	t.Run("the project's settings", func(t *testing.T) {
		mark(t)
		exec(t, "UPDATE projects SET timezone = 'Europe/Paris' WHERE id = $1", team)
		if in := tileNamed(rendered(t, ""), "open"); in["timezone"] != "Europe/Paris" {
			t.Fatalf("timezone %v", in["timezone"])
		}
		exec(t, "UPDATE projects SET timezone = 'UTC' WHERE id = $1", team)
	})
	t.Run("a tile's result recomputed", func(t *testing.T) {
		mark(t)
		before := f.s.renders.get(team, id).state.Computed
		st, _ := call(t, f.h, "GET", f.insight(team, closed["id"])+"?refresh=force_blocking", key, nil)
		if st != 200 {
			t.Fatal(st)
		}
		rendered(t, "")
		f.getDashboard(t, id, "")
		if after := f.s.renders.get(team, id).state.Computed; fmt.Sprint(after) == fmt.Sprint(before) {
			t.Fatalf("kept the same computations %v", after)
		}
	})
	t.Run("events after an open range's computation", func(t *testing.T) {
		mark(t)
		f.s.analysis.Ingest().Note(team)
		got := rendered(t, "")
		if in := tileNamed(got, "open"); in["is_cached"] != false {
			t.Fatalf("the open tile was not recomputed: is_cached %v", in["is_cached"])
		}
	})
	t.Run("another minute whose cache keys are other ones", func(t *testing.T) {
		mark(t)
		e := f.s.renders.get(team, id)
		e.minute = time.Now().Truncate(analysis.ClockPrecision).Add(-analysis.ClockPrecision)
		e.keys = append([]string{"made in another minute"}, e.keys[1:]...)
		rendered(t, "")
	})
	t.Run("another minute whose cache keys are the same (ranges whose ends do not move)", func(t *testing.T) {
		mark(t)
		f.s.renders.get(team, id).minute = time.Now().Truncate(analysis.ClockPrecision).Add(-analysis.ClockPrecision)
		if got := f.getDashboard(t, id, ""); got["name"] != "served kept" {
			t.Fatalf("rendered again: name %v", got["name"])
		}
		if e := f.s.renders.get(team, id); !e.minute.Equal(time.Now().Truncate(analysis.ClockPrecision)) {
			t.Fatalf("kept for minute %v", e.minute)
		}
	})
	t.Run("another minute and an edit", func(t *testing.T) {
		mark(t)
		f.s.renders.get(team, id).minute = time.Now().Truncate(analysis.ClockPrecision).Add(-analysis.ClockPrecision)
		call(t, f.h, "PATCH", f.insight(team, closed["id"]), key, map[string]any{"name": "closed, renamed again"})
		if tileNamed(rendered(t, ""), "closed, renamed again") == nil {
			t.Fatal("the renamed insight is not shown")
		}
	})
	t.Run("a result gone stale", func(t *testing.T) {
		mark(t)
		f.s.renders.get(team, id).staleAt = time.Now().Add(-time.Second)
		rendered(t, "")
	})
	t.Run("refresh modes other than the plain retrieve", func(t *testing.T) {
		for _, q := range []string{"?refresh=true", "?refresh=force_cache", "?refresh=force_blocking"} {
			mark(t)
			rendered(t, q)
		}
	})
	t.Run("a user no longer a member", func(t *testing.T) {
		mark(t)
		exec(t, "DELETE FROM memberships WHERE user_id = $1", f.a.UserID)
		if st, out := call(t, f.h, "GET", path, key, nil); st != http.StatusNotFound {
			t.Fatalf("after leaving the organization: %d %v", st, out)
		}
		exec(t, "INSERT INTO memberships (organization_id, user_id, level) VALUES ($1, $2, 15)", f.a.OrganizationID, f.a.UserID)
		if got := f.getDashboard(t, id, ""); got["name"] != "served kept" {
			t.Fatalf("the kept answer is not served to a member again: name %v", got["name"])
		}
	})
	t.Run("another organization's key, a deleted dashboard", func(t *testing.T) {
		mark(t)
		if st, out := call(t, f.h, "GET", path, f.b.PersonalAPIKey, nil); st != http.StatusNotFound {
			t.Fatalf("another organization: %d %v", st, out)
		}
		call(t, f.h, "PATCH", path, key, map[string]any{"deleted": true})
		if st, out := call(t, f.h, "GET", path, key, nil); st != http.StatusNotFound {
			t.Fatalf("deleted: %d %v", st, out)
		}
	})
}
