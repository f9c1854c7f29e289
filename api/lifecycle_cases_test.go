package api

// Lifecycle worked by hand: the range's first bucket (it needs the bucket
// before), persons created before the range, a merged person's creation,
// dormant persons as negative numbers, months.

import (
	"reflect"
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// utcAt is the offset from analysistest.Fday of an hour, for events far from it.
func utcAt(y int, m time.Month, d, h int) time.Duration {
	return time.Date(y, m, d, h, 0, 0, 0, time.UTC).Sub(analysistest.Fday)
}

func TestLifecycleByHand(t *testing.T) {
	t.Parallel()
	env := newFunnelEnv(t)
	events := []reference.Event{
		analysistest.Fev("u7", "A", utcAt(2025, 12, 15, 9)), analysistest.Fev("u7", "A", utcAt(2026, 1, 10, 9)),
		analysistest.Fev("a4", "X", utcAt(2026, 2, 20, 9)),
		analysistest.Fev("u1", "X", utcAt(2026, 2, 25, 9)),
		analysistest.Fev("u1", "A", analysistest.Mar(1, 9)), analysistest.Fev("u5", "A", analysistest.Mar(1, 10)), analysistest.Fev("u3", "X", analysistest.Mar(1, 11)),
		analysistest.Fev("u1", "A", analysistest.Mar(2, 9)), analysistest.Fev("u2", "A", analysistest.Mar(2, 10)), analysistest.Fev("u3", "A", analysistest.Mar(2, 11)),
		analysistest.Fev("u2", "A", analysistest.Mar(3, 9)), analysistest.Fev("u4", "A", analysistest.Mar(3, 10)), analysistest.Fident("u4", "a4", analysistest.Mar(3, 11)),
		analysistest.Fev("u1", "A", analysistest.Mar(4, 9)),
		analysistest.Fev("u6", "A", analysistest.Mar(5, 24)-time.Second), analysistest.Fev("u6", "A", analysistest.Mar(6, 0)),
	}
	p := env.project(t, events)
	ask := func(extra map[string]any) map[string][]float64 {
		t.Helper()
		body := map[string]any{"insight": "LIFECYCLE", "events": []any{map[string]any{"id": "A"}}}
		for k, v := range extra {
			body[k] = v
		}
		var got []analysistest.APITrendSeries
		p.result(t, "trend", body, &got)
		out := map[string][]float64{}
		for i, s := range got {
			if s.Status != []string{"new", "returning", "resurrecting", "dormant"}[i] || s.Label != "A - "+s.Status {
				t.Fatalf("series %d: %s %q", i, s.Status, s.Label)
			}
			sum := 0.0
			for _, v := range s.Data {
				sum += v
			}
			if sum != s.Count {
				t.Fatalf("%s: count %v, data %v", s.Status, s.Count, s.Data)
			}
			out[s.Status] = s.Data
		}
		return out
	}
	t.Run("days 2 to 5 March, 1 March being the bucket before", func(t *testing.T) {
		// 2 March: u1 did A on 1 March too (returning, not resurrecting:
		// the bucket before is read); u2's first event (new); u3 was
		// created on 1 March by X, so A on 2 March is not new and, A not
		// being done on 1 March, resurrecting; u5 did A on 1 March only
		// (dormant).
		// 3 March: u2 returning; u4 did A first as u4 but merged a4, whose
		// X of 20 February is the person's creation: resurrecting, not
		// new; u1 and u3 dormant.
		// 4 March: u1 resurrecting; u2 and u4 dormant.
		// 5 March: u6 at 23:59:59 (new; their A of 6 March is outside);
		// u1 dormant. u7 is active in none of these days.
		want := map[string][]float64{"new": {1, 0, 0, 1}, "returning": {1, 1, 0, 0}, "resurrecting": {1, 1, 1, 0}, "dormant": {-1, -2, -2, -1}}
		if got := ask(map[string]any{"date_from": "2026-03-02", "date_to": "2026-03-05"}); !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
	t.Run("months January to March, December being the month before", func(t *testing.T) {
		// January: u7 did A in December too: returning. February: u7
		// dormant; no one did A. March: u2, u3, u5, u6 were created in
		// March (new); u1 (created 25 February) and u4 (merged, created
		// 20 February) did not do A in February: resurrecting.
		want := map[string][]float64{"new": {0, 0, 4}, "returning": {1, 0, 0}, "resurrecting": {0, 0, 2}, "dormant": {0, -1, 0}}
		if got := ask(map[string]any{"date_from": "2026-01-01", "date_to": "2026-03-31", "interval": "month"}); !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
	t.Run("every status's people URL lists the people counted", func(t *testing.T) {
		var got []struct {
			Data        []float64           `json:"data"`
			PersonsURLs []map[string]string `json:"persons_urls"`
		}
		p.result(t, "trend", map[string]any{"insight": "LIFECYCLE", "events": []any{map[string]any{"id": "A"}},
			"date_from": "2026-03-02", "date_to": "2026-03-05"}, &got)
		// Status and day -> the people counted there, by hand as above.
		want := map[[2]int][]string{
			{0, 0}: {"u2"}, {0, 3}: {"u6"}, {1, 0}: {"u1"}, {1, 1}: {"u2"}, {2, 0}: {"u3"}, {2, 1}: {"a4,u4"}, {2, 2}: {"u1"},
			{3, 0}: {"u5"}, {3, 1}: {"u1", "u3"}, {3, 2}: {"a4,u4", "u2"}, {3, 3}: {"u1"},
		}
		for s, series := range got {
			for b, u := range series.PersonsURLs {
				people, count := p.follow(t, u["url"])
				w := want[[2]int{s, b}]
				if !reflect.DeepEqual(people, w) && !(len(people) == 0 && len(w) == 0) || count != len(w) ||
					float64(count) != max(series.Data[b], -series.Data[b]) {
					t.Fatalf("status %d day %d: %v (%d), want %v, shown %v", s, b, people, count, w, series.Data[b])
				}
			}
		}
	})
}
