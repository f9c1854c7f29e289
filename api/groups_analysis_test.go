package api

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// gev is an event of who at d (after analysistest.Fday) in the groups named by
// groups ("company=acme"), with "key", "value" property pairs.
func gev(who, name string, d time.Duration, groups string, kv ...string) reference.Event {
	e := analysistest.Fev(who, name, d, kv...)
	if groups != "" {
		g := map[string]any{}
		for _, pair := range strings.Split(groups, " ") {
			k, v, _ := strings.Cut(pair, "=")
			g[k] = v
		}
		e.Props["$groups"] = g
	}
	return e
}

// gident is a $groupidentify of (typ, key) at d setting set.
func gident(typ, key string, d time.Duration, set map[string]any) reference.Event {
	return reference.Event{UUID: uuid.NewString(), DistinctID: "server", Event: "$groupidentify", At: analysistest.Fday.Add(d),
		Props: map[string]any{"$group_type": typ, "$group_key": key, "$group_set": set}}
}

// groupEvents are the worked example of TestGroupsInAnalysesWorkedByHand.
// Types: company (0, first identified), team (1). acme was in tech and
// moved to finance after its events: analyses see finance (the latest
// version). gamma was never identified: it has no properties.
func groupEvents() []reference.Event {
	return []reference.Event{
		gident("company", "acme", analysistest.Mar(1, 9), map[string]any{"industry": "tech", "name": "Acme"}),
		gident("team", "t1", analysistest.Mar(1, 9), map[string]any{"size": "big"}),
		gident("team", "t2", analysistest.Mar(1, 9), map[string]any{"size": "small"}),
		gident("team", "t3", analysistest.Mar(1, 9), map[string]any{"size": "big"}),
		gident("company", "beta", analysistest.Mar(1, 9), map[string]any{"industry": "tech"}),
		gident("company", "acme", analysistest.Mar(2, 20), map[string]any{"industry": "finance"}),
		gev("u1", "$pageview", analysistest.Mar(2, 10), "company=acme team=t1", "$current_url", "/a"),
		gev("u2", "$pageview", analysistest.Mar(2, 10), "company=acme team=t2", "$current_url", "/a"),
		gev("u3", "$pageview", analysistest.Mar(2, 11), "company=beta team=t3", "$current_url", "/b"),
		gev("u4", "$pageview", analysistest.Mar(2, 11), "company=gamma", "$current_url", "/c"),
		gev("u5", "$pageview", analysistest.Mar(2, 12), "", "$current_url", "/d"),
		gev("u3", "open", analysistest.Mar(2, 11)+10*mi, "company=beta team=t3"),
		gev("u1", "signup", analysistest.Mar(2, 10)+10*mi, "company=acme team=t1"),
		gev("u2", "signup", analysistest.Mar(2, 10)+20*mi, "company=acme team=t2"),
		gev("u6", "$pageview", analysistest.Mar(3, 10), "company=beta team=t2", "$current_url", "/e"),
	}
}

func groupCond(key, op string, value any, index int) map[string]any {
	c := map[string]any{"key": key, "operator": op, "type": "group", "group_type_index": index}
	if value != nil {
		c["value"] = value
	}
	return c
}

// TestGroupsInAnalysesWorkedByHand: group property reference.Conditions and
// breakdowns (the group's latest properties), unique_group and
// aggregation_group_type_index, in every analysis kind, against counts
// worked by hand from groupEvents.
func TestGroupsInAnalysesWorkedByHand(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	p := env.project(t, groupEvents())
	pageviews := []any{map[string]any{"id": "$pageview"}}
	table := func(t *testing.T, extra map[string]any) map[string]float64 {
		t.Helper()
		body := map[string]any{"events": pageviews, "date_from": "2026-03-02", "date_to": "2026-03-02", "display": "ActionsTable"}
		for k, v := range extra {
			body[k] = v
		}
		var series []struct {
			BreakdownValue any      `json:"breakdown_value"`
			Value          *float64 `json:"aggregated_value"`
		}
		p.result(t, "trend", body, &series)
		out := map[string]float64{}
		for _, s := range series {
			k := ""
			if s.BreakdownValue != nil {
				k = fmt.Sprint(s.BreakdownValue)
			}
			out[k] = *s.Value
		}
		return out
	}
	t.Run("trends", func(t *testing.T) {
		finance := groupCond("industry", "exact", "finance", 0)
		for name, tc := range map[string]struct {
			extra map[string]any
			want  map[string]float64
		}{
			"all pageviews": {nil, map[string]float64{"": 5}},
			"companies in finance now: acme's two, though acme was in tech then": {map[string]any{"properties": []any{finance}},
				map[string]float64{"": 2}},
			"companies in tech now: beta's one only": {map[string]any{"properties": []any{groupCond("industry", "exact", "tech", 0)}},
				map[string]float64{"": 1}},
			"industry set: not gamma (never identified), not without a company": {map[string]any{"properties": []any{groupCond("industry", "is_set", nil, 0)}},
				map[string]float64{"": 3}},
			"industry not set": {map[string]any{"properties": []any{groupCond("industry", "is_not_set", nil, 0)}},
				map[string]float64{"": 2}},
			"a big team in finance: u1": {map[string]any{"properties": map[string]any{"type": "AND", "values": []any{finance, groupCond("size", "exact", "big", 1)}}},
				map[string]float64{"": 1}},
			"a big team or a company in finance": {map[string]any{"properties": map[string]any{"type": "OR", "values": []any{finance, groupCond("size", "exact", "big", 1)}}},
				map[string]float64{"": 3}},
			"an entity's own group condition": {map[string]any{"events": []any{map[string]any{"id": "$pageview", "properties": []any{groupCond("size", "exact", "small", 1)}}}},
				map[string]float64{"": 1}},
			"by industry": {map[string]any{"breakdown": "industry", "breakdown_type": "group", "breakdown_group_type_index": 0},
				map[string]float64{"finance": 2, "tech": 1, reference.Null: 2}},
			"by team size": {map[string]any{"breakdown": "size", "breakdown_type": "group", "breakdown_group_type_index": 1},
				map[string]float64{"big": 2, "small": 1, reference.Null: 2}},
			"by industry and team size": {map[string]any{"breakdowns": []any{map[string]any{"property": "industry", "type": "group", "group_type_index": 0},
				map[string]any{"property": "size", "type": "group", "group_type_index": 1}}},
				map[string]float64{"[finance big]": 1, "[finance small]": 1, "[tech big]": 1, "[" + reference.Null + " " + reference.Null + "]": 2}},
			"unique companies": {map[string]any{"events": []any{map[string]any{"id": "$pageview", "math": "unique_group", "math_group_type_index": 0}}},
				map[string]float64{"": 3}},
			"unique teams": {map[string]any{"events": []any{map[string]any{"id": "$pageview", "math": "unique_group", "math_group_type_index": 1}}},
				map[string]float64{"": 3}},
			"unique teams by industry": {map[string]any{"events": []any{map[string]any{"id": "$pageview", "math": "unique_group", "math_group_type_index": 1}},
				"breakdown": "industry", "breakdown_type": "group", "breakdown_group_type_index": 0},
				map[string]float64{"finance": 2, "tech": 1}},
			"active teams (aggregation_group_type_index 1)": {map[string]any{"events": []any{map[string]any{"id": "$pageview", "math": "dau"}}, "aggregation_group_type_index": 1},
				map[string]float64{"": 3}},
			"active persons": {map[string]any{"events": []any{map[string]any{"id": "$pageview", "math": "dau"}}},
				map[string]float64{"": 5}},
		} {
			t.Run(name, func(t *testing.T) {
				if got := table(t, tc.extra); !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			})
		}
		t.Run("unique teams per day: t1, t2, t3 on 2 March; t2 on 3 March", func(t *testing.T) {
			var got []analysistest.APITrendSeries
			p.result(t, "trend", map[string]any{"events": []any{map[string]any{"id": "$pageview", "math": "unique_group", "math_group_type_index": 1}},
				"date_from": "2026-03-02", "date_to": "2026-03-03"}, &got)
			if len(got) != 1 || !reflect.DeepEqual(got[0].Data, []float64{3, 1}) {
				t.Fatalf("%+v", got)
			}
		})
	})
	t.Run("funnels", func(t *testing.T) {
		steps := []any{map[string]any{"id": "$pageview", "order": 0}, map[string]any{"id": "signup", "order": 1}}
		funnel := func(t *testing.T, extra map[string]any) map[string][]int {
			t.Helper()
			body := map[string]any{"events": steps, "date_from": "2026-03-02", "date_to": "2026-03-02"}
			for k, v := range extra {
				body[k] = v
			}
			out := map[string][]int{}
			if _, ok := extra["breakdown"]; !ok {
				var got []struct{ Count int }
				p.result(t, "funnel", body, &got)
				for _, s := range got {
					out[""] = append(out[""], s.Count)
				}
				return out
			}
			var got [][]struct {
				Count          int
				BreakdownValue any `json:"breakdown_value"`
			}
			p.result(t, "funnel", body, &got)
			for _, series := range got {
				v := fmt.Sprint(series[0].BreakdownValue)
				for _, s := range series {
					out[v] = append(out[v], s.Count)
				}
			}
			return out
		}
		for name, tc := range map[string]struct {
			extra map[string]any
			want  map[string][]int
		}{
			"persons":               {nil, map[string][]int{"": {5, 2}}},
			"teams (aggregation 1)": {map[string]any{"aggregation_group_type_index": 1}, map[string][]int{"": {3, 2}}},
			"persons of finance":    {map[string]any{"properties": []any{groupCond("industry", "exact", "finance", 0)}}, map[string][]int{"": {2, 2}}},
			"persons of tech":       {map[string]any{"properties": []any{groupCond("industry", "exact", "tech", 0)}}, map[string][]int{"": {1, 0}}},
			"teams of small teams":  {map[string]any{"aggregation_group_type_index": 1, "properties": []any{groupCond("size", "exact", "small", 1)}}, map[string][]int{"": {1, 1}}},
			"persons by industry":   {map[string]any{"breakdown": "industry", "breakdown_type": "group", "breakdown_group_type_index": 0}, map[string][]int{"[finance]": {2, 2}, "[tech]": {1, 0}, "[" + reference.Null + "]": {2, 0}}},
			"teams by industry":     {map[string]any{"aggregation_group_type_index": 1, "breakdown": "industry", "breakdown_type": "group", "breakdown_group_type_index": 0}, map[string][]int{"[finance]": {2, 2}, "[tech]": {1, 0}}},
		} {
			t.Run(name, func(t *testing.T) {
				got := funnel(t, tc.extra)
				// A single breakdown's value may come as the value or as a
				// list of one.
				norm := map[string][]int{}
				for k, v := range got {
					if !strings.HasPrefix(k, "[") && k != "" {
						k = "[" + k + "]"
					}
					norm[k] = v
				}
				if !reflect.DeepEqual(norm, tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			})
		}
	})
	t.Run("retention", func(t *testing.T) {
		retention := func(t *testing.T, extra map[string]any) [][]int {
			t.Helper()
			body := map[string]any{"target_entity": map[string]any{"id": "$pageview"}, "returning_entity": map[string]any{"id": "$pageview"},
				"total_intervals": 2, "date_to": "2026-03-03"}
			for k, v := range extra {
				body[k] = v
			}
			var rows []struct {
				Values []struct{ Count int } `json:"values"`
			}
			p.result(t, "retention", body, &rows)
			out := make([][]int, len(rows))
			for i, r := range rows {
				for _, v := range r.Values {
					out[i] = append(out[i], v.Count)
				}
			}
			return out
		}
		// Persons: u1..u5 on 2 March, none back; u6 on 3 March. Teams:
		// t1, t2, t3 on 2 March, t2 back on 3 March (through u6).
		for name, tc := range map[string]struct {
			extra map[string]any
			want  [][]int
		}{
			"persons":               {nil, [][]int{{5, 0}, {1}}},
			"teams (aggregation 1)": {map[string]any{"aggregation_group_type_index": 1}, [][]int{{3, 1}, {1}}},
			"persons of tech":       {map[string]any{"properties": []any{groupCond("industry", "exact", "tech", 0)}}, [][]int{{1, 0}, {1}}},
			"teams of tech":         {map[string]any{"aggregation_group_type_index": 1, "properties": []any{groupCond("industry", "exact", "tech", 0)}}, [][]int{{1, 0}, {1}}},
		} {
			t.Run(name, func(t *testing.T) {
				if got := retention(t, tc.extra); !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			})
		}
	})
	t.Run("stickiness", func(t *testing.T) {
		stickiness := func(t *testing.T, entity map[string]any, extra map[string]any) []float64 {
			t.Helper()
			body := map[string]any{"insight": "STICKINESS", "events": []any{entity}, "date_from": "2026-03-02", "date_to": "2026-03-03"}
			for k, v := range extra {
				body[k] = v
			}
			var got []analysistest.APITrendSeries
			p.result(t, "trend", body, &got)
			if len(got) != 1 {
				t.Fatalf("%+v", got)
			}
			return got[0].Data
		}
		// Teams: t1 and t3 on one day, t2 on both. Persons: each on one.
		if got := stickiness(t, map[string]any{"id": "$pageview", "math": "unique_group", "math_group_type_index": 1}, nil); !reflect.DeepEqual(got, []float64{2, 1}) {
			t.Fatalf("teams: %v", got)
		}
		// Companies (type 0): acme and gamma on 2 March, beta on both days.
		if got := stickiness(t, map[string]any{"id": "$pageview", "math": "unique_group", "math_group_type_index": 0}, nil); !reflect.DeepEqual(got, []float64{2, 1}) {
			t.Fatalf("companies: %v", got)
		}
		if got := stickiness(t, map[string]any{"id": "$pageview"}, map[string]any{"aggregation_group_type_index": 1}); !reflect.DeepEqual(got, []float64{2, 1}) {
			t.Fatalf("teams by aggregation: %v", got)
		}
		if got := stickiness(t, map[string]any{"id": "$pageview"}, nil); !reflect.DeepEqual(got, []float64{6, 0}) {
			t.Fatalf("persons: %v", got)
		}
		// beta's events: u3 on 2 March, u6 on 3 March; team-wise t3, t2.
		if got := stickiness(t, map[string]any{"id": "$pageview"}, map[string]any{"properties": []any{groupCond("industry", "exact", "tech", 0)}}); !reflect.DeepEqual(got, []float64{2, 0}) {
			t.Fatalf("persons of tech: %v", got)
		}
	})
	t.Run("lifecycle", func(t *testing.T) {
		lifecycle := func(t *testing.T, extra map[string]any) map[string][]float64 {
			t.Helper()
			body := map[string]any{"insight": "LIFECYCLE", "events": pageviews, "date_from": "2026-03-02", "date_to": "2026-03-03"}
			for k, v := range extra {
				body[k] = v
			}
			var got []analysistest.APITrendSeries
			p.result(t, "trend", body, &got)
			out := map[string][]float64{}
			for _, s := range got {
				out[s.Status] = s.Data
			}
			return out
		}
		// Teams: t1, t2, t3 new on 2 March; t2 returning on 3 March, t1
		// and t3 dormant.
		if got, want := lifecycle(t, map[string]any{"aggregation_group_type_index": 1}), map[string][]float64{
			"new": {3, 0}, "returning": {0, 1}, "resurrecting": {0, 0}, "dormant": {0, -2}}; !reflect.DeepEqual(got, want) {
			t.Fatalf("teams: got %v, want %v", got, want)
		}
		// Persons of finance: u1 and u2, new on 2 March, dormant after.
		if got, want := lifecycle(t, map[string]any{"properties": []any{groupCond("industry", "exact", "finance", 0)}}), map[string][]float64{
			"new": {2, 0}, "returning": {0, 0}, "resurrecting": {0, 0}, "dormant": {0, -2}}; !reflect.DeepEqual(got, want) {
			t.Fatalf("finance: got %v, want %v", got, want)
		}
	})
	t.Run("paths", func(t *testing.T) {
		paths := func(t *testing.T, extra map[string]any) []string {
			t.Helper()
			body := map[string]any{"include_event_types": []string{"$pageview", "custom_event"}, "date_from": "2026-03-02", "date_to": "2026-03-02"}
			for k, v := range extra {
				body[k] = v
			}
			var got []struct {
				Source string  `json:"source"`
				Target string  `json:"target"`
				Value  float64 `json:"value"`
			}
			p.result(t, "path", body, &got)
			out := []string{}
			for _, e := range got {
				out = append(out, fmt.Sprintf("%s>%s=%v", e.Source, e.Target, e.Value))
			}
			sort.Strings(out)
			return out
		}
		for name, tc := range map[string]struct {
			extra map[string]any
			want  []string
		}{
			"everyone":   {nil, []string{"1_/a>2_signup=2", "1_/b>2_open=1"}},
			"of tech":    {map[string]any{"properties": []any{groupCond("industry", "exact", "tech", 0)}}, []string{"1_/b>2_open=1"}},
			"of finance": {map[string]any{"properties": []any{groupCond("industry", "exact", "finance", 0)}}, []string{"1_/a>2_signup=2"}},
		} {
			t.Run(name, func(t *testing.T) {
				if got := paths(t, tc.extra); !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			})
		}
	})
	t.Run("correlation", func(t *testing.T) {
		// The funnel's persons: u1, u2 convert; u3, u4, u5 do not, and u3
		// also did "open". Of teams with a size: u1, u2 convert, u3 does
		// not. Of finance, only u1 and u2: no "open".
		correlated := func(t *testing.T, extra map[string]any) []string {
			t.Helper()
			body := map[string]any{"events": []any{map[string]any{"id": "$pageview", "order": 0}, map[string]any{"id": "signup", "order": 1}},
				"date_from": "2026-03-02", "date_to": "2026-03-02", "funnel_correlation_type": "events"}
			for k, v := range extra {
				body[k] = v
			}
			var got analysistest.APICorrelation
			p.result(t, "funnel/correlation", body, &got)
			out := []string{}
			for _, e := range got.Events {
				out = append(out, fmt.Sprintf("%s s=%d f=%d", e.Event.Event, e.SuccessCount, e.FailureCount))
			}
			return out
		}
		if got := correlated(t, nil); !reflect.DeepEqual(got, []string{"open s=0 f=1"}) {
			t.Fatalf("everyone: %v", got)
		}
		if got := correlated(t, map[string]any{"properties": []any{groupCond("size", "is_set", nil, 1)}}); !reflect.DeepEqual(got, []string{"open s=0 f=1"}) {
			t.Fatalf("of a team with a size: %v", got)
		}
		if got := correlated(t, map[string]any{"properties": []any{groupCond("industry", "exact", "finance", 0)}}); len(got) != 0 {
			t.Fatalf("finance: %v", got)
		}
	})
	t.Run("group reference.Conditions and breakdowns are checked", func(t *testing.T) {
		p.wantInvalid(t, "trend", map[string]any{"events": pageviews, "properties": []any{map[string]any{"key": "industry", "value": "x", "type": "group"}}}, "properties")
		p.wantInvalid(t, "trend", map[string]any{"events": pageviews, "properties": []any{groupCond("industry", "exact", "x", 5)}}, "properties")
		p.wantInvalid(t, "trend", map[string]any{"events": pageviews, "breakdown": "industry", "breakdown_type": "group"}, "breakdown_group_type_index")
		p.wantInvalid(t, "funnel", map[string]any{"events": []any{map[string]any{"id": "$pageview", "order": 0}, map[string]any{"id": "signup", "order": 1}},
			"breakdown": "industry", "breakdown_type": "group", "breakdown_group_type_index": -1}, "breakdown_group_type_index")
	})
}

// TestGroupsHostileInputIsData: group types, keys, property names and
// values made of quotes, backslashes, SQL and JSON syntax are stored,
// listed, filtered and broken down by as they are.
func TestGroupsHostileInputIsData(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	hostileType := `c'o"m\pany'); DROP TABLE groups; --`
	hostileKey := `k'ey"\{"$group_0": 1}` + "\t\n"
	hostileProp := `in'du"stry\`
	hostileValue := `v'al"ue\%_{x}`
	p := env.project(t, []reference.Event{
		gident(hostileType, hostileKey, analysistest.Mar(1, 9), map[string]any{hostileProp: hostileValue}),
		{UUID: uuid.NewString(), DistinctID: "u1", Event: "$pageview", At: analysistest.Fday.Add(analysistest.Mar(2, 10)),
			Props: map[string]any{"$groups": map[string]any{hostileType: hostileKey}}},
		gev("u2", "$pageview", analysistest.Mar(2, 11), ""),
	})
	body := map[string]any{"events": []any{map[string]any{"id": "$pageview"}}, "date_from": "2026-03-02", "date_to": "2026-03-02", "display": "ActionsTable"}
	var series []struct {
		BreakdownValue any      `json:"breakdown_value"`
		Value          *float64 `json:"aggregated_value"`
	}
	body["properties"] = []any{groupCond(hostileProp, "exact", hostileValue, 0)}
	p.result(t, "trend", body, &series)
	if len(series) != 1 || *series[0].Value != 1 {
		t.Fatalf("filter: %+v", series)
	}
	delete(body, "properties")
	body["breakdown"], body["breakdown_type"], body["breakdown_group_type_index"] = hostileProp, "group", 0
	series = nil
	p.result(t, "trend", body, &series)
	got := map[string]float64{}
	for _, s := range series {
		got[fmt.Sprint(s.BreakdownValue)] = *s.Value
	}
	if want := map[string]float64{hostileValue: 1, reference.Null: 1}; !reflect.DeepEqual(got, want) {
		t.Fatalf("breakdown: %v", got)
	}
	body = map[string]any{"events": []any{map[string]any{"id": "$pageview", "math": "unique_group", "math_group_type_index": 0}},
		"date_from": "2026-03-02", "date_to": "2026-03-02", "display": "ActionsTable"}
	series = nil
	p.result(t, "trend", body, &series)
	if len(series) != 1 || *series[0].Value != 1 {
		t.Fatalf("unique_group: %+v", series)
	}
	// The types and the group, listed as sent.
	f := &fixture{s: env.s, h: env.h}
	var types []apiGroupType
	if code := getJSON(t, f, fmt.Sprintf("/api/projects/%d/groups_types/", p.id), p.key, &types); code != 200 || len(types) != 1 || types[0].GroupType != hostileType {
		t.Fatalf("types: %d %+v", code, types)
	}
	var page struct {
		Results []apiGroup `json:"results"`
	}
	q := fmt.Sprintf("/api/projects/%d/groups/?group_type_index=0&search=%s", p.id, "%25_%7Bx")
	if code := getJSON(t, f, q, p.key, &page); code != 200 || len(page.Results) != 1 || page.Results[0].GroupKey != hostileKey {
		t.Fatalf("search: %d %+v", code, page)
	}
}
