package querybuilder_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/querybuilder"
)

const march = `"date_from": "2026-03-05", "date_to": "2026-03-12"`

func wantSeries(t *testing.T, s querybuilder.TrendSeries, label string, days []string, data []float64) {
	t.Helper()
	if s.Label != label {
		t.Errorf("label %q, want %q", s.Label, label)
	}
	if strings.Join(s.Days, ",") != strings.Join(days, ",") {
		t.Errorf("days %v, want %v", s.Days, days)
	}
	if !sameNumbers(s.Data, data) {
		t.Errorf("data %v, want %v", s.Data, data)
	}
	if c := sum(data); !sameNumbers([]float64{s.Count}, []float64{c}) {
		t.Errorf("count %v, want %v", s.Count, c)
	}
}

func one(t *testing.T, res []querybuilder.TrendSeries) querybuilder.TrendSeries {
	t.Helper()
	if len(res) != 1 {
		t.Fatalf("%d series, want 1: %+v", len(res), res)
	}
	return res[0]
}

func TestTrendsResults(t *testing.T) {
	f := newFixture(t)
	ds := days("2026-03-05", "2026-03-12")

	t.Run("daily totals fall in the project's days across the DST change", func(t *testing.T) {
		s := one(t, f.run(t, `{"events": [{"id": "$pageview"}], `+march+`}`, 0))
		wantSeries(t, s, "$pageview", ds, perDay(ds, count))
		if s.Labels[0] != "5-Mar-2026" || s.Action["id"] != "$pageview" || s.Action["math"] != "total" {
			t.Errorf("labels %v action %v", s.Labels[:1], s.Action)
		}
		if len(s.PersonsURLs) != len(ds) || !strings.Contains(s.PersonsURLs[0]["url"], "entity_id=%24pageview") {
			t.Errorf("persons urls %v", s.PersonsURLs)
		}
	})

	weekly := func(weekStart time.Weekday) (keys []string, data []float64) {
		// Weeks of the range 1-14 March, the range rounded out to whole weeks.
		start := func(t time.Time) string {
			l := t.In(ny)
			back := (int(l.Weekday()) - int(weekStart) + 7) % 7
			return time.Date(l.Year(), l.Month(), l.Day()-back, 0, 0, 0, 0, time.UTC).Format("2006-01-02")
		}
		first, last := start(at(3, 1, 12, 0)), start(at(3, 14, 12, 0))
		n := map[string]float64{}
		for _, e := range fixtureEvents {
			if k := start(e.at); e.event == "$pageview" && k >= first && k <= last {
				n[k]++
			}
		}
		for d := first; d <= last; {
			keys = append(keys, d)
			data = append(data, n[d])
			x, _ := time.Parse("2006-01-02", d)
			d = x.AddDate(0, 0, 7).Format("2006-01-02")
		}
		return keys, data
	}
	for _, ws := range []time.Weekday{time.Sunday, time.Monday} {
		t.Run(fmt.Sprintf("weekly buckets start on %s", ws), func(t *testing.T) {
			keys, data := weekly(ws)
			s := one(t, f.run(t, `{"events": [{"id": "$pageview"}], "interval": "week", "date_from": "2026-03-01", "date_to": "2026-03-14"}`, int(ws)))
			wantSeries(t, s, "$pageview", keys, data)
		})
	}

	t.Run("monthly buckets put 31 March 23:30 EDT in March", func(t *testing.T) {
		n := map[string]float64{}
		for _, e := range fixtureEvents {
			if l := e.at.In(ny); e.event == "$pageview" && l.Year() == 2026 && l.Month() >= 2 && l.Month() <= 4 {
				n[l.Format("2006-01")+"-01"]++
			}
		}
		s := one(t, f.run(t, `{"events": [{"id": "$pageview"}], "interval": "month", "date_from": "2026-02-01", "date_to": "2026-04-30"}`, 0))
		keys := []string{"2026-02-01", "2026-03-01", "2026-04-01"}
		wantSeries(t, s, "$pageview", keys, []float64{n[keys[0]], n[keys[1]], n[keys[2]]})
	})

	hourly := func(day time.Time, hours int) []float64 {
		data := make([]float64, hours)
		for _, e := range fixtureEvents {
			if h := int(e.at.Sub(day) / time.Hour); e.event == "$pageview" && !e.at.Before(day) && h < hours {
				data[h]++
			}
		}
		return data
	}
	t.Run("the spring-forward day has 23 hourly buckets", func(t *testing.T) {
		s := one(t, f.run(t, `{"events": [{"id": "$pageview"}], "interval": "hour", "date_from": "2026-03-08", "date_to": "2026-03-08"}`, 0))
		if len(s.Data) != 23 || s.Days[2] != "2026-03-08 03:00:00" || s.Labels[2] != "8-Mar-2026 03:00" {
			t.Fatalf("%d buckets, third %s %s", len(s.Data), s.Days[2], s.Labels[2])
		}
		if want := hourly(at(3, 8, 0, 0), 23); !sameNumbers(s.Data, want) {
			t.Fatalf("data %v, want %v", s.Data, want)
		}
	})
	t.Run("the fall-back day has 25 hourly buckets and keeps both 01:00s apart", func(t *testing.T) {
		s := one(t, f.run(t, `{"events": [{"id": "$pageview"}], "interval": "hour", "date_from": "2026-11-01", "date_to": "2026-11-01"}`, 0))
		want := hourly(time.Date(2026, 11, 1, 0, 0, 0, 0, ny), 25)
		if len(s.Data) != 25 || !sameNumbers(s.Data, want) || want[1] != 1 || want[2] != 1 {
			t.Fatalf("data %v, want %v", s.Data, want)
		}
		if s.Days[1] != "2026-11-01 01:00:00" || s.Days[2] != "2026-11-01 01:00:00" {
			t.Fatalf("days %v", s.Days[:3])
		}
	})

	// Each math over the same days, against its plain-Go definition.
	active := func(window int) func(int) float64 {
		return func(i int) float64 {
			end, _ := time.Parse("2006-01-02", ds[i])
			seen := map[string]bool{}
			for _, e := range fixtureEvents {
				d, _ := time.Parse("2006-01-02", localDay(e.at))
				if e.event == "$pageview" && !d.After(end) && d.After(end.AddDate(0, 0, -window)) {
					seen[person(e.id)] = true
				}
			}
			return float64(len(seen))
		}
	}
	byIndex := func(f func(int) float64) []float64 {
		out := make([]float64, len(ds))
		for i := range ds {
			out[i] = f(i)
		}
		return out
	}
	priceMath := func(f func([]float64) float64) []float64 {
		return perDay(ds, func(es []fev) float64 { return reduce(prices(es), f) })
	}
	actorMath := func(f func([]float64) float64) []float64 {
		return perDay(ds, func(es []fev) float64 { return reduce(perPersonCounts(es), f) })
	}
	q := func(p float64) func([]float64) float64 { return func(xs []float64) float64 { return quantile(xs, p) } }
	avg := func(xs []float64) float64 { return sum(xs) / float64(len(xs)) }
	maths := []struct {
		math, extra string
		want        []float64
	}{
		{"total", "", perDay(ds, count)},
		{"dau", "", perDay(ds, func(es []fev) float64 { return distinct(es, personKey) })},
		{"weekly_active", "", byIndex(active(7))},
		{"monthly_active", "", byIndex(active(30))},
		{"unique_session", "", perDay(ds, func(es []fev) float64 {
			return distinct(es, func(e fev) string { return propString(e, "$session_id") })
		})},
		{"unique_group", `, "math_group_type_index": 0`, perDay(ds, func(es []fev) float64 { return distinct(es, func(e fev) string { return propString(e, "$group_0") }) })},
		{"sum", `, "math_property": "price"`, priceMath(sum)},
		{"avg", `, "math_property": "price"`, priceMath(avg)},
		{"min", `, "math_property": "price"`, priceMath(slices.Min[[]float64])},
		{"max", `, "math_property": "price"`, priceMath(slices.Max[[]float64])},
		{"median", `, "math_property": "price"`, priceMath(q(0.5))},
		{"p75", `, "math_property": "price"`, priceMath(q(0.75))},
		{"p90", `, "math_property": "price"`, priceMath(q(0.9))},
		{"p95", `, "math_property": "price"`, priceMath(q(0.95))},
		{"p99", `, "math_property": "price"`, priceMath(q(0.99))},
		{"avg_count_per_actor", "", actorMath(avg)},
		{"min_count_per_actor", "", actorMath(slices.Min[[]float64])},
		{"max_count_per_actor", "", actorMath(slices.Max[[]float64])},
		{"median_count_per_actor", "", actorMath(q(0.5))},
		{"p75_count_per_actor", "", actorMath(q(0.75))},
		{"p90_count_per_actor", "", actorMath(q(0.9))},
		{"p95_count_per_actor", "", actorMath(q(0.95))},
		{"p99_count_per_actor", "", actorMath(q(0.99))},
	}
	for _, m := range maths {
		t.Run("math "+m.math, func(t *testing.T) {
			s := one(t, f.run(t, `{"events": [{"id": "$pageview", "math": "`+m.math+`"`+m.extra+`}], `+march+`}`, 0))
			wantSeries(t, s, "$pageview", ds, m.want)
		})
	}

	t.Run("active users follow their windows per week, month and hour, and under compare", func(t *testing.T) {
		// Persons with a $pageview on one of the `window` local days ending on `last`.
		activeDays := func(last string, window int) float64 {
			end, _ := time.Parse("2006-01-02", last)
			seen := map[string]bool{}
			for _, e := range fixtureEvents {
				d, _ := time.Parse("2006-01-02", localDay(e.at))
				if e.event == "$pageview" && !d.After(end) && d.After(end.AddDate(0, 0, -window)) {
					seen[person(e.id)] = true
				}
			}
			return float64(len(seen))
		}
		s := one(t, f.run(t, `{"events": [{"id": "$pageview", "math": "weekly_active"}], "interval": "week", "date_from": "2026-03-01", "date_to": "2026-03-14"}`, 0))
		wantSeries(t, s, "$pageview", []string{"2026-03-01", "2026-03-08"}, []float64{activeDays("2026-03-07", 7), activeDays("2026-03-14", 7)})
		s = one(t, f.run(t, `{"events": [{"id": "$pageview", "math": "monthly_active"}], "interval": "month", "date_from": "2026-02-01", "date_to": "2026-03-31"}`, 0))
		wantSeries(t, s, "$pageview", []string{"2026-02-01", "2026-03-01"}, []float64{activeDays("2026-02-28", 30), activeDays("2026-03-31", 30)})

		// Hourly: persons with an event in the 168 hours up to each hour's end.
		s = one(t, f.run(t, `{"events": [{"id": "$pageview", "math": "weekly_active"}], "interval": "hour", "date_from": "2026-03-08", "date_to": "2026-03-08"}`, 0))
		want := make([]float64, 23)
		for h := range want {
			start := at(3, 8, 0, 0).Add(time.Duration(h) * time.Hour)
			seen := map[string]bool{}
			for _, e := range fixtureEvents {
				if u := e.at.Truncate(time.Hour); e.event == "$pageview" && !u.After(start) && u.After(start.Add(-168*time.Hour)) {
					seen[person(e.id)] = true
				}
			}
			want[h] = float64(len(seen))
		}
		if !sameNumbers(s.Data, want) {
			t.Fatalf("hourly: %v, want %v", s.Data, want)
		}

		// By browser: the window counts a person under each browser they used in it.
		res := f.run(t, `{"events": [{"id": "$pageview", "math": "weekly_active"}], "breakdown": "$browser", `+march+`}`, 0)
		if len(res) != 6 {
			t.Fatalf("%d browser series", len(res))
		}
		for _, s := range res {
			v := s.BreakdownValue.(string)
			want := make([]float64, len(ds))
			for k, d := range ds {
				end, _ := time.Parse("2006-01-02", d)
				seen := map[string]bool{}
				for _, e := range fixtureEvents {
					b := propString(e, "$browser")
					if b == "" {
						b = querybuilder.BreakdownNull
					}
					day, _ := time.Parse("2006-01-02", localDay(e.at))
					if e.event == "$pageview" && b == v && !day.After(end) && day.After(end.AddDate(0, 0, -7)) {
						seen[person(e.id)] = true
					}
				}
				want[k] = float64(len(seen))
			}
			wantSeries(t, s, "$pageview - "+v, ds, want)
		}

		res = f.run(t, `{"events": [{"id": "$pageview", "math": "weekly_active"}], "compare": true, "date_from": "2026-03-09", "date_to": "2026-03-12"}`, 0)
		if len(res) != 2 {
			t.Fatalf("%d series", len(res))
		}
		for i, ds := range [][]string{days("2026-03-09", "2026-03-12"), days("2026-03-05", "2026-03-08")} {
			want := make([]float64, len(ds))
			for k, d := range ds {
				want[k] = activeDays(d, 7)
			}
			wantSeries(t, res[i], "$pageview", ds, want)
		}
	})

	t.Run("a breakdown keeps the top values by volume and folds the rest into other", func(t *testing.T) {
		browser := func(e fev) string {
			if b := propString(e, "$browser"); b != "" {
				return b
			}
			return querybuilder.BreakdownNull
		}
		volume := map[string]int{}
		for _, d := range ds {
			for _, e := range eventsOn("$pageview", d) {
				volume[browser(e)]++
			}
		}
		values := make([]string, 0, len(volume))
		for v := range volume {
			values = append(values, v)
		}
		sort.Slice(values, func(a, b int) bool {
			if volume[values[a]] != volume[values[b]] {
				return volume[values[a]] > volume[values[b]]
			}
			return values[a] < values[b]
		})
		for _, limit := range []int{2, 25} {
			top := map[string]bool{}
			for i, v := range values {
				top[v] = i < limit
			}
			fold := func(e fev) string {
				if b := browser(e); top[b] {
					return b
				}
				return querybuilder.BreakdownOther
			}
			want := values
			if limit < len(values) {
				want = append(append([]string{}, values[:limit]...), querybuilder.BreakdownOther)
			}
			res := f.run(t, fmt.Sprintf(`{"events": [{"id": "$pageview"}], "breakdown": "$browser", "breakdown_limit": %d, %s}`, limit, march), 0)
			if len(res) != len(want) {
				t.Fatalf("limit %d: %d series, want %v", limit, len(res), want)
			}
			for i, v := range want {
				s := res[i]
				if s.BreakdownValue == nil || s.BreakdownValue.(string) != v {
					t.Fatalf("limit %d: series %d is %v, want %s", limit, i, s.BreakdownValue, v)
				}
				wantSeries(t, s, "$pageview - "+v, ds, perDay(ds, func(es []fev) float64 {
					n := 0.0
					for _, e := range es {
						if fold(e) == v {
							n++
						}
					}
					return n
				}))
			}
		}
	})

	t.Run("sums and compared periods break down by the current period's top values", func(t *testing.T) {
		browser := func(e fev) string {
			if b := propString(e, "$browser"); b != "" {
				return b
			}
			return querybuilder.BreakdownNull
		}
		// The top value by event count in 9-12 March, by hand: Chrome has
		// four events, no other value more than one.
		cur, prev := days("2026-03-09", "2026-03-12"), days("2026-03-05", "2026-03-08")
		fold := func(e fev) string {
			if browser(e) == "Chrome" {
				return "Chrome"
			}
			return querybuilder.BreakdownOther
		}
		of := func(value string, f func([]fev) float64) func([]fev) float64 {
			return func(es []fev) float64 {
				var keep []fev
				for _, e := range es {
					if fold(e) == value {
						keep = append(keep, e)
					}
				}
				return f(keep)
			}
		}
		sumPrices := func(es []fev) float64 { return sum(prices(es)) }
		for _, tc := range []struct{ math, fn string }{{"total", "count"}, {"sum", "sum"}} {
			fn := count
			if tc.fn == "sum" {
				fn = sumPrices
			}
			res := f.run(t, `{"events": [{"id": "$pageview", "math": "`+tc.math+`", "math_property": "price"}], "breakdown": "$browser",
				"breakdown_limit": 1, "compare": true, "date_from": "2026-03-09", "date_to": "2026-03-12"}`, 0)
			if len(res) != 4 {
				t.Fatalf("%s: %d series", tc.math, len(res))
			}
			for i, want := range []struct {
				value string
				days  []string
				label string
			}{{"Chrome", cur, "current"}, {querybuilder.BreakdownOther, cur, "current"}, {"Chrome", prev, "previous"}, {querybuilder.BreakdownOther, prev, "previous"}} {
				s := res[i]
				if s.BreakdownValue.(string) != want.value || s.CompareLabel != want.label {
					t.Fatalf("%s: series %d is %s %s", tc.math, i, s.BreakdownValue.(string), s.CompareLabel)
				}
				wantSeries(t, s, "$pageview - "+want.value, want.days, perDay(want.days, of(want.value, fn)))
			}
		}
	})

	t.Run("a person breakdown reads current properties", func(t *testing.T) {
		res := f.run(t, `{"events": [{"id": "$pageview", "math": "dau"}], "breakdown": "plan", "breakdown_type": "person", `+march+`}`, 0)
		plan := func(e fev) string {
			if p := currentPlan[person(e.id)]; p != "" {
				return p
			}
			return querybuilder.BreakdownNull
		}
		seen := map[string]bool{}
		for _, s := range res {
			v := s.BreakdownValue.(string)
			seen[v] = true
			wantSeries(t, s, "$pageview - "+v, ds, perDay(ds, func(es []fev) float64 {
				return distinct(es, func(e fev) string {
					if plan(e) == v {
						return person(e.id)
					}
					return ""
				})
			}))
		}
		if len(seen) != 3 || !seen["pro"] || !seen["free"] || !seen[querybuilder.BreakdownNull] {
			t.Fatalf("values %v", seen)
		}
	})

	t.Run("compare adds the previous period of equal length", func(t *testing.T) {
		res := f.run(t, `{"events": [{"id": "$pageview"}], "compare": true, "date_from": "2026-03-09", "date_to": "2026-03-12"}`, 0)
		if len(res) != 2 {
			t.Fatalf("%d series", len(res))
		}
		cur, prev := days("2026-03-09", "2026-03-12"), days("2026-03-05", "2026-03-08")
		wantSeries(t, res[0], "$pageview", cur, perDay(cur, count))
		wantSeries(t, res[1], "$pageview", prev, perDay(prev, count))
		if !res[0].Compare || res[0].CompareLabel != "current" || res[1].CompareLabel != "previous" {
			t.Errorf("compare fields %v %q %q", res[0].Compare, res[0].CompareLabel, res[1].CompareLabel)
		}
		if strings.Join(res[1].Labels, ",") != "day 0,day 1,day 2,day 3" {
			t.Errorf("labels %v", res[1].Labels)
		}
		res = f.run(t, `{"events": [{"id": "$pageview"}], "compare": true, "compare_to": "-1w", "date_from": "2026-03-09", "date_to": "2026-03-12"}`, 0)
		weekBefore := days("2026-03-02", "2026-03-05")
		if len(res) != 2 {
			t.Fatalf("compare_to: %d series", len(res))
		}
		wantSeries(t, res[1], "$pageview", weekBefore, perDay(weekBefore, count))
	})

	t.Run("formulas combine the series bucket by bucket, dividing by zero as 0", func(t *testing.T) {
		pv := perDay(ds, count)
		su := make([]float64, len(ds))
		for i, d := range ds {
			su[i] = float64(len(eventsOn("signup", d)))
		}
		for formula, fn := range map[string]func(a, b float64) float64{
			"A + B * 2": func(a, b float64) float64 { return a + b*2 },
			"(B / A) * 100": func(a, b float64) float64 {
				if a == 0 {
					return 0
				}
				return b / a * 100
			},
			"A / B": func(a, b float64) float64 {
				if b == 0 {
					return 0
				}
				return a / b
			},
		} {
			want := make([]float64, len(ds))
			for i := range ds {
				want[i] = fn(pv[i], su[i])
			}
			s := one(t, f.run(t, `{"events": [{"id": "$pageview"}, {"id": "signup"}], "formula": "`+formula+`", `+march+`}`, 0))
			wantSeries(t, s, "Formula ("+formula+")", ds, want)
		}
	})

	t.Run("aggregated displays count over the whole range", func(t *testing.T) {
		var all []fev
		for _, d := range ds {
			all = append(all, eventsOn("$pageview", d)...)
		}
		daily := sum(perDay(ds, func(es []fev) float64 { return distinct(es, personKey) }))
		whole := distinct(all, personKey)
		if whole == daily {
			t.Fatal("the fixture cannot tell the whole range from the sum of days")
		}
		for _, tc := range []struct {
			display, math string
			want          float64
		}{
			{"BoldNumber", `"dau"`, whole},
			{"ActionsTable", `"total"`, float64(len(all))},
			{"ActionsPie", `"sum", "math_property": "price"`, sum(prices(all))},
			{"ActionsBarValue", `"p90_count_per_actor"`, quantile(perPersonCounts(all), 0.9)},
			{"WorldMap", `"median", "math_property": "price"`, quantile(prices(all), 0.5)},
			{"BoldNumber", `"weekly_active"`, active(7)(len(ds) - 1)},
		} {
			s := one(t, f.run(t, `{"events": [{"id": "$pageview", "math": `+tc.math+`}], "display": "`+tc.display+`", `+march+`}`, 0))
			if s.AggregatedValue == nil || !sameNumbers([]float64{*s.AggregatedValue}, []float64{tc.want}) || len(s.Data) != 0 {
				t.Errorf("%s %s: aggregated %v, want %v (data %v)", tc.display, tc.math, deref(s.AggregatedValue), tc.want, s.Data)
			}
		}
	})

	t.Run("cumulative runs the sums; distinct persons count once, on their first day", func(t *testing.T) {
		running := func(xs []float64) []float64 {
			out := make([]float64, len(xs))
			var r float64
			for i, x := range xs {
				r += x
				out[i] = r
			}
			return out
		}
		s := one(t, f.run(t, `{"events": [{"id": "$pageview"}], "display": "ActionsLineGraphCumulative", `+march+`}`, 0))
		if want := running(perDay(ds, count)); !sameNumbers(s.Data, want) {
			t.Errorf("total: %v, want %v", s.Data, want)
		}
		seen := map[string]bool{}
		firsts := perDay(ds, func(es []fev) float64 {
			n := 0.0
			for _, e := range es {
				if !seen[person(e.id)] {
					seen[person(e.id)] = true
					n++
				}
			}
			return n
		})
		s = one(t, f.run(t, `{"events": [{"id": "$pageview", "math": "dau"}], "display": "ActionsLineGraphCumulative", `+march+`}`, 0))
		if want := running(firsts); !sameNumbers(s.Data, want) {
			t.Errorf("dau: %v, want %v", s.Data, want)
		}
	})

	t.Run("person property filters see properties after every $set", func(t *testing.T) {
		for _, plan := range []string{"pro", "free"} {
			s := one(t, f.run(t, `{"events": [{"id": "$pageview"}], "properties": [{"key": "plan", "value": "`+plan+`", "type": "person"}], `+march+`}`, 0))
			wantSeries(t, s, "$pageview", ds, perDay(ds, func(es []fev) float64 {
				n := 0.0
				for _, e := range es {
					if currentPlan[person(e.id)] == plan {
						n++
					}
				}
				return n
			}))
		}
	})

	t.Run("filter_test_accounts drops the project's test accounts", func(t *testing.T) {
		notTest := func(es []fev) float64 {
			n := 0.0
			for _, e := range es {
				if !strings.Contains(currentEmail[person(e.id)], "@test.com") {
					n++
				}
			}
			return n
		}
		s := one(t, f.run(t, `{"events": [{"id": "$pageview"}], "filter_test_accounts": true, `+march+`}`, 0))
		wantSeries(t, s, "$pageview", ds, perDay(ds, notTest))
		if sum(perDay(ds, notTest)) == sum(perDay(ds, count)) {
			t.Fatal("the fixture has no test account events in range")
		}
	})

	t.Run("event property operators filter like their definitions", func(t *testing.T) {
		for _, tc := range []struct {
			cond string
			keep func(fev) bool
		}{
			{`{"key": "$browser", "value": ["Chrome", "Edge"]}`, func(e fev) bool { b := propString(e, "$browser"); return b == "Chrome" || b == "Edge" }},
			{`{"key": "$browser", "value": "Chrome", "operator": "is_not"}`, func(e fev) bool { return propString(e, "$browser") != "Chrome" }},
			{`{"key": "$browser", "value": "FIRE", "operator": "icontains"}`, func(e fev) bool { return strings.Contains(propString(e, "$browser"), "Fire") }},
			{`{"key": "$browser", "value": "^(Safari|Opera)$", "operator": "regex"}`, func(e fev) bool { b := propString(e, "$browser"); return b == "Safari" || b == "Opera" }},
			{`{"key": "price", "value": 8, "operator": "gte"}`, func(e fev) bool { p := prices([]fev{e}); return len(p) == 1 && p[0] >= 8 }},
			{`{"key": "price", "value": 8, "operator": "gte", "negation": true}`, func(e fev) bool { p := prices([]fev{e}); return !(len(p) == 1 && p[0] >= 8) }},
			{`{"key": "price", "operator": "is_not_set"}`, func(e fev) bool { _, ok := e.props["price"]; return !ok }},
			{`{"key": "$group_0", "operator": "is_set"}`, func(e fev) bool { _, ok := e.props["$group_0"]; return ok }},
		} {
			s := one(t, f.run(t, `{"events": [{"id": "$pageview"}], "properties": [`+tc.cond+`], `+march+`}`, 0))
			want := perDay(ds, func(es []fev) float64 {
				n := 0.0
				for _, e := range es {
					if tc.keep(e) {
						n++
					}
				}
				return n
			})
			if !sameNumbers(s.Data, want) {
				t.Errorf("%s: %v, want %v", tc.cond, s.Data, want)
			}
		}
	})
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
