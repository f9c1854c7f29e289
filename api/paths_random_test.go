package api

// Paths on random events (ties, merged persons, sessions across midnight,
// gaps of exactly 30 minutes, repeats, pages with and without trailing
// slashes, screens and custom events mixed, cleaning rules and groupings
// that collide), compared with the reference (paths_reference_test.go).

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

var pathPages = []string{"/", "/home", "/home/", "/item/1", "/item/22", "/item/22/", "/cart", "/pay", "/item/22?ref=ad", "/home?utm=x/"}

// pathsProjectCleaning are the path_cleaning_filters of the projects the
// random tests run in: query strings go, then item ids (which the
// requests' own rules, applied after, may then rewrite again).
var pathsProjectCleaning = [][2]string{{`\?.*$`, ``}, {`/item/\d+`, `/item/N`}}

// pathsProject is a project holding events, with pathsProjectCleaning as
// its path_cleaning_filters and pathsTestAccounts as its test-account
// filters.
func pathsProject(t *testing.T, env *funnelEnv, events []refEvent) *funnelProject {
	t.Helper()
	p := env.project(t, events)
	var rules []map[string]string
	for _, c := range pathsProjectCleaning {
		rules = append(rules, map[string]string{"regex": c[0], "alias": c[1]})
	}
	st, out := call(t, env.h, "PATCH", fmt.Sprintf("/api/projects/%d/", p.id), p.key,
		map[string]any{"path_cleaning_filters": rules, "test_account_filters": pathsTestAccounts})
	if st != 200 {
		t.Fatalf("project settings: %d %v", st, out)
	}
	return p
}

// pathEvents are seeded random events of 30 persons over 4 days.
func pathEvents(seed int64) []refEvent {
	r := rand.New(rand.NewSource(seed))
	id := func() string { return uuid.Must(uuid.NewRandomFromReader(r)).String() }
	start := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	var out []refEvent
	for i := range 30 {
		user := fmt.Sprintf("s%d-user-%d", seed, i)
		anon := ""
		if r.Intn(3) == 0 {
			anon = user + "-anon"
		}
		at := start.Add(time.Duration(r.Intn(3*24*60)) * time.Minute)
		group := []string{"g1", "g2", "g3", ""}[r.Intn(4)]
		n := 2 + r.Intn(16)
		for k := range n {
			switch r.Intn(6) {
			case 0:
				at = at.Add(30 * time.Minute) // exactly the gap: a new path
			case 1:
				// the same instant: ties broken by uuid
			case 2:
				at = at.Add(time.Duration(31+r.Intn(600)) * time.Minute)
			default:
				at = at.Add(time.Duration(1+r.Intn(29*60)) * time.Second)
			}
			who := user
			if anon != "" && k < n/2 {
				who = anon
			}
			if anon != "" && k == n/2 {
				out = append(out, refEvent{UUID: id(), DistinctID: user, Event: "$identify", At: at,
					Props: map[string]any{"$anon_distinct_id": anon}})
			}
			var e refEvent
			switch x := r.Intn(10); {
			case x < 6:
				e = refEvent{Event: "$pageview", Props: map[string]any{"$current_url": "https://shop.test" + pathPages[r.Intn(len(pathPages))]}}
				if r.Intn(8) == 0 {
					e.Props["$current_url"] = pathPages[r.Intn(len(pathPages))] // "/" alone stays
				}
			case x < 8:
				e = refEvent{Event: "$screen", Props: map[string]any{"$screen_name": []string{"Home", "Item", "Cart"}[r.Intn(3)]}}
			default:
				e = refEvent{Event: []string{"signup", "buy", "$autocapture"}[r.Intn(3)], Props: map[string]any{}}
			}
			e.UUID, e.DistinctID, e.At = id(), who, at
			if r.Intn(6) == 0 {
				e.Props["$browser"] = "Bot"
			}
			if r.Intn(3) == 0 {
				e.Props["plan"] = "pro"
			}
			if group != "" && r.Intn(5) != 0 {
				e.Props["$group_1"] = group
			}
			out = append(out, e)
			if r.Intn(7) == 0 { // a repeat of the same item
				dup := e
				dup.UUID, dup.At = id(), at.Add(time.Duration(r.Intn(90))*time.Second)
				out = append(out, dup)
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].At.Before(out[b].At) })
	return out
}

// randomPaths is a random request over the events, its points and
// exclusions among the items it reads (or, now and then, items no event
// has).
func randomPaths(r *rand.Rand, events []refEvent) refPaths {
	q := refPaths{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC)}
	if r.Intn(4) == 0 {
		q.From = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC) // cuts sessions at the range's start
	}
	switch r.Intn(4) {
	case 0:
		q.Pageviews = true
	case 1:
		q.Pageviews, q.Screens = true, true
	case 2:
		q.AllCustom, q.Custom = r.Intn(2) == 0, []string{"$autocapture"}
	}
	if r.Intn(3) == 0 {
		q.Cleaning = append(q.Cleaning, [2]string{`/item/\d+`, `/item/:id`})
	}
	if r.Intn(4) == 0 {
		q.Cleaning = append(q.Cleaning, [2]string{`https://[^/]+`, ``})
	}
	if r.Intn(4) == 0 {
		q.Groupings = []string{"*/item/*", "*ca*"} // both match /cart/item/…: the first wins
	}
	q.ProjectCleaning, q.Replacements = pathsProjectCleaning, r.Intn(3) == 0
	switch r.Intn(6) {
	case 0:
		q.Properties = map[string]string{"plan": "pro"}
	case 1:
		q.TestAccounts = true
	case 2:
		q.GroupIndex = 1
	}
	seen := map[string]bool{"nowhere": true}
	for _, e := range events {
		if item, ok := q.item(e); ok {
			seen[item] = true
		}
	}
	items := make([]string, 0, len(seen))
	for item := range seen {
		items = append(items, item)
	}
	sort.Strings(items)
	if r.Intn(4) == 0 {
		q.Exclude = []string{items[r.Intn(len(items))]}
	}
	switch r.Intn(4) {
	case 0:
		q.Start = items[r.Intn(len(items))]
	case 1:
		q.End = items[r.Intn(len(items))]
	case 2:
		q.Start, q.End = items[r.Intn(len(items))], items[r.Intn(len(items))]
	}
	q.StepLimit = []int{0, 2, 3, 4, 5, 7}[r.Intn(6)]
	if r.Intn(3) == 0 {
		q.EdgeLimit = 1 + r.Intn(12)
	}
	switch r.Intn(5) {
	case 0:
		q.MinWeight = int64(1 + r.Intn(3))
	case 1:
		q.MaxWeight = int64(1 + r.Intn(3))
	}
	return q
}

type apiPathEdge struct {
	Source, Target string
	Value          int64
	Avg            float64 `json:"average_conversion_time"`
}

// checkPaths compares the API's edges with the reference's and returns
// how many there are.
func checkPaths(t *testing.T, p *funnelProject, events []refEvent, q refPaths) int {
	t.Helper()
	var got []apiPathEdge
	p.result(t, "path", q.params(), &got)
	want := q.edges(events)
	same := len(got) == len(want)
	for i := 0; same && i < len(want); i++ {
		g, w := got[i], want[i]
		same = g.Source == w.Source && g.Target == w.Target && g.Value == w.Value && math.Abs(g.Avg-w.Avg) <= 1e-6*math.Max(1, math.Abs(w.Avg))
	}
	if !same {
		var gs, ws []string
		for _, e := range got {
			gs = append(gs, fmt.Sprintf("%s -> %s %d %.3f", e.Source, e.Target, e.Value, e.Avg))
		}
		for _, e := range want {
			ws = append(ws, fmt.Sprintf("%s -> %s %d %.3f", e.Source, e.Target, e.Value, e.Avg))
		}
		t.Fatalf("request %v\n got %d edges:\n  %s\nwant %d:\n  %s", q.params(), len(got), strings.Join(gs, "\n  "), len(want), strings.Join(ws, "\n  "))
	}
	return len(want)
}

// notVacuous fails when too few requests had any edge to compare.
func notVacuous(t *testing.T, withEdges, requests int) {
	t.Helper()
	if withEdges*2 < requests {
		t.Fatalf("only %d of %d requests had edges: the random requests test little", withEdges, requests)
	}
	t.Logf("%d of %d requests had edges", withEdges, requests)
}

func TestPathsMatchTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	withEdges, requests := 0, 0
	for seed := int64(1); seed <= 4; seed++ {
		events := pathEvents(seed)
		p := pathsProject(t, env, events)
		r := rand.New(rand.NewSource(seed * 31))
		for i := range 30 {
			q := randomPaths(r, events)
			t.Run(fmt.Sprintf("seed %d request %d", seed, i), func(t *testing.T) {
				requests++
				if checkPaths(t, p, events, q) > 0 {
					withEdges++
				}
			})
		}
	}
	notVacuous(t, withEdges, requests)
}

func TestFunnelPathsMatchTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	withEdges, requests := 0, 0
	for seed := int64(5); seed <= 7; seed++ {
		events := pathEvents(seed)
		p := pathsProject(t, env, events)
		r := rand.New(rand.NewSource(seed))
		for i := range 18 {
			f := refFunnel{Steps: []refStep{{Event: "$pageview"}, {Event: "signup"}, {Event: "buy"}},
				DateFrom: "2026-03-01", DateTo: "2026-03-05", WindowInterval: 1 + r.Intn(48), WindowUnit: "hour",
				Order: []string{"ordered", "strict", "unordered"}[i%3]}
			q := refPaths{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC),
				Funnel: &f, StepLimit: []int{0, 3, 6}[r.Intn(3)]}
			switch r.Intn(3) {
			case 0:
				q.FunnelPaths, q.FunnelStep = "funnel_path_after_step", []int{1, 2, 3, -2, -3}[r.Intn(5)]
			case 1:
				q.FunnelPaths, q.FunnelStep = "funnel_path_before_step", []int{1, 2, 3, -2, -3}[r.Intn(5)]
			default:
				q.FunnelPaths, q.FunnelStep = "funnel_path_between_steps", 2+r.Intn(2)
			}
			t.Run(fmt.Sprintf("seed %d %s %s %d", seed, f.Order, q.FunnelPaths, q.FunnelStep), func(t *testing.T) {
				requests++
				if checkPaths(t, p, events, q) > 0 {
					withEdges++
				}
			})
		}
	}
	notVacuous(t, withEdges, requests)
}
