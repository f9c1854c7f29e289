package api

// Hostile strings in every field of retention, lifecycle and stickiness
// requests are data end to end: stored by capture as they were sent,
// matched as values, and returned as they were stored (breakdown values,
// labels, people).

import (
	"reflect"
	"testing"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

func TestPeriodKindsTakeHostileStringsAsData(t *testing.T) {
	t.Parallel()
	first, second := `'; DROP TABLE events; --`, `quote"d \ back\slash {p0:String}`
	key, val := `{p0:String}'"`, `ünïcödé 🦔 \N`
	bkey, custom := `it's "the" \plan`, `x'); DROP TABLE persons; -- `+"`🦔`"
	env := newFunnelEnv(t)
	p := env.project(t, []reference.Event{
		analysistest.Fev("h1", first, analysistest.Mar(2, 9), bkey, `O'Brien`, key, val), analysistest.Fev("h1", second, analysistest.Mar(3, 9), key, val),
		analysistest.Fev("h2", first, analysistest.Mar(2, 10), bkey, "tab\there", key, "other"), analysistest.Fev("h2", second, analysistest.Mar(4, 9), key, val),
		analysistest.Fev("h3", first, analysistest.Mar(3, 10), bkey, `O'Brien`, key, val), analysistest.Fev("h3", second, analysistest.Mar(4, 10), key, "other"),
	})
	cond := func(k, v, op string) map[string]any { return map[string]any{"key": k, "value": v, "operator": op} }
	retention := func(target, returning map[string]any, extra map[string]any) (counts [][]int, values []string, urls []string) {
		t.Helper()
		body := map[string]any{"target_entity": target, "returning_entity": returning, "total_intervals": 3, "date_to": "2026-03-04"}
		for k, v := range extra {
			body[k] = v
		}
		var rows []struct {
			Values []struct {
				Count     int    `json:"count"`
				PeopleURL string `json:"people_url"`
			} `json:"values"`
			BreakdownValue *string `json:"breakdown_value"`
		}
		p.result(t, "retention", body, &rows)
		for _, r := range rows {
			var c []int
			for _, v := range r.Values {
				c = append(c, v.Count)
				urls = append(urls, v.PeopleURL)
			}
			counts = append(counts, c)
			if r.BreakdownValue != nil {
				values = append(values, *r.BreakdownValue)
			}
		}
		return counts, values, urls
	}
	firstE := map[string]any{"id": first, "type": "events", "custom_name": custom}
	t.Run("retention: event names, returning_entity properties, custom_name", func(t *testing.T) {
		// Cohort 2 March: h1 and h2; h1's second event of 3 March and h2's
		// of 4 March have key = val. Cohort 3 March: h3, whose second
		// event has another value.
		returning := map[string]any{"id": second, "custom_name": custom, "properties": []any{cond(key, val, "exact")}}
		got, _, urls := retention(firstE, returning, nil)
		if !reflect.DeepEqual(got, [][]int{{2, 1, 1}, {1, 0}, {0}}) {
			t.Fatalf("%v", got)
		}
		// The cell (2 March, 1 day later) lists h1, through its URL.
		if people, count := p.follow(t, urls[1]); !reflect.DeepEqual(people, []string{"h1"}) || count != 1 {
			t.Fatalf("%v %d", people, count)
		}
	})
	t.Run("retention: target_entity properties and global properties with hostile keys and values", func(t *testing.T) {
		// Targets with key = val: h1 (2 March) and h3 (3 March), each back
		// the next day; the global condition drops h2's first event only.
		target := map[string]any{"id": first, "properties": []any{cond(key, val, "exact")}}
		got, _, _ := retention(target, map[string]any{"id": second}, map[string]any{"properties": []any{cond(bkey, "tab\there", "is_not")}})
		if !reflect.DeepEqual(got, [][]int{{1, 1, 0}, {1, 1}, {0}}) {
			t.Fatalf("%v", got)
		}
	})
	t.Run("retention: a hostile breakdown key, its values returned as stored", func(t *testing.T) {
		// O'Brien: h1 (2 March) and h3 (3 March); tab: h2 (2 March).
		got, values, urls := retention(firstE, map[string]any{"id": second}, map[string]any{"breakdown": bkey})
		want := [][]int{{1, 1, 0}, {1, 1}, {0}, {1, 0, 1}, {0, 0}, {0}}
		wantValues := []string{`O'Brien`, `O'Brien`, `O'Brien`, "tab\there", "tab\there", "tab\there"}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(values, wantValues) {
			t.Fatalf("%v %q", got, values)
		}
		// The people URL carries the value back: tab's cohort of 2 March.
		if people, count := p.follow(t, urls[6]); !reflect.DeepEqual(people, []string{"h2"}) || count != 1 {
			t.Fatalf("%v %d", people, count)
		}
	})
	days := map[string]any{"date_from": "2026-03-02", "date_to": "2026-03-04"}
	t.Run("lifecycle: the custom name in the labels, hostile properties matched", func(t *testing.T) {
		// Active (first event with key = val): h1 on 2 March, h3 on 3
		// March, each new then dormant the next day.
		body := map[string]any{"insight": "LIFECYCLE", "events": []any{map[string]any{"id": first, "custom_name": custom,
			"properties": []any{cond(key, val, "exact")}}}, "properties": []any{cond(bkey, `'); DROP`, "is_not")}}
		for k, v := range days {
			body[k] = v
		}
		var got []analysistest.APITrendSeries
		p.result(t, "trend", body, &got)
		want := [][]float64{{1, 1, 0}, {0, 0, 0}, {0, 0, 0}, {0, -1, -1}}
		for i, st := range []string{"new", "returning", "resurrecting", "dormant"} {
			if got[i].Label != custom+" - "+st || !reflect.DeepEqual(got[i].Data, want[i]) {
				t.Fatalf("%s: %q %v, want %v", st, got[i].Label, got[i].Data, want[i])
			}
		}
	})
	t.Run("stickiness: event names, custom names and properties", func(t *testing.T) {
		// first: h1, h2 (2 March) and h3 (3 March), one day each; second
		// with key = val: h1 (3 March) and h2 (4 March).
		body := map[string]any{"insight": "STICKINESS", "events": []any{firstE,
			map[string]any{"id": second, "properties": []any{cond(key, val, "exact")}}}}
		for k, v := range days {
			body[k] = v
		}
		var got []struct {
			analysistest.APIStickiness
			Action      map[string]any      `json:"action"`
			PersonsURLs []map[string]string `json:"persons_urls"`
		}
		p.result(t, "trend", body, &got)
		if len(got) != 2 || got[0].Label != custom || got[1].Label != second || got[0].Action["id"] != first ||
			!reflect.DeepEqual(got[0].Data, []float64{3, 0, 0}) || !reflect.DeepEqual(got[1].Data, []float64{2, 0, 0}) {
			t.Fatalf("%+v", got)
		}
		if people, count := p.follow(t, got[1].PersonsURLs[0]["url"]); !reflect.DeepEqual(people, []string{"h1", "h2"}) || count != 2 {
			t.Fatalf("%v %d", people, count)
		}
	})
}
