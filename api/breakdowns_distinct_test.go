package api

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// distinctEvent is what the Go reference reads of an event: its day, its
// $browser ("" for none), and the actors each distinct-count math counts
// ("" where the event has none: no session, no company).
type distinctEvent struct {
	day                      int
	browser                  string
	person, session, company string
}

// TestDistinctCountsBrokenDownAgainstGo: unique users, sessions and
// groups broken down by an event property, daily with compare and over
// the whole range (a table), against the same counts computed in Go.
// These fold each grouped row's set of actors (foldedBreakdown): with a
// small limit, several browsers fold into "other", where an actor seen
// under two of them counts once. Values rank by the events the series
// reads: those with an actor (an event without a session or a company is
// not read by that series); the limits are chosen so that ranking by all
// events would give other top values.
func TestDistinctCountsBrokenDownAgainstGo(t *testing.T) {
	env := newFunnelEnv(t)
	rng := rand.New(rand.NewSource(42))
	browsers := []string{"Chrome", "Safari", "Firefox", "Edge", "", "none"}
	companies := []string{"acme", "beta", "gamma", ""}
	events := []reference.Event{gident("company", "acme", analysistest.Mar(-2, 9), map[string]any{"industry": "tech"})}
	var ref []distinctEvent
	// Days -1 to 4 of March: the previous period is 28 February and 1
	// March, the current 2 and 3 March.
	for i := 0; i < 400; i++ {
		d := distinctEvent{day: rng.Intn(6) - 1, person: fmt.Sprintf("u%d", rng.Intn(12)),
			browser: browsers[rng.Intn(len(browsers))], company: companies[rng.Intn(len(companies))]}
		if rng.Intn(5) > 0 {
			d.session = fmt.Sprintf("%s-s%d", d.person, rng.Intn(3))
		}
		groups := ""
		if d.company != "" {
			groups = "company=" + d.company
		}
		e := gev(d.person, "$pageview", analysistest.Mar(d.day, rng.Intn(24))+time.Duration(rng.Intn(60))*time.Minute, groups)
		switch d.browser {
		case "none": // no $browser at all: the null value, as an empty one
			d.browser = ""
		default:
			e.Props["$browser"] = d.browser
		}
		if d.session != "" {
			e.Props["$session_id"] = d.session
		}
		events = append(events, e)
		ref = append(ref, d)
	}
	p := env.project(t, events)

	for _, tc := range []struct {
		name   string
		series map[string]any
		actor  func(distinctEvent) string
		limit  int
	}{
		{"unique users", map[string]any{"id": "$pageview", "math": "dau"},
			func(e distinctEvent) string { return e.person }, 25},
		{"unique users, all but two browsers folded into other", map[string]any{"id": "$pageview", "math": "dau"},
			func(e distinctEvent) string { return e.person }, 2},
		{"unique sessions, all but four browsers folded into other", map[string]any{"id": "$pageview", "math": "unique_session"},
			func(e distinctEvent) string { return e.session }, 4},
		{"unique companies, all but three browsers folded into other",
			map[string]any{"id": "$pageview", "math": "unique_group", "math_group_type_index": 0},
			func(e distinctEvent) string { return e.company }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Values rank by the current period's events the series
			// reads (ties to the smaller value).
			volume := map[string]int{}
			for _, e := range ref {
				if (e.day == 2 || e.day == 3) && tc.actor(e) != "" {
					volume[orRefNull(e.browser)]++
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
			actors := map[string][]map[string]bool{}
			for _, e := range ref {
				period, index := "current", e.day-2
				if e.day == 0 || e.day == 1 {
					period, index = "previous", e.day
				}
				a := tc.actor(e)
				if index < 0 || index > 1 || a == "" {
					continue
				}
				v := orRefNull(e.browser)
				if !top[v] {
					v = reference.Other
				}
				k := period + " " + v
				if actors[k] == nil {
					actors[k] = []map[string]bool{{}, {}}
				}
				actors[k][index][a] = true
			}
			want := map[string][]float64{}
			for k, days := range actors {
				want[k] = []float64{float64(len(days[0])), float64(len(days[1]))}
			}
			body := map[string]any{"events": []any{tc.series}, "date_from": "2026-03-02", "date_to": "2026-03-03",
				"interval": "day", "compare": true, "breakdown": "$browser", "breakdown_limit": tc.limit}
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
				got[s.CompareLabel+" "+fmt.Sprint(value)] = s.Data
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("\n got %v\nwant %v", got, want)
			}

			// Over the whole current range (a table): each actor once
			// per value, however many days they were seen.
			whole := map[string]map[string]bool{}
			for _, e := range ref {
				a := tc.actor(e)
				if (e.day != 2 && e.day != 3) || a == "" {
					continue
				}
				v := orRefNull(e.browser)
				if !top[v] {
					v = reference.Other
				}
				if whole[v] == nil {
					whole[v] = map[string]bool{}
				}
				whole[v][a] = true
			}
			wantTable := map[string]float64{}
			for v, set := range whole {
				wantTable[v] = float64(len(set))
			}
			delete(body, "compare")
			body["display"] = "ActionsTable"
			var rows []struct {
				BreakdownValue  json.RawMessage `json:"breakdown_value"`
				AggregatedValue float64         `json:"aggregated_value"`
			}
			p.result(t, "trend", body, &rows)
			gotTable := map[string]float64{}
			for _, r := range rows {
				var value any
				if err := json.Unmarshal(r.BreakdownValue, &value); err != nil {
					t.Fatalf("breakdown_value %s: %v", r.BreakdownValue, err)
				}
				gotTable[fmt.Sprint(value)] = r.AggregatedValue
			}
			if !reflect.DeepEqual(gotTable, wantTable) {
				t.Errorf("as a table:\n got %v\nwant %v", gotTable, wantTable)
			}
		})
	}
}

// orRefNull is a property's text as a breakdown value: the null value
// for none.
func orRefNull(s string) string {
	if s == "" {
		return reference.Null
	}
	return s
}
