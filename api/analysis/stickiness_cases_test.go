package analysis_test

// Stickiness worked by hand: the range's edges, several entities, compare,
// groups (unique_group and aggregation_group_type_index), and the hour
// that a DST change skips in America/New_York.

import (
	"reflect"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

func TestStickinessByHand(t *testing.T) {
	env := newFunnelEnv(t)
	const sec = time.Second
	org := func(o, team string) []string {
		kv := []string{"$group_1", o}
		if team != "" {
			kv = append(kv, "$group_2", team)
		}
		return kv
	}
	p := env.project(t, []reference.Event{
		analysistest.Fev("s5", "A", analysistest.Mar(-1, 9)), analysistest.Fev("s5", "A", analysistest.Mar(0, 9)), // 27 and 28 February
		analysistest.Fev("s2", "A", analysistest.Mar(2, 0)-sec), analysistest.Fev("s2", "A", analysistest.Mar(3, 12)), analysistest.Fev("s2", "A", analysistest.Mar(5, 0)),
		analysistest.Fev("s1", "A", analysistest.Mar(2, 0)), analysistest.Fev("s1", "A", analysistest.Mar(5, 0)-sec), analysistest.Fev("s1", "B", analysistest.Mar(4, 9)),
		analysistest.Fev("s3", "A", analysistest.Mar(2, 10)), analysistest.Fev("s3", "A", analysistest.Mar(2, 11)), analysistest.Fev("s3", "A", analysistest.Mar(3, 10)), analysistest.Fev("s3", "A", analysistest.Mar(4, 10)),
		analysistest.Fev("s4", "B", analysistest.Mar(2, 10)), analysistest.Fev("s4", "B", analysistest.Mar(3, 10)),
		analysistest.Fev("g1", "A", analysistest.Mar(2, 10), org("o1", "t1")...), analysistest.Fev("g1", "A", analysistest.Mar(3, 10), org("o1", "t2")...),
		analysistest.Fev("g2", "A", analysistest.Mar(3, 11), org("o1", "t1")...), analysistest.Fev("g2", "A", analysistest.Mar(4, 11), org("o2", "t1")...),
		analysistest.Fev("g3", "A", analysistest.Mar(4, 12), org("o3", "")...),
	})
	ask := func(body map[string]any) []analysistest.APIStickiness {
		t.Helper()
		body["insight"] = "STICKINESS"
		if body["date_from"] == nil {
			body["date_from"], body["date_to"] = "2026-03-02", "2026-03-04"
		}
		var got []analysistest.APIStickiness
		p.result(t, "trend", body, &got)
		return got
	}
	data := func(ss []analysistest.APIStickiness) [][]float64 {
		var out [][]float64
		for _, s := range ss {
			sum := 0.0
			for _, v := range s.Data {
				sum += v
			}
			if sum != s.Count {
				t.Fatalf("%s: count %v, data %v", s.Label, s.Count, s.Data)
			}
			out = append(out, s.Data)
		}
		return out
	}
	a, b := map[string]any{"id": "A"}, map[string]any{"id": "B"}
	t.Run("days 2 to 4 March: the range's first and last instants count, the instants beside them do not", func(t *testing.T) {
		// A: s1 at 00:00:00 on 2 March and 23:59:59 on 4 March (2 days);
		// s2 on 3 March only (23:59:59 on 1 March and 00:00 on 5 March
		// are outside: 1 day); s3 all three days, twice on 2 March (3);
		// g1 2 and 3 March, g2 3 and 4 March (2 each); g3 4 March (1).
		// B: s4 2 and 3 March (2), s1 4 March (1).
		got := ask(map[string]any{"events": []any{a, b}})
		if !reflect.DeepEqual(data(got), [][]float64{{2, 3, 1}, {1, 1, 0}}) || got[0].Label != "A" || got[1].Label != "B" ||
			!reflect.DeepEqual(got[0].Days, []int{1, 2, 3}) || !reflect.DeepEqual(got[0].Labels, []string{"1 day", "2 days", "3 days"}) {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("compare adds the three days before, each entity's current then previous", func(t *testing.T) {
		// 27 February to 1 March: s5 on 27 and 28 February (2 days), s2
		// at 23:59:59 on 1 March (1 day); no B.
		got := ask(map[string]any{"events": []any{a, b}, "compare": true})
		if !reflect.DeepEqual(data(got), [][]float64{{2, 3, 1}, {1, 1, 0}, {1, 1, 0}, {0, 0, 0}}) ||
			got[0].CompareLabel != "current" || got[1].CompareLabel != "previous" || got[3].Label != "B" {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("groups: unique_group counts the entity's group type, aggregation_group_type_index the others", func(t *testing.T) {
		// Teams ($group_2): t1 on 2, 3 and 4 March (3 days), t2 on 3
		// March (1); g3's event has no team. Organizations ($group_1): o1
		// on 2 and 3 March (2), o2 and o3 on 4 March (1 each); s1 to s3
		// have none and are not counted.
		got := ask(map[string]any{"aggregation_group_type_index": 1, "events": []any{
			map[string]any{"id": "A", "math": "unique_group", "math_group_type_index": 2}, a}})
		if !reflect.DeepEqual(data(got), [][]float64{{1, 0, 1}, {2, 1, 0}}) {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("other maths are ignored: persons are counted", func(t *testing.T) {
		got := ask(map[string]any{"events": []any{map[string]any{"id": "A", "math": "sum", "math_property": "x"}}})
		if !reflect.DeepEqual(data(got), [][]float64{{2, 3, 1}}) {
			t.Fatalf("%+v", got)
		}
	})
}

// In America/New_York, 8 March 2026 has no 02:00: from 00:00 to 04:00 the
// range's hours are 00:00, 01:00 (EST), 03:00 and 04:00 (EDT), the last
// up to date_to.
func TestStickinessCountsTheHoursOfADSTChange(t *testing.T) {
	env := newFunnelEnv(t)
	utc := func(h, m int) time.Duration {
		return time.Date(2026, 3, 8, h, m, 0, 0, time.UTC).Sub(analysistest.Fday)
	}
	p := env.project(t, []reference.Event{
		// d1: 00:30 EST, 01:59 EST, 03:00 EDT: 3 hours.
		analysistest.Fev("d1", "A", utc(5, 30)), analysistest.Fev("d1", "A", utc(6, 59)), analysistest.Fev("d1", "A", utc(7, 0)),
		// d2: 01:10 and 01:50 EST, one hour.
		analysistest.Fev("d2", "A", utc(6, 10)), analysistest.Fev("d2", "A", utc(6, 50)),
		// d3: 03:59 EDT; 23:59 EST on 7 March and 04:30 EDT are outside
		// (date_to is the instant 04:00 with hours): 1 hour.
		analysistest.Fev("d3", "A", utc(7, 59)), analysistest.Fev("d3", "A", utc(4, 59)), analysistest.Fev("d3", "A", utc(8, 30)),
		// d4: every hour, on the hour, 04:00 EDT being date_to: 4 hours.
		analysistest.Fev("d4", "A", utc(5, 0)), analysistest.Fev("d4", "A", utc(6, 0)), analysistest.Fev("d4", "A", utc(7, 0)), analysistest.Fev("d4", "A", utc(8, 0)),
		// After the range (05:00 EDT).
		analysistest.Fev("d4", "A", utc(9, 0)),
	})
	analysistest.SetCalendar(t, p, "America/New_York", 0)
	var got []analysistest.APIStickiness
	p.result(t, "trend", map[string]any{"insight": "STICKINESS", "events": []any{map[string]any{"id": "A"}}, "interval": "hour",
		"date_from": "2026-03-08T00:00:00", "date_to": "2026-03-08T04:00:00"}, &got)
	if len(got) != 1 || !reflect.DeepEqual(got[0].Data, []float64{2, 0, 1, 1}) ||
		!reflect.DeepEqual(got[0].Labels, []string{"1 hour", "2 hours", "3 hours", "4 hours"}) {
		t.Fatalf("%+v", got)
	}
}
