package querybuilder

import (
	"testing"
	"time"
)

func TestBudgetsOfLifecycleAndTimeToConvert(t *testing.T) {
	env := Env{Project: Project{ID: 1, Timezone: "UTC"}, Now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Schema: DefaultSchema()}
	t.Run("the largest lifecycle, 9 984 hourly buckets, is 39 936 numbers: within it", func(t *testing.T) {
		// The range's bucket cap (10 000) comes first: the budget cannot
		// refuse a lifecycle while the cap stays under 25 000 buckets.
		q, err := ParseLifecycle(ParseQuery(map[string][]string{"insight": {"LIFECYCLE"}, "interval": {"hour"},
			"date_from": {"2025-01-01"}, "date_to": {"2026-02-20"}, "events": {`[{"id": "e"}]`}}), env)
		if err != nil {
			t.Fatal(err)
		}
		if n := q.Range.count() * len(lifecycleStatuses); n > MaxResultCells || n < 39_000 {
			t.Fatalf("%d numbers", n)
		}
	})
	t.Run("a daily lifecycle over a year is within it", func(t *testing.T) {
		if _, err := ParseLifecycle(ParseQuery(map[string][]string{"insight": {"LIFECYCLE"}, "interval": {"day"},
			"date_from": {"-365d"}, "events": {`[{"id": "e"}]`}}), env); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("time to convert at the most bins is within it", func(t *testing.T) {
		q := &FunnelQuery{Viz: VizTimeToConvert, BinCount: maxFunnelBins}
		if err := q.budget(); err != nil {
			t.Fatal(err)
		}
		q.BinCount = 0
		if err := q.timesBudget(); err != nil {
			t.Fatal(err)
		}
	})
}
