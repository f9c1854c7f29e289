package api

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// groupedEvent is what the Go reference reads of an event: its day
// (index into the days of both periods), its event properties and its
// company's key ("" for none).
type groupedEvent struct {
	day     int
	props   map[string]any
	company string
}

// TestGroupedBreakdownsAgainstGo: totals and sums broken down by a group
// property (groups with several versions, one never identified, events
// without a group), by two properties (missing and empty values), and by
// expressions of one and of two properties, daily with compare and a
// breakdown limit that folds values into "other", against the same
// breakdowns computed in Go. These trends group events by the raw
// columns first and compute the breakdown value per group (the
// statement's shape differs from the per-event one dau takes).
func TestGroupedBreakdownsAgainstGo(t *testing.T) {
	env := newFunnelEnv(t)
	rng := rand.New(rand.NewSource(21))
	// The latest industry of each company: acme moved from tech to
	// finance after some of its events, beta is in tech, delta was
	// identified without an industry, gamma never.
	industry := map[string]string{"acme": "finance", "beta": "tech", "delta": ""}
	events := []reference.Event{
		gident("company", "acme", analysistest.Mar(-2, 9), map[string]any{"industry": "tech"}),
		gident("company", "beta", analysistest.Mar(-2, 9), map[string]any{"industry": "tech", "size": "big"}),
		gident("company", "delta", analysistest.Mar(-2, 9), map[string]any{"name": "Delta"}),
		gident("company", "acme", analysistest.Mar(2, 20), map[string]any{"industry": "finance"}),
	}
	browsers := []any{"Chrome", "chrome", "Safari", "Firefox", "", nil}
	oses := []any{"Mac", "Windows", "", nil}
	prices := []any{12.5, 3.0, "n/a", nil}
	companies := []string{"acme", "beta", "gamma", "delta", ""}
	// Days -1 to 4 of March (day 0 is 28 February): the previous period
	// is 28 February and 1 March, the current 2 and 3 March; the first
	// and last days are outside both.
	var ref []groupedEvent
	for i := 0; i < 300; i++ {
		day := rng.Intn(6) - 1
		props := map[string]any{}
		for key, choices := range map[string][]any{"$browser": browsers, "$os": oses, "price": prices} {
			if v := choices[rng.Intn(len(choices))]; v != nil {
				props[key] = v
			}
		}
		company := companies[rng.Intn(len(companies))]
		groups := ""
		if company != "" {
			groups = "company=" + company
		}
		e := gev(fmt.Sprintf("u%d", rng.Intn(20)), "$pageview", analysistest.Mar(day, rng.Intn(24))+time.Duration(rng.Intn(60))*time.Minute, groups)
		for k, v := range props {
			e.Props[k] = v
		}
		events = append(events, e)
		ref = append(ref, groupedEvent{day: day, props: props, company: company})
	}
	events = append(events, gev("u0", "signup", analysistest.Mar(2, 5), "company=acme", "$browser", "Chrome"))
	p := env.project(t, events)

	text := func(e groupedEvent, key string) string {
		switch v := e.props[key].(type) {
		case string:
			return v
		case float64:
			return fmtFloat(v)
		}
		return ""
	}
	orNull := func(s string) string {
		if s == "" {
			return reference.Null
		}
		return s
	}
	for _, tc := range []struct {
		name  string
		extra map[string]any
		value func(e groupedEvent) string
		sum   bool
		limit int
	}{
		{"a group property", map[string]any{"breakdown": "industry", "breakdown_type": "group", "breakdown_group_type_index": 0},
			func(e groupedEvent) string { return orNull(industry[e.company]) }, false, 25},
		{"a group property, the smallest folded into other", map[string]any{"breakdown": "industry", "breakdown_type": "group",
			"breakdown_group_type_index": 0, "breakdown_limit": 1},
			func(e groupedEvent) string { return orNull(industry[e.company]) }, false, 1},
		{"two properties", map[string]any{"breakdowns": []any{map[string]any{"property": "$browser"}, map[string]any{"property": "$os"}}},
			func(e groupedEvent) string { return orNull(text(e, "$browser")) + "::" + orNull(text(e, "$os")) }, false, 25},
		{"two properties, three values and other", map[string]any{"breakdowns": []any{map[string]any{"property": "$browser"},
			map[string]any{"property": "$os"}}, "breakdown_limit": 3},
			func(e groupedEvent) string { return orNull(text(e, "$browser")) + "::" + orNull(text(e, "$os")) }, false, 3},
		{"a group property and an event property, summing a number", map[string]any{"breakdowns": []any{
			map[string]any{"property": "industry", "type": "group", "group_type_index": 0}, map[string]any{"property": "$os"}},
			"events": []any{map[string]any{"id": "$pageview", "math": "sum", "math_property": "price"}}},
			func(e groupedEvent) string { return orNull(industry[e.company]) + "::" + orNull(text(e, "$os")) }, true, 25},
		{"an expression of one property", map[string]any{"breakdown": "lower(properties.$browser)", "breakdown_type": "hogql"},
			func(e groupedEvent) string { return orNull(strings.ToLower(text(e, "$browser"))) }, false, 25},
		{"an expression of two properties", map[string]any{"breakdown": "concat(properties.$browser, '/', lower(properties.$os))",
			"breakdown_type": "hogql", "breakdown_limit": 4},
			func(e groupedEvent) string { return text(e, "$browser") + "/" + strings.ToLower(text(e, "$os")) }, false, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The reference: values ranked by current events (ties to
			// the smaller value), all but the top ones folded.
			volume := map[string]int{}
			for _, e := range ref {
				if e.day == 2 || e.day == 3 {
					volume[tc.value(e)]++
				}
			}
			var ranked []string
			for v := range volume {
				ranked = append(ranked, v)
			}
			sort.Slice(ranked, func(i, j int) bool {
				if volume[ranked[i]] != volume[ranked[j]] {
					return volume[ranked[i]] > volume[ranked[j]]
				}
				return ranked[i] < ranked[j]
			})
			top := map[string]bool{}
			for i, v := range ranked {
				top[v] = i < tc.limit
			}
			want := map[string][]float64{}
			for _, e := range ref {
				period, index := "current", e.day-2
				if e.day == 0 || e.day == 1 {
					period, index = "previous", e.day
				}
				if index < 0 || index > 1 {
					continue
				}
				v := tc.value(e)
				if !top[v] {
					v = reference.Other
				}
				k := period + " " + v
				if want[k] == nil {
					want[k] = make([]float64, 2)
				}
				add := 1.0
				if tc.sum {
					add = 0
					if f, ok := e.props["price"].(float64); ok {
						add = f
					}
				}
				want[k][index] += add
			}
			body := map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "2026-03-02", "date_to": "2026-03-03",
				"interval": "day", "compare": true}
			for k, v := range tc.extra {
				body[k] = v
			}
			var series []struct {
				BreakdownValue json.RawMessage `json:"breakdown_value"`
				CompareLabel   string          `json:"compare_label"`
				Data           []float64       `json:"data"`
			}
			p.result(t, "trend", body, &series)
			got := map[string][]float64{}
			for _, s := range series {
				var value any
				if err := json.Unmarshal(s.BreakdownValue, &value); err != nil {
					t.Fatalf("breakdown_value %s: %v", s.BreakdownValue, err)
				}
				if zero(s.Data) {
					continue // a value seen only in the other period
				}
				got[s.CompareLabel+" "+valueKey(value)] = s.Data
			}
			for k, d := range want {
				if zero(d) {
					delete(want, k)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("\n got %v\nwant %v", got, want)
			}
		})
	}
}

// valueKey is a breakdown value as text: a list's values joined by "::".
func valueKey(v any) string {
	if list, ok := v.([]any); ok {
		parts := make([]string, len(list))
		for i, x := range list {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, "::")
	}
	return fmt.Sprint(v)
}

func zero(data []float64) bool {
	for _, x := range data {
		if x != 0 {
			return false
		}
	}
	return true
}
