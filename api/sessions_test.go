package api

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// TestSessionPropertiesReadWholeSessions: worked examples of session
// reference.Conditions and breakdowns, with a session crossing midnight and the
// range's edge, read whole.
func TestSessionPropertiesReadWholeSessions(t *testing.T) {
	env := newFunnelEnv(t)
	pv := func(who, session, url string, d int, hour, minute int) reference.Event {
		e := analysistest.Fev(who, "$pageview", analysistest.Mar(d, hour)+time.Duration(minute)*mi, "$session_id", session, "$current_url", url)
		return e
	}
	events := []reference.Event{
		// s1 starts on 1 March and ends on 2 March: 30 minutes, entered on /a.
		pv("u1", "s1", "/a", 1, 23, 50), pv("u1", "s1", "/b", 2, 0, 10), pv("u1", "s1", "/c", 2, 0, 20),
		// s2: one event on 2 March, entered and left on /b.
		pv("u2", "s2", "/b", 2, 10, 0),
		// s3: 2 March, 5 minutes, entered on /a.
		pv("u3", "s3", "/a", 2, 12, 0), pv("u3", "s3", "/c", 2, 12, 5),
		// An event without a session.
		analysistest.Fev("u4", "$pageview", analysistest.Mar(2, 13), "$current_url", "/a"),
	}
	p := env.project(t, events)
	trend := func(extra map[string]any) map[string]float64 {
		t.Helper()
		body := map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "2026-03-02", "date_to": "2026-03-02", "display": "ActionsTable"}
		for k, v := range extra {
			body[k] = v
		}
		var series []struct {
			BreakdownValue *string  `json:"breakdown_value"`
			Value          *float64 `json:"aggregated_value"`
		}
		p.result(t, "trend", body, &series)
		out := map[string]float64{}
		for _, s := range series {
			k := ""
			if s.BreakdownValue != nil {
				k = *s.BreakdownValue
			}
			out[k] = *s.Value
		}
		return out
	}
	for name, tc := range map[string]struct {
		extra map[string]any
		want  map[string]float64
	}{
		"by entry URL, the session begun the day before keeps its entry": {map[string]any{"breakdown": "$entry_current_url", "breakdown_type": "session"},
			map[string]float64{"/a": 4, "/b": 1, reference.Null: 1}},
		"by exit URL": {map[string]any{"breakdown": "$exit_current_url", "breakdown_type": "session"},
			map[string]float64{"/c": 4, "/b": 1, reference.Null: 1}},
		"by duration in seconds": {map[string]any{"breakdown": "$session_duration", "breakdown_type": "session"},
			map[string]float64{"1800": 2, "300": 2, "0": 1, reference.Null: 1}},
		"sessions longer than 10 minutes": {map[string]any{"properties": []any{map[string]any{"key": "$session_duration", "value": 600,
			"operator": "gt", "type": "session"}}}, map[string]float64{"": 2}},
		"sessions of at most 2 pageviews": {map[string]any{"properties": []any{map[string]any{"key": "$pageview_count", "value": 2,
			"operator": "lte", "type": "session"}}}, map[string]float64{"": 3}},
		"events without a session have no session properties": {map[string]any{"properties": []any{map[string]any{"key": "$session_duration",
			"operator": "is_not_set", "type": "session"}}}, map[string]float64{"": 1}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := trend(tc.extra); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("events read before the range (compare's previous period, weekly actives) find their sessions", func(t *testing.T) {
		long := []any{map[string]any{"key": "$session_duration", "value": 600, "operator": "gt", "type": "session"}}
		var series []struct {
			Label *string             `json:"compare_label"`
			Value *float64            `json:"aggregated_value"`
			URLs  []map[string]string `json:"persons_urls"`
		}
		p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "2026-03-12", "date_to": "2026-03-12",
			"display": "ActionsTable", "compare": true, "compare_to": "-10d", "properties": long}, &series)
		got := map[string]float64{}
		for _, s := range series {
			got[*s.Label] = *s.Value
			if *s.Label == "previous" && len(s.URLs) > 0 {
				if people, count := p.follow(t, s.URLs[0]["url"]); count != 1 || len(people) != 1 {
					t.Fatalf("the previous period's people: %v (%d), want u1", people, count)
				}
			}
		}
		if want := map[string]float64{"current": 0, "previous": 2}; !reflect.DeepEqual(got, want) {
			t.Fatalf("compare: got %v, want %v", got, want)
		}
		var active []struct {
			Data []float64 `json:"data"`
		}
		p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview", "math": "weekly_active"}},
			"date_from": "2026-03-08", "date_to": "2026-03-08", "properties": long}, &active)
		if len(active) != 1 || fmt.Sprint(active[0].Data) != "[1]" {
			t.Fatalf("weekly actives on 8 March of sessions over 10 minutes: %+v, want [1] (u1, 2 March)", active)
		}
	})
	t.Run("a session property that does not exist is a 400", func(t *testing.T) {
		p.wantInvalid(t, "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "breakdown": "$session_colour",
			"breakdown_type": "session"}, "breakdown")
		p.wantInvalid(t, "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview"}},
			"properties": []any{map[string]any{"key": "x", "value": 1, "type": "session"}}}, "properties")
	})
	t.Run("a funnel of sessions entered on /a", func(t *testing.T) {
		f := analysistest.FunnelOf("ordered", "$pageview", "$pageview").Hours(24)
		var steps []analysistest.APIStep
		p.result(t, "funnel", f.Filter(map[string]any{"properties": []any{map[string]any{"key": "$entry_current_url", "value": "/a", "type": "session"}}}), &steps)
		if got := fmt.Sprint(*steps[0].Count, *steps[1].Count); got != "2 2" {
			t.Fatalf("steps %s", got)
		}
	})
}

// TestBreakdownsByListsURLsAndBins: worked examples of multiple
// breakdowns (trends and funnels), URL normalisation and histogram bins.
func TestBreakdownsByListsURLsAndBins(t *testing.T) {
	env := newFunnelEnv(t)
	var events []reference.Event
	for i, spec := range []struct{ who, browser, os, url string }{
		{"u1", "Chrome", "Mac", "/a/"}, {"u2", "Chrome", "Mac", "/a?"}, {"u3", "Chrome", "Windows", "/a"},
		{"u4", "Safari", "Mac", "/"}, {"u5", "Safari", "", "/b#"}, {"u6", "Firefox", "Linux", "/b"},
	} {
		events = append(events, analysistest.Fev(spec.who, "A", analysistest.Mar(2, 9)+time.Duration(i)*mi, "browser", spec.browser, "os", spec.os, "$current_url", spec.url))
		if spec.who != "u6" {
			events = append(events, analysistest.Fev(spec.who, "B", analysistest.Mar(2, 10)+time.Duration(i)*mi))
		}
	}
	for i := 1; i <= 10; i++ {
		events = append(events, analysistest.Fev("v", "price", analysistest.Mar(3, 9)+time.Duration(i)*mi, "amount", fmt.Sprint(i)))
	}
	p := env.project(t, events)
	table := func(extra map[string]any) map[string]float64 {
		t.Helper()
		body := map[string]any{"events": []any{map[string]any{"id": "A"}}, "date_from": "2026-03-02", "date_to": "2026-03-02", "display": "ActionsTable"}
		for k, v := range extra {
			body[k] = v
		}
		var series []struct {
			Label string   `json:"label"`
			Value *float64 `json:"aggregated_value"`
		}
		p.result(t, "trend", body, &series)
		out := map[string]float64{}
		for _, s := range series {
			out[s.Label] = *s.Value
		}
		return out
	}
	t.Run("by browser and os: one series per pair, the value the list", func(t *testing.T) {
		got := table(map[string]any{"breakdowns": []any{map[string]any{"property": "browser"}, map[string]any{"property": "os"}}})
		want := map[string]float64{"A - Chrome::Mac": 2, "A - Chrome::Windows": 1, "A - Safari::Mac": 1, "A - Safari::" + reference.Null: 1, "A - Firefox::Linux": 1}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v\nwant %v", got, want)
		}
		var series []struct {
			BreakdownValue any `json:"breakdown_value"`
		}
		p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": "A"}}, "date_from": "2026-03-02", "date_to": "2026-03-02",
			"breakdowns": []any{map[string]any{"property": "browser"}, map[string]any{"property": "os"}}, "breakdown_limit": 1}, &series)
		if len(series) != 2 || fmt.Sprint(series[0].BreakdownValue) != "[Chrome Mac]" {
			t.Fatalf("%v", series)
		}
	})
	t.Run("URLs normalized: trailing /, ? and # go, / alone stays", func(t *testing.T) {
		got := table(map[string]any{"breakdown": "$current_url", "breakdown_normalize_url": true})
		if want := map[string]float64{"A - /a": 3, "A - /": 1, "A - /b": 2}; !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("numbers in bins of about as many events", func(t *testing.T) {
		got := table(map[string]any{"events": []any{map[string]any{"id": "price"}}, "date_from": "2026-03-03", "date_to": "2026-03-03",
			"breakdown": "amount", "breakdown_histogram_bin_count": 2})
		if want := map[string]float64{"price - [1,5.5]": 5, "price - [5.5,10]": 5}; !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("a funnel by browser and os", func(t *testing.T) {
		f := analysistest.FunnelOf("ordered", "A", "B").Hours(24)
		var lists [][]analysistest.APIStep
		p.result(t, "funnel", f.Filter(map[string]any{"breakdowns": []any{map[string]any{"property": "browser"}, map[string]any{"property": "os"}}}), &lists)
		got := map[string]string{}
		for _, steps := range lists {
			got[fmt.Sprint(steps[0].BreakdownValue)] = fmt.Sprint(*steps[0].Count, *steps[1].Count)
		}
		want := map[string]string{"[Chrome Mac]": "2 2", "[Chrome Windows]": "1 1", "[Safari Mac]": "1 1", "[Safari " + reference.Null + "]": "1 1", "[Firefox Linux]": "1 0"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("bad breakdowns name their parameter", func(t *testing.T) {
		ev := []any{map[string]any{"id": "A"}}
		p.wantInvalid(t, "trend", map[string]any{"events": ev, "breakdowns": []any{map[string]any{"property": "a"}, map[string]any{"property": "b"},
			map[string]any{"property": "c"}, map[string]any{"property": "d"}}}, "breakdowns")
		p.wantInvalid(t, "trend", map[string]any{"events": ev, "breakdowns": []any{map[string]any{"type": "event"}}}, "breakdowns")
		p.wantInvalid(t, "trend", map[string]any{"events": ev, "breakdown": "x", "breakdown_histogram_bin_count": 1000}, "breakdown_histogram_bin_count")
		p.wantInvalid(t, "funnel", analysistest.FunnelOf("ordered", "A", "B").Filter(map[string]any{"breakdown": "x", "breakdown_histogram_bin_count": 3}), "breakdown_histogram_bin_count")
		p.wantInvalid(t, "retention", map[string]any{"breakdowns": []any{map[string]any{"property": "a"}}}, "breakdowns")
	})
}
