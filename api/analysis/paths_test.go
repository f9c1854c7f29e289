package analysis_test

// Paths on random events (ties, merged persons, sessions across midnight,
// gaps of exactly 30 minutes, repeats, pages with and without trailing
// slashes, screens and custom events mixed, cleaning rules and groupings
// that collide), compared with the reference (paths_reference_test.go).

import (
	"fmt"
	"math/rand"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

func TestPathsMatchTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	withEdges, requests := 0, 0
	for seed := int64(1); seed <= 4; seed++ {
		events := analysistest.PathEvents(seed)
		p := env.project(t, events)
		analysistest.SetPathsSettings(t, p)
		r := rand.New(rand.NewSource(seed * 31))
		for i := range 30 {
			q := analysistest.RandomPaths(r, events)
			t.Run(fmt.Sprintf("seed %d request %d", seed, i), func(t *testing.T) {
				requests++
				if analysistest.CheckPaths(t, p, events, q) > 0 {
					withEdges++
				}
			})
		}
	}
	analysistest.NotVacuous(t, withEdges, requests)
}

func TestFunnelPathsMatchTheReferenceOnRandomEvents(t *testing.T) {
	env := newFunnelEnv(t)
	withEdges, requests := 0, 0
	for seed := int64(5); seed <= 7; seed++ {
		events := analysistest.PathEvents(seed)
		p := env.project(t, events)
		analysistest.SetPathsSettings(t, p)
		r := rand.New(rand.NewSource(seed))
		for i := range 18 {
			f := reference.Funnel{Steps: []reference.Step{{Event: "$pageview"}, {Event: "signup"}, {Event: "buy"}},
				DateFrom: "2026-03-01", DateTo: "2026-03-05", WindowInterval: 1 + r.Intn(48), WindowUnit: "hour",
				Order: []string{"ordered", "strict", "unordered"}[i%3]}
			q := reference.Paths{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC),
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
				if analysistest.CheckPaths(t, p, events, q) > 0 {
					withEdges++
				}
			})
		}
	}
	analysistest.NotVacuous(t, withEdges, requests)
}

// Paths worked out by hand, one behaviour of analytics.md's Paths section
// each; the reference is checked against them too.

func TestPathsWorkedByHand(t *testing.T) {
	env := newFunnelEnv(t)
	day := reference.Paths{From: time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 4, 11, 0, 0, 0, 0, time.UTC)}
	with := func(f func(*reference.Paths)) reference.Paths { q := day; f(&q); return q }
	letters := func(who string, names ...string) []reference.Event {
		var out []reference.Event
		for i, n := range names {
			out = append(out, analysistest.Ev(who, n, float64(i)))
		}
		return out
	}
	concat := func(lists ...[]reference.Event) []reference.Event {
		var out []reference.Event
		for _, l := range lists {
			out = append(out, l...)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		events []reference.Event
		q      reference.Paths
		want   []analysistest.APIPathEdge
	}{
		{"a run keeps its last event, one trailing slash goes, a 30-minute gap starts a path",
			[]reference.Event{analysistest.PV("u1", "/home/", 0), analysistest.PV("u1", "/home", 1), analysistest.PV("u1", "/cart", 2), analysistest.PV("u1", "/home", 32), analysistest.PV("u1", "/pay", 33),
				analysistest.PV("u2", "/home", 0), analysistest.PV("u2", "/cart", 5), analysistest.PV("u2", "/", 6)},
			day, []analysistest.APIPathEdge{analysistest.Edge("1_/home", "2_/cart", 2, 3), analysistest.Edge("1_/home", "2_/pay", 1, 1), analysistest.Edge("2_/cart", "3_/", 1, 1)}},
		{"start and end with the ... item, which takes the time of the first item it stands for",
			letters("u1", "A", "B", "C", "D", "E", "F", "G"),
			with(func(q *reference.Paths) { q.Start, q.End, q.StepLimit = "B", "F", 4 }),
			[]analysistest.APIPathEdge{analysistest.Edge("1_B", "2_C", 1, 1), analysistest.Edge("2_C", "3_...", 1, 1), analysistest.Edge("3_...", "4_E", 1, 1), analysistest.Edge("4_E", "5_F", 1, 1)}},
		{"an end point keeps the last items up to its first occurrence",
			letters("u1", "A", "B", "C", "D", "C"),
			with(func(q *reference.Paths) { q.End, q.StepLimit = "C", 2 }),
			[]analysistest.APIPathEdge{analysistest.Edge("1_B", "2_C", 1, 1)}},
		{"a start point keeps the first items from its first occurrence; paths without it are dropped",
			concat(letters("u1", "A", "B", "C", "B", "D"), letters("u2", "A", "C")),
			with(func(q *reference.Paths) { q.Start, q.StepLimit = "B", 3 }),
			[]analysistest.APIPathEdge{analysistest.Edge("1_B", "2_C", 1, 1), analysistest.Edge("2_C", "3_B", 1, 1)}},
		{"the end point is the first one after the start point",
			letters("u1", "E", "S", "X", "E", "Y", "E"),
			with(func(q *reference.Paths) { q.Start, q.End = "S", "E" }),
			[]analysistest.APIPathEdge{analysistest.Edge("1_S", "2_X", 1, 1), analysistest.Edge("2_X", "3_E", 1, 1)}},
		{"an edge whose source the kept edges cannot reach is dropped",
			concat(letters("u1", "A", "U", "S"), letters("u2", "B", "U", "S"), letters("u3", "C", "U", "S")),
			with(func(q *reference.Paths) { q.EdgeLimit = 1 }), nil},
		{"a weight filter keeps such an edge",
			concat(letters("u1", "A", "U", "S"), letters("u2", "B", "U", "S"), letters("u3", "C", "U", "S")),
			with(func(q *reference.Paths) { q.EdgeLimit, q.MinWeight = 1, 1 }), []analysistest.APIPathEdge{analysistest.Edge("2_U", "3_S", 3, 1)}},
		{"cleaning, then groupings (the first that matches), then exclusions",
			[]reference.Event{analysistest.PV("u1", "/item/12", 0), analysistest.PV("u1", "/item/7/reviews", 1), analysistest.PV("u1", "/cart", 2), analysistest.PV("u1", "/pay", 3)},
			with(func(q *reference.Paths) {
				q.Cleaning = [][2]string{{`/item/\d+`, `/item/:id`}}
				q.Groupings = []string{"/item/:id/*", "/item/*", "/c*"}
				q.Exclude = []string{"/c*"}
			}),
			[]analysistest.APIPathEdge{analysistest.Edge("1_/item/*", "2_/item/:id/*", 1, 1), analysistest.Edge("2_/item/:id/*", "3_/pay", 1, 2)}},
		{"a grouping's %, _ and \\ are literal; * matches newlines too",
			[]reference.Event{analysistest.PV("u1", "/a_b/1", 0), analysistest.PV("u1", "/axb/2", 1), analysistest.PV("u1", "/50%\\off\nnow", 2), analysistest.PV("u1", "/50x\\off", 3)},
			with(func(q *reference.Paths) { q.Groupings = []string{"/a_b*", "/50%\\*"} }),
			[]analysistest.APIPathEdge{analysistest.Edge("1_/a_b*", "2_/axb/2", 1, 1), analysistest.Edge("2_/axb/2", "3_/50%\\*", 1, 1), analysistest.Edge("3_/50%\\*", "4_/50x\\off", 1, 1)}},
		{"an alias is literal text, backslashes and dollars included",
			[]reference.Event{analysistest.PV("u1", "/a/1", 0), analysistest.PV("u1", "/b", 1)},
			with(func(q *reference.Paths) { q.Cleaning = [][2]string{{`(\d)`, `\1$1`}} }),
			[]analysistest.APIPathEdge{analysistest.Edge(`1_/a/\1$1`, "2_/b", 1, 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.q.Edges(tc.events); fmt.Sprint(asAPIEdges(got)) != fmt.Sprint(tc.want) {
				t.Fatalf("the reference disagrees with the hand-worked answer:\n got %v\nwant %v", asAPIEdges(got), tc.want)
			}
			p := env.project(t, tc.events)
			var got []analysistest.APIPathEdge
			p.result(t, "path", tc.q.Params(), &got)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}

func asAPIEdges(es []reference.Edge) []analysistest.APIPathEdge {
	var out []analysistest.APIPathEdge
	for _, e := range es {
		out = append(out, analysistest.APIPathEdge(e))
	}
	return out
}

// Funnel paths by hand: the funnel $pageview -> signup -> buy within an
// hour; u1 converts, u2 drops off after signup, u3 after the pageview.
func TestFunnelPathsWorkedByHand(t *testing.T) {
	env := newFunnelEnv(t)
	events := []reference.Event{
		analysistest.Ev("u1", "before", 0), analysistest.PV("u1", "/a", 1), analysistest.Ev("u1", "between", 2), analysistest.Ev("u1", "signup", 3), analysistest.Ev("u1", "buy", 4), analysistest.Ev("u1", "after", 5),
		analysistest.PV("u2", "/a", 0), analysistest.Ev("u2", "signup", 1), analysistest.Ev("u2", "late", 30), analysistest.Ev("u2", "later", 59), analysistest.Ev("u2", "too late", 62),
		analysistest.PV("u3", "/a", 0), analysistest.Ev("u3", "wander", 1),
	}
	p := env.project(t, events)
	f := reference.Funnel{Steps: []reference.Step{{Event: "$pageview"}, {Event: "signup"}, {Event: "buy"}}, DateFrom: "2026-04-10", DateTo: "2026-04-10",
		WindowInterval: 1, WindowUnit: "hour"}
	q := reference.Paths{From: time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 4, 11, 0, 0, 0, 0, time.UTC), Funnel: &f}
	for _, tc := range []struct {
		mode string
		step int
		want []analysistest.APIPathEdge
	}{
		{"funnel_path_after_step", 3, []analysistest.APIPathEdge{analysistest.Edge("1_buy", "2_after", 1, 1)}},
		{"funnel_path_before_step", 2, []analysistest.APIPathEdge{analysistest.Edge("1_/a", "2_signup", 1, 1), analysistest.Edge("1_before", "2_/a", 1, 1),
			analysistest.Edge("2_/a", "3_between", 1, 1), analysistest.Edge("3_between", "4_signup", 1, 1)}},
		{"funnel_path_between_steps", 2, []analysistest.APIPathEdge{analysistest.Edge("1_/a", "2_between", 1, 1), analysistest.Edge("1_/a", "2_signup", 1, 1), analysistest.Edge("2_between", "3_signup", 1, 1)}},
		// Dropped off before buy: u2, from signup on (after), or up to
		// an hour after their pageview opened the window (before).
		{"funnel_path_after_step", -3, []analysistest.APIPathEdge{analysistest.Edge("1_signup", "2_late", 1, 29), analysistest.Edge("2_late", "3_later", 1, 29), analysistest.Edge("3_later", "4_too late", 1, 3)}},
		{"funnel_path_before_step", -3, []analysistest.APIPathEdge{analysistest.Edge("1_/a", "2_signup", 1, 1), analysistest.Edge("2_signup", "3_late", 1, 29), analysistest.Edge("3_late", "4_later", 1, 29)}},
		{"funnel_path_after_step", -2, []analysistest.APIPathEdge{analysistest.Edge("1_/a", "2_wander", 1, 1)}},
	} {
		t.Run(fmt.Sprintf("%s %d", tc.mode, tc.step), func(t *testing.T) {
			q.FunnelPaths, q.FunnelStep = tc.mode, tc.step
			if got := q.Edges(events); fmt.Sprint(asAPIEdges(got)) != fmt.Sprint(tc.want) {
				t.Fatalf("the reference disagrees with the hand-worked answer:\n got %v\nwant %v", asAPIEdges(got), tc.want)
			}
			var got []analysistest.APIPathEdge
			p.result(t, "path", q.Params(), &got)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
	st, out := p.Ask(t, "POST", "path", map[string]any{"funnel_paths": "funnel_path_between_steps", "funnel_filter": f.Filter(map[string]any{"funnel_step": 1})})
	if st != http.StatusBadRequest || string(out["attr"]) != `"funnel_step"` {
		t.Fatalf("between steps of step 1: %d %s", st, out["attr"])
	}
}

// Hostile strings in every field of a paths request are data: the
// request runs and finds nothing; as a cleaning regex such a string is a
// 400 naming the rules when it does not compile, and data when it does.
func TestPathsTakeHostileStringsAsData(t *testing.T) {
	env := newFunnelEnv(t)
	hostile := `x'); DROP TABLE events; -- \ "q" {p0:String} ünï 🦔 ` + "`"
	p := env.project(t, []reference.Event{analysistest.Ev("u1", "A", 0), analysistest.Ev("u1", hostile, 1)})
	body := map[string]any{"date_from": "2026-04-10", "date_to": "2026-04-10", "start_point": hostile, "end_point": hostile + "2",
		"exclude_events": []string{hostile + "3"}, "include_custom_events": []string{hostile, "A"}, "path_groupings": []string{hostile + "*"},
		"local_path_cleaning_filters": []map[string]string{{"regex": regexp.QuoteMeta(hostile + "4"), "alias": hostile}},
		"properties":                  []map[string]any{{"key": hostile, "value": hostile, "operator": "is_not"}}}
	var got []analysistest.APIPathEdge
	p.result(t, "path", body, &got)
	if len(got) != 0 {
		t.Fatalf("%v", got)
	}
	delete(body, "start_point")
	delete(body, "end_point")
	p.result(t, "path", body, &got)
	if fmt.Sprint(got) != fmt.Sprint([]analysistest.APIPathEdge{analysistest.Edge("1_A", "2_"+hostile+"*", 1, 1)}) {
		t.Fatalf("the hostile event as data: %v", got)
	}
	body["local_path_cleaning_filters"] = []map[string]string{{"regex": hostile, "alias": "x"}}
	p.wantInvalid(t, "path", body, "local_path_cleaning_filters")
}

func screen(who, name string, minutes float64) reference.Event {
	e := analysistest.Ev(who, "$screen", minutes)
	e.Props["$screen_name"] = name
	return e
}

// withProps adds "key", "value" property pairs to an event.
func withProps(e reference.Event, kv ...string) reference.Event {
	for i := 0; i+1 < len(kv); i += 2 {
		e.Props[kv[i]] = kv[i+1]
	}
	return e
}

// The parameters that choose the events read, and the weights' upper
// bound, by hand: each case in a project with analysistest.PathsProjectCleaning and
// reference.PathsTestAccounts set, so that only the request decides.
func TestPathsEventsAndWeightsWorkedByHand(t *testing.T) {
	env := newFunnelEnv(t)
	day := reference.Paths{From: time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 4, 11, 0, 0, 0, 0, time.UTC),
		ProjectCleaning: analysistest.PathsProjectCleaning}
	mixed := []reference.Event{analysistest.PV("u1", "/a", 0), analysistest.Ev("u1", "signup", 1), analysistest.Ev("u1", "$autocapture", 1.5), screen("u1", "Home", 2), analysistest.PV("u1", "/b", 3)}
	weights := []reference.Event{}
	for i, items := range [][]string{{"A", "B", "X"}, {"A", "B", "X"}, {"A", "B", "Y"}, {"A", "B"}} {
		for k, item := range items {
			weights = append(weights, analysistest.Ev(fmt.Sprintf("u%d", i), item, float64(k)))
		}
	}
	for _, tc := range []struct {
		name   string
		events []reference.Event
		q      func(*reference.Paths)
		want   []analysistest.APIPathEdge
	}{
		{"$pageview alone reads pageviews", mixed, func(q *reference.Paths) { q.Pageviews = true },
			[]analysistest.APIPathEdge{analysistest.Edge("1_/a", "2_/b", 1, 3)}},
		{"$screen and custom_event read screens and events without a $", mixed, func(q *reference.Paths) { q.Screens, q.AllCustom = true, true },
			[]analysistest.APIPathEdge{analysistest.Edge("1_signup", "2_Home", 1, 1)}},
		{"include_custom_events adds named events, $ ones included", mixed, func(q *reference.Paths) { q.Pageviews, q.Custom = true, []string{"$autocapture"} },
			[]analysistest.APIPathEdge{analysistest.Edge("1_/a", "2_$autocapture", 1, 1.5), analysistest.Edge("2_$autocapture", "3_/b", 1, 1.5)}},
		{"none of them reads every event", mixed, func(q *reference.Paths) {},
			[]analysistest.APIPathEdge{analysistest.Edge("1_/a", "2_signup", 1, 1), analysistest.Edge("2_signup", "3_$autocapture", 1, 0.5), analysistest.Edge("3_$autocapture", "4_Home", 1, 0.5),
				analysistest.Edge("4_Home", "5_/b", 1, 1)}},
		{"max_edge_weight drops heavier edges and keeps the rest unpruned", weights, func(q *reference.Paths) { q.MaxWeight = 2 },
			[]analysistest.APIPathEdge{analysistest.Edge("2_B", "3_X", 2, 1), analysistest.Edge("2_B", "3_Y", 1, 1)}},
		{"min and max together", weights, func(q *reference.Paths) { q.MinWeight, q.MaxWeight = 2, 3 },
			[]analysistest.APIPathEdge{analysistest.Edge("2_B", "3_X", 2, 1)}},
		{"properties keep the events that match",
			[]reference.Event{withProps(analysistest.Ev("u1", "A", 0), "plan", "pro"), analysistest.Ev("u1", "B", 1), withProps(analysistest.Ev("u1", "C", 2), "plan", "pro")},
			func(q *reference.Paths) { q.Properties = map[string]string{"plan": "pro"} }, []analysistest.APIPathEdge{analysistest.Edge("1_A", "2_C", 1, 2)}},
		{"filter_test_accounts drops the project's test events",
			[]reference.Event{analysistest.Ev("u1", "A", 0), withProps(analysistest.Ev("u1", "B", 1), "$browser", "Bot"), analysistest.Ev("u1", "C", 2)},
			func(q *reference.Paths) { q.TestAccounts = true }, []analysistest.APIPathEdge{analysistest.Edge("1_A", "2_C", 1, 2)}},
		{"without filter_test_accounts they stay",
			[]reference.Event{analysistest.Ev("u1", "A", 0), withProps(analysistest.Ev("u1", "B", 1), "$browser", "Bot"), analysistest.Ev("u1", "C", 2)},
			func(q *reference.Paths) {}, []analysistest.APIPathEdge{analysistest.Edge("1_A", "2_B", 1, 1), analysistest.Edge("2_B", "3_C", 1, 1)}},
		{"aggregation_group_type_index makes a group's events one path, across persons",
			[]reference.Event{withProps(analysistest.Ev("u1", "A", 0), "$group_1", "acme"), withProps(analysistest.Ev("u2", "B", 1), "$group_1", "acme"), analysistest.Ev("u3", "C", 2),
				withProps(analysistest.Ev("u2", "D", 3), "$group_1", "beta"), withProps(analysistest.Ev("u3", "E", 4), "$group_1", "acme")},
			func(q *reference.Paths) { q.GroupIndex = 1 }, []analysistest.APIPathEdge{analysistest.Edge("1_A", "2_B", 1, 1), analysistest.Edge("2_B", "3_E", 1, 3)}},
		{"path_replacements applies the project's rules before the request's",
			[]reference.Event{analysistest.PV("u1", "/item/12?x=1", 0), analysistest.PV("u1", "/item/7", 1), analysistest.PV("u1", "/pay?y", 2)},
			func(q *reference.Paths) { q.Replacements, q.Cleaning = true, [][2]string{{`N$`, `:id`}} },
			[]analysistest.APIPathEdge{analysistest.Edge("1_/item/:id", "2_/pay", 1, 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := day
			tc.q(&q)
			if got := q.Edges(tc.events); fmt.Sprint(asAPIEdges(got)) != fmt.Sprint(tc.want) {
				t.Fatalf("the reference disagrees with the hand-worked answer:\n got %v\nwant %v", asAPIEdges(got), tc.want)
			}
			p := env.project(t, tc.events)
			analysistest.SetPathsSettings(t, p)
			var got []analysistest.APIPathEdge
			p.result(t, "path", q.Params(), &got)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}
