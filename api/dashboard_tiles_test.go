package api

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// slotEngine counts trend statements and how many ran at once, each held
// for delay, and tells the server its project share.
type slotEngine struct {
	olap.Engine
	slots          int
	delay          time.Duration
	trends, inside atomic.Int64
	mu             sync.Mutex
	peak           int64
}

func (e *slotEngine) ProjectSlots() int { return e.slots }

func (e *slotEngine) Query(ctx context.Context, stmt querybuilder.Statement) (*olap.Rows, error) {
	if strings.Contains(stmt.SQL, "FROM events AS e") {
		e.trends.Add(1)
		n := e.inside.Add(1)
		e.mu.Lock()
		e.peak = max(e.peak, n)
		e.mu.Unlock()
		time.Sleep(e.delay)
		defer e.inside.Add(-1)
	}
	return e.Engine.Query(ctx, stmt)
}

// writeBrowserEvents stores one $pageview per time with the browser at
// the same index.
func writeBrowserEvents(t *testing.T, team int64, times []time.Time, browsers []string) {
	t.Helper()
	w := olap.NewWriter(engine, quietLog(), olap.WriterConfig{})
	defer w.Close()
	var cs []olap.Capture
	for i, at := range times {
		cs = append(cs, olap.Capture{Event: olap.Event{UUID: uuid.Must(uuid.NewV7()), TeamID: team, Event: "$pageview",
			DistinctID: fmt.Sprintf("u%d", i), Timestamp: at, Properties: fmt.Sprintf(`{"$browser": %q}`, browsers[i])}})
	}
	if res := w.Write(context.Background(), cs); res.Err != nil {
		t.Fatal(res.Err)
	}
}

func day(d int) time.Time { return time.Date(2026, 3, d, 12, 0, 0, 0, time.UTC) }

func pageviews(from, to string, props ...any) map[string]any {
	f := map[string]any{"insight": "TRENDS", "events": []any{map[string]any{"id": "$pageview"}}, "date_from": from, "date_to": to}
	if len(props) > 0 {
		f["properties"] = props
	}
	return f
}

func browserIs(b string) map[string]any {
	return map[string]any{"key": "$browser", "value": b, "operator": "exact", "type": "event"}
}

func TestInsightsFollowDashboards(t *testing.T) {
	f := newFixture(t)
	key := f.a.PersonalAPIKey
	d1 := f.newDashboard(t, map[string]any{"name": "One"})
	d2 := f.newDashboard(t, map[string]any{"name": "Two"})
	ins := f.newInsight(t, map[string]any{"name": "Views", "dashboards": []any{d1["id"]}})
	tiles := func(m map[string]any) string {
		return fmt.Sprint(m["dashboards"]) + " " + fmt.Sprint(len(m["dashboard_tiles"].([]any)))
	}
	if tiles(ins) != fmt.Sprintf("[%v] 1", d1["id"]) {
		t.Fatalf("created %v", ins)
	}
	firstTile := ins["dashboard_tiles"].([]any)[0].(map[string]any)
	if !slices.Equal(tileInsights(t, f.getDashboard(t, d1["id"], "")), []int64{idOf(ins)}) {
		t.Fatal("the insight is not on its dashboard")
	}
	t.Run("moving the insight soft-deletes its old tile", func(t *testing.T) {
		st, out := call(t, f.h, "PATCH", f.insight(f.a.ProjectID, ins["id"]), key, map[string]any{"dashboards": []any{d2["id"]}})
		if st != 200 || fmt.Sprint(out["dashboards"]) != fmt.Sprintf("[%v]", d2["id"]) {
			t.Fatalf("%d %v", st, out)
		}
		byDashboard := map[float64]bool{}
		for _, x := range out["dashboard_tiles"].([]any) {
			byDashboard[x.(map[string]any)["dashboard_id"].(float64)] = x.(map[string]any)["deleted"].(bool)
		}
		if len(byDashboard) != 2 || !byDashboard[d1["id"].(float64)] || byDashboard[d2["id"].(float64)] {
			t.Fatalf("dashboard_tiles %v", out["dashboard_tiles"])
		}
		if len(tileInsights(t, f.getDashboard(t, d1["id"], ""))) != 0 {
			t.Fatal("the old dashboard still shows the insight")
		}
	})
	t.Run("adding it back restores the same tile, and PUT takes dashboards too", func(t *testing.T) {
		st, out := call(t, f.h, "PUT", f.insight(f.a.ProjectID, ins["id"]), key, map[string]any{"dashboards": []any{d1["id"], d2["id"]}})
		if st != 200 || len(out["dashboards"].([]any)) != 2 {
			t.Fatalf("%d %v", st, out)
		}
		again := out["dashboard_tiles"].([]any)[0].(map[string]any)
		if again["id"] != firstTile["id"] || again["deleted"] != false {
			t.Fatalf("tile %v, first %v", again, firstTile)
		}
		st, act := call(t, f.h, "GET", f.insight(f.a.ProjectID, ins["id"])+"activity/", key, nil)
		if st != 200 || !strings.Contains(fmt.Sprint(act["results"]), "dashboards") {
			t.Fatalf("activity %d %v", st, act)
		}
	})
	t.Run("a dashboard that is not the project's is a 400 naming dashboards", func(t *testing.T) {
		st, out := call(t, f.h, "PATCH", f.insight(f.a.ProjectID, ins["id"]), key, map[string]any{"dashboards": []any{987654}})
		if st != 400 || out["attr"] != "dashboards" || !strings.Contains(fmt.Sprint(out["detail"]), "987654") {
			t.Fatalf("%d %v", st, out)
		}
	})
	t.Run("deleting a dashboard deletes its tiles and keeps the insight", func(t *testing.T) {
		if st, out := call(t, f.h, "PATCH", f.dashboard(f.a.ProjectID, d2["id"]), key, map[string]any{"deleted": true}); st != 200 {
			t.Fatalf("%d %v", st, out)
		}
		got := f.getInsight(t, ins["id"], "")
		if fmt.Sprint(got["dashboards"]) != fmt.Sprintf("[%v]", d1["id"]) {
			t.Fatalf("dashboards %v", got["dashboards"])
		}
		for _, x := range got["dashboard_tiles"].([]any) {
			tile := x.(map[string]any)
			if (tile["dashboard_id"] == d2["id"]) != (tile["deleted"] == true) {
				t.Fatalf("tiles %v", got["dashboard_tiles"])
			}
		}
	})
	t.Run("a tile deleted from the dashboard shows as deleted on the insight", func(t *testing.T) {
		st, out := call(t, f.h, "PATCH", f.dashboard(f.a.ProjectID, d1["id"]), key, map[string]any{"tiles": []any{
			map[string]any{"id": firstTile["id"], "deleted": true}}})
		if st != 200 || len(out["tiles"].([]any)) != 0 {
			t.Fatalf("%d %v", st, out)
		}
		if got := f.getInsight(t, ins["id"], ""); fmt.Sprint(got["dashboards"]) != "[]" {
			t.Fatalf("dashboards %v", got["dashboards"])
		}
	})
	t.Run("the primary dashboard names one of the project's dashboards", func(t *testing.T) {
		project := f.project(f.a.OrganizationID, f.a.ProjectID)
		st, out := call(t, f.h, "PATCH", project, key, map[string]any{"primary_dashboard": d1["id"]})
		if st != 200 || out["primary_dashboard"] != d1["id"] {
			t.Fatalf("%d %v", st, out)
		}
		for _, bad := range []any{987654, d2["id"]} { // absent, deleted
			st, out = call(t, f.h, "PATCH", project, key, map[string]any{"primary_dashboard": bad})
			if st != 400 || out["attr"] != "primary_dashboard" {
				t.Fatalf("%v: %d %v", bad, st, out)
			}
		}
		if st, out = call(t, f.h, "PATCH", project, key, map[string]any{"primary_dashboard": nil}); st != 200 || out["primary_dashboard"] != nil {
			t.Fatalf("null: %d %v", st, out)
		}
		call(t, f.h, "PATCH", project, key, map[string]any{"primary_dashboard": d1["id"]})
		call(t, f.h, "PATCH", f.dashboard(f.a.ProjectID, d1["id"]), key, map[string]any{"deleted": true})
		if _, out = call(t, f.h, "GET", project, key, nil); out["primary_dashboard"] != nil {
			t.Fatalf("a deleted dashboard stays primary: %v", out["primary_dashboard"])
		}
	})
}

func TestDashboardDuplication(t *testing.T) {
	f := newFixture(t)
	ins := f.newInsight(t, map[string]any{"name": "Views", "filters": pageviews("2026-03-01", "2026-03-03")})
	src := f.newDashboard(t, map[string]any{"name": "Source", "filters": map[string]any{"date_from": "-7d"},
		"tiles": []any{map[string]any{"insight": ins["id"], "color": "green"}, map[string]any{"text": map[string]any{"body": "Notes"}}}})
	t.Run("use_dashboard shares the insights and copies texts and filters", func(t *testing.T) {
		cp := f.newDashboard(t, map[string]any{"name": "Copy", "use_dashboard": src["id"]})
		if cp["creation_mode"] != "duplicate" || !slices.Equal(tileInsights(t, cp), []int64{idOf(ins), 0}) ||
			fmt.Sprint(cp["filters"]) != "map[date_from:-7d]" || cp["tiles"].([]any)[0].(map[string]any)["color"] != "green" {
			t.Fatalf("copy %v", cp)
		}
		if cp["tiles"].([]any)[1].(map[string]any)["id"] == src["tiles"].([]any)[1].(map[string]any)["id"] {
			t.Fatal("the text tile is shared, not copied")
		}
		if got := f.getInsight(t, ins["id"], ""); len(got["dashboards"].([]any)) != 2 {
			t.Fatalf("the insight is not on both: %v", got["dashboards"])
		}
	})
	t.Run("duplicate_tiles copies the insights too", func(t *testing.T) {
		cp := f.newDashboard(t, map[string]any{"name": "Deep", "use_dashboard": src["id"], "duplicate_tiles": true})
		ids := tileInsights(t, cp)
		if len(ids) != 2 || ids[0] == idOf(ins) || ids[0] == 0 {
			t.Fatalf("deep copy %v", ids)
		}
		copied := f.getInsight(t, ids[0], "")
		if copied["name"] != "Views" || fmt.Sprint(copied["filters"]) != fmt.Sprint(ins["filters"]) {
			t.Fatalf("copied insight %v", copied)
		}
	})
}

func TestFromDashboardOverridesFilters(t *testing.T) {
	f := newFixture(t)
	team := f.a.ProjectID
	writeBrowserEvents(t, team, []time.Time{day(2), day(5), day(5), day(6), day(8)},
		[]string{"Chrome", "Chrome", "Safari", "Safari", "Safari"})
	d := f.newDashboard(t, map[string]any{"name": "Safari week", "filters": map[string]any{
		"date_from": "2026-03-04", "date_to": "2026-03-06", "properties": []any{browserIs("Safari")}}})
	plain := f.newInsight(t, map[string]any{"name": "All", "filters": pageviews("2026-03-01", "2026-03-09")})
	chrome := f.newInsight(t, map[string]any{"name": "Chrome", "filters": pageviews("2026-03-01", "2026-03-09", browserIs("Chrome"))})
	byHand := f.newInsight(t, map[string]any{"name": "By hand", "filters": pageviews("2026-03-04", "2026-03-06", browserIs("Safari"))})
	byHandChrome := f.newInsight(t, map[string]any{"name": "By hand, both", "filters": pageviews("2026-03-04", "2026-03-06",
		[]any{browserIs("Chrome")}, []any{browserIs("Safari")})})
	from := fmt.Sprintf("?from_dashboard=%v", d["id"])

	if got := fmt.Sprint(dataOf(t, f.getInsight(t, plain["id"], ""))); got != "[0 1 0 0 2 1 0 1 0]" {
		t.Fatalf("plain %s", got)
	}
	t.Run("the dashboard's range and properties give the numbers of the filter written by hand", func(t *testing.T) {
		ctx := f.getInsight(t, plain["id"], from)
		hand := f.getInsight(t, byHand["id"], "")
		if got, want := fmt.Sprint(dataOf(t, ctx)), fmt.Sprint(dataOf(t, hand)); got != want || got != "[0 1 1]" {
			t.Fatalf("from_dashboard %s, by hand %s", got, want)
		}
		// The key follows the filter computed: the hand-written insight
		// was answered by the dashboard context's entry.
		if hand["is_cached"] != true || hand["last_refresh"] != ctx["last_refresh"] {
			t.Fatalf("by hand not from the same entry: %v / %v", hand["last_refresh"], ctx["last_refresh"])
		}
		if again := f.getInsight(t, plain["id"], ""); fmt.Sprint(dataOf(t, again)) != "[0 1 0 0 2 1 0 1 0]" || again["is_cached"] != true {
			t.Fatalf("the plain insight's own entry changed: %v", again)
		}
	})
	t.Run("the insight's own properties are ANDed with the dashboard's", func(t *testing.T) {
		got := fmt.Sprint(dataOf(t, f.getInsight(t, chrome["id"], from)))
		if want := fmt.Sprint(dataOf(t, f.getInsight(t, byHandChrome["id"], ""))); got != want || got != "[0 0 0]" {
			t.Fatalf("from_dashboard %s, by hand %s", got, want)
		}
		if got := fmt.Sprint(dataOf(t, f.getInsight(t, chrome["id"], ""))); got != "[0 1 0 0 1 0 0 0 0]" {
			t.Fatalf("chrome alone %s", got)
		}
	})
	t.Run("a dashboard retrieve computes each tile with the overrides", func(t *testing.T) {
		st, out := call(t, f.h, "PATCH", f.dashboard(team, d["id"]), f.a.PersonalAPIKey, map[string]any{"tiles": []any{
			map[string]any{"insight": plain["id"]}, map[string]any{"insight": chrome["id"]}}})
		if st != 200 {
			t.Fatalf("%d %v", st, out)
		}
		got := f.getDashboard(t, d["id"], "")
		var data []string
		for _, x := range got["tiles"].([]any) {
			tile := x.(map[string]any)
			data = append(data, fmt.Sprint(dataOf(t, tile["insight"].(map[string]any))))
			if tile["last_refresh"] == nil || tile["is_cached"] != true {
				t.Errorf("tile %v: last_refresh %v is_cached %v", tile["id"], tile["last_refresh"], tile["is_cached"])
			}
		}
		if fmt.Sprint(data) != "[[0 1 1] [0 0 0]]" {
			t.Fatalf("tiles %v", data)
		}
	})
	t.Run("an unknown or another organization's dashboard gives no context; a bad id is a 400", func(t *testing.T) {
		st, theirs := call(t, f.h, "POST", f.dashboards(f.b.ProjectID), f.b.PersonalAPIKey, map[string]any{"name": "Bob's",
			"filters": map[string]any{"date_from": "2026-03-08", "date_to": "2026-03-08"}})
		if st != 201 {
			t.Fatalf("%d %v", st, theirs)
		}
		for _, q := range []string{"?from_dashboard=987654", fmt.Sprintf("?from_dashboard=%v", theirs["id"])} {
			if got := fmt.Sprint(dataOf(t, f.getInsight(t, plain["id"], q))); got != "[0 1 0 0 2 1 0 1 0]" {
				t.Fatalf("%s: %s", q, got)
			}
		}
		for _, q := range []string{"?from_dashboard=x", "?from_dashboard=0"} {
			st, out := call(t, f.h, "GET", f.insight(team, plain["id"])+q, f.a.PersonalAPIKey, nil)
			if st != 400 || out["attr"] != "from_dashboard" {
				t.Fatalf("%s: %d %v", q, st, out)
			}
		}
	})
}

func TestDashboardTilesComputeOncePerFilter(t *testing.T) {
	f := newFixture(t)
	se := &slotEngine{Engine: engine, slots: 2, delay: 200 * time.Millisecond}
	f.s.useEngine(se)
	team := f.a.ProjectID
	writeBrowserEvents(t, team, []time.Time{day(2), day(3), day(5)}, []string{"Chrome", "Safari", "Safari"})
	var tiles []any
	for i, filters := range []map[string]any{
		pageviews("2026-03-01", "2026-03-05"), pageviews("2026-03-01", "2026-03-05"), // identical
		pageviews("2026-03-02", "2026-03-05"), pageviews("2026-03-03", "2026-03-05"),
		pageviews("2026-03-01", "2026-03-05", browserIs("Safari")),
	} {
		ins := f.newInsight(t, map[string]any{"name": fmt.Sprint("tile ", i), "filters": filters})
		tiles = append(tiles, map[string]any{"insight": ins["id"]})
	}
	tiles = append(tiles, map[string]any{"text": map[string]any{"body": "no result"}})
	d := f.newDashboard(t, map[string]any{"name": "Busy", "tiles": tiles})
	if se.trends.Load() != 0 {
		t.Fatalf("creating the dashboard ran %d statements", se.trends.Load())
	}

	t.Run("concurrent cold retrieves run each distinct filter once, at most the project's share at a time", func(t *testing.T) {
		var wg sync.WaitGroup
		bodies := make([]map[string]any, 6)
		for k := range bodies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, bodies[k] = call(t, f.h, "GET", f.dashboard(team, d["id"]), f.a.PersonalAPIKey, nil)
			}()
		}
		wg.Wait()
		if n := se.trends.Load(); n != 4 {
			t.Fatalf("%d statements for 4 distinct filters", n)
		}
		if se.peak != 2 {
			t.Fatalf("peak %d statements at once, want the share (2)", se.peak)
		}
		for _, b := range bodies {
			var data []string
			for _, x := range b["tiles"].([]any) {
				if in, ok := x.(map[string]any)["insight"].(map[string]any); ok {
					data = append(data, fmt.Sprint(dataOf(t, in)))
				}
			}
			if fmt.Sprint(data) != "[[0 1 1 0 1] [0 1 1 0 1] [1 1 0 1] [1 0 1] [0 0 1 0 1]]" {
				t.Fatalf("tiles %v", data)
			}
		}
	})
	t.Run("a fresh dashboard answers from the cache without the engine", func(t *testing.T) {
		start := time.Now()
		got := f.getDashboard(t, d["id"], "")
		took := time.Since(start)
		if n := se.trends.Load(); n != 4 {
			t.Fatalf("the warm retrieve ran %d statements", n-4)
		}
		for _, x := range got["tiles"].([]any) {
			if in, ok := x.(map[string]any)["insight"].(map[string]any); ok && in["is_cached"] != true {
				t.Fatalf("tile not from the cache: %v", x)
			}
		}
		if took > time.Second { // generous: PostgreSQL reads only
			t.Fatalf("warm retrieve took %s", took)
		}
	})
	t.Run("refresh=force_blocking recomputes each distinct filter once more", func(t *testing.T) {
		f.getDashboard(t, d["id"], "?refresh=force_blocking")
		if n := se.trends.Load(); n != 8 {
			t.Fatalf("%d statements after a forced refresh, want 8", n)
		}
		st, out := call(t, f.h, "GET", f.dashboard(team, d["id"])+"?refresh=sometimes", f.a.PersonalAPIKey, nil)
		if st != 400 || out["attr"] != "refresh" {
			t.Fatalf("%d %v", st, out)
		}
	})
}

// The insight's properties are ANDed with the dashboard's in every form
// the parser reads: the oldest (an object of exact matches) and a group.
func TestDashboardPropertiesJoinEveryFormOfTheInsights(t *testing.T) {
	f := newFixture(t)
	team := f.a.ProjectID
	w := olap.NewWriter(engine, quietLog(), olap.WriterConfig{})
	var cs []olap.Capture
	for i, e := range []struct {
		at          time.Time
		browser, os string
	}{
		{day(3), "Chrome", "Mac"}, {day(4), "Chrome", "Mac"}, {day(5), "Chrome", "Mac"}, {day(5), "Chrome", "Mac"},
		{day(5), "Chrome", "Windows"}, {day(5), "Safari", "Mac"}, {day(6), "Chrome", "Mac"}, {day(6), "Safari", "Windows"},
	} {
		cs = append(cs, olap.Capture{Event: olap.Event{UUID: uuid.Must(uuid.NewV7()), TeamID: team, Event: "$pageview",
			DistinctID: fmt.Sprintf("u%d", i), Timestamp: e.at, Properties: fmt.Sprintf(`{"$browser": %q, "$os": %q}`, e.browser, e.os)}})
	}
	if res := w.Write(context.Background(), cs); res.Err != nil {
		t.Fatal(res.Err)
	}
	w.Close()
	osIs := map[string]any{"key": "$os", "value": "Mac", "operator": "exact", "type": "event"}
	d := f.newDashboard(t, map[string]any{"name": "Macs", "filters": map[string]any{
		"date_from": "2026-03-04", "date_to": "2026-03-06", "properties": []any{osIs}}})
	from := fmt.Sprintf("?from_dashboard=%v", d["id"])
	hand := f.newInsight(t, map[string]any{"name": "By hand", "filters": pageviews("2026-03-04", "2026-03-06", browserIs("Chrome"), osIs)})
	want := fmt.Sprint(dataOf(t, f.getInsight(t, hand["id"], "")))
	if want != "[1 2 1]" {
		t.Fatalf("by hand %s", want)
	}
	for _, tc := range []struct {
		name  string
		props any
	}{
		{"the oldest form, an object of exact matches", map[string]any{"$browser": "Chrome"}},
		{"the oldest form sent as JSON text", `{"$browser": "Chrome"}`},
		{"a group", map[string]any{"type": "OR", "values": []any{browserIs("Chrome")}}},
		{"a list", []any{browserIs("Chrome")}},
	} {
		t.Run(tc.name+" gives the numbers of both reference.Conditions written by hand", func(t *testing.T) {
			filters := pageviews("2026-03-01", "2026-03-09")
			filters["properties"] = tc.props
			ins := f.newInsight(t, map[string]any{"name": tc.name, "filters": filters})
			if got := fmt.Sprint(dataOf(t, f.getInsight(t, ins["id"], ""))); got != "[0 0 1 1 3 1 0 0 0]" {
				t.Fatalf("the insight alone %s", got)
			}
			if got := fmt.Sprint(dataOf(t, f.getInsight(t, ins["id"], from))); got != want {
				t.Fatalf("from_dashboard %s, by hand %s", got, want)
			}
		})
	}
}
