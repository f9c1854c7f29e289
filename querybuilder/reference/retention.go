package reference

// A brute-force evaluator of retention, lifecycle and stickiness as
// analytics.md defines them, written from the text with no SQL in sight:
// the oracle the tests of those kinds compare the server with. It
// walks each person's events in Go and favours being obviously right over
// being fast.

import (
	"sort"
	"time"
)

// Calendar is the project's calendar: its timezone and week start.
type Calendar struct {
	Loc       *time.Location
	WeekStart time.Weekday
}

// start is the start of the unit (hour, day, week, month) holding t.
func (c Calendar) Start(unit string, t time.Time) time.Time {
	t = t.In(c.Loc)
	y, m, d := t.Date()
	switch unit {
	case "hour":
		return t.Truncate(time.Minute).Add(-time.Duration(t.Minute()) * time.Minute)
	case "week":
		back := (int(t.Weekday()) - int(c.WeekStart) + 7) % 7
		return time.Date(y, m, d-back, 0, 0, 0, 0, c.Loc)
	case "month":
		return time.Date(y, m, 1, 0, 0, 0, 0, c.Loc)
	}
	return time.Date(y, m, d, 0, 0, 0, 0, c.Loc)
}

// add moves a unit start n units: hours elapse, the others are calendar
// units.
func (c Calendar) Add(unit string, t time.Time, n int) time.Time {
	y, m, d := t.In(c.Loc).Date()
	switch unit {
	case "hour":
		return t.Add(time.Duration(n) * time.Hour)
	case "week":
		return time.Date(y, m, d+7*n, 0, 0, 0, 0, c.Loc)
	case "month":
		return time.Date(y, m+time.Month(n), 1, 0, 0, 0, 0, c.Loc)
	}
	return time.Date(y, m, d+n, 0, 0, 0, 0, c.Loc)
}

// periods are n consecutive unit starts from first, and the end.
func (c Calendar) Periods(unit string, first time.Time, n int) []time.Time {
	out := []time.Time{first}
	for len(out) <= n {
		out = append(out, c.Add(unit, out[len(out)-1], 1))
	}
	return out
}

// PeriodIndex is the period of t among bounds (n periods, n+1 bounds), or -1.
func PeriodIndex(bounds []time.Time, t time.Time) int {
	for k := 0; k+1 < len(bounds); k++ {
		if !t.Before(bounds[k]) && t.Before(bounds[k+1]) {
			return k
		}
	}
	return -1
}

// EventsByPerson groups events by person (merges resolved), each
// person's sorted by time, then uuid text.
func EventsByPerson(all []Event) map[string][]Event {
	personOf, _ := Identities(all)
	out := map[string][]Event{}
	for _, e := range all {
		p := personOf(e.DistinctID)
		out[p] = append(out[p], e)
	}
	for _, evs := range out {
		sort.Slice(evs, func(a, b int) bool {
			if !evs[a].At.Equal(evs[b].At) {
				return evs[a].At.Before(evs[b].At)
			}
			return evs[a].UUID < evs[b].UUID
		})
	}
	return out
}

// Retention is a retention request as the reference reads it.
type Retention struct {
	Target, Returning string
	Period            string // hour, day, week, month
	Intervals         int
	FirstTime         bool
	DateTo            time.Time
	// Breakdown is an event property (the cohort-entry event's value) or,
	// with PersonBreakdown, a person property; Limit the top values.
	Breakdown       string
	PersonBreakdown bool
	Limit           int
	// Keep is the request's filters (properties, test accounts): the
	// events read are those it keeps, given the person's current
	// properties; TargetKeep and ReturningKeep are the entities' own
	// properties. Nil keeps every event. Extra is merged into the body.
	Keep, TargetKeep, ReturningKeep func(e Event, person map[string]any) bool
	Extra                           map[string]any
}

// Member is one person of one cohort: the breakdown value and whether
// they count in each cell of the cohort's row (0 or 1 per interval; the
// first is the cohort itself).
type Member struct {
	Person, Value string
	K             int
	Appearances   []int
}

// bounds are the window's periods: Intervals starts and the end.
func (r Retention) Bounds(cal Calendar) []time.Time {
	last := cal.Start(r.Period, r.DateTo)
	return cal.Periods(r.Period, cal.Add(r.Period, last, -(r.Intervals-1)), r.Intervals)
}

// members are every cohort's persons (a person once per cohort they are
// in), in no particular order.
func (r Retention) Members(all []Event, cal Calendar) []Member {
	bounds := r.Bounds(cal)
	_, props := Identities(all)
	keep := func(f func(Event, map[string]any) bool, e Event, person string) bool {
		return f == nil || f(e, props[person])
	}
	var out []Member
	for person, evs := range EventsByPerson(all) {
		cohorts := map[int]Event{} // period -> the cohort's entry event
		returns := map[int]bool{}
		firstSeen := false
		for _, e := range evs {
			if !e.At.Before(bounds[len(bounds)-1]) || !keep(r.Keep, e, person) {
				continue // after the window, or filtered out
			}
			k := PeriodIndex(bounds, e.At)
			if e.Event == r.Target && keep(r.TargetKeep, e, person) {
				switch {
				case r.FirstTime && !firstSeen:
					firstSeen = true // the first ever, maybe before the window (k = -1)
					cohorts[k] = e
				case !r.FirstTime && k >= 0:
					if _, ok := cohorts[k]; !ok {
						cohorts[k] = e
					}
				}
			}
			if e.Event == r.Returning && keep(r.ReturningKeep, e, person) && k >= 0 {
				returns[k] = true
			}
		}
		for k, entry := range cohorts {
			if k < 0 {
				continue
			}
			m := Member{Person: person, K: k}
			switch {
			case r.Breakdown == "":
			case r.PersonBreakdown:
				m.Value = String(props[person][r.Breakdown])
			default:
				m.Value = String(entry.Props[r.Breakdown])
			}
			if r.Breakdown != "" && m.Value == "" {
				m.Value = Null
			}
			for j := 0; k+j < r.Intervals; j++ {
				if j == 0 || returns[k+j] {
					m.Appearances = append(m.Appearances, 1)
				} else {
					m.Appearances = append(m.Appearances, 0)
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// rows are the result's rows in order.
func (r Retention) Rows(all []Event, cal Calendar) []RetentionRow {
	bounds := r.Bounds(cal)
	type cell struct{ k, j int }
	counts := map[string]map[cell]int{}
	volume := map[string]int{}
	for _, m := range r.Members(all, cal) {
		if counts[m.Value] == nil {
			counts[m.Value] = map[cell]int{}
		}
		volume[m.Value]++
		for j, a := range m.Appearances {
			counts[m.Value][cell{m.K, j}] += a
		}
	}
	values := []string{""}
	if r.Breakdown != "" {
		values = values[:0]
		for v := range volume {
			values = append(values, v)
		}
		sort.Slice(values, func(a, b int) bool {
			if volume[values[a]] != volume[values[b]] {
				return volume[values[a]] > volume[values[b]]
			}
			return values[a] < values[b]
		})
		if limit := max(r.Limit, 1); len(values) > limit {
			other := map[cell]int{}
			for _, v := range values[limit:] {
				for c, n := range counts[v] {
					other[c] += n
				}
			}
			values = append(values[:limit:limit], Other)
			counts[Other] = other
		}
	}
	var out []RetentionRow
	for _, v := range values {
		for k := 0; k < r.Intervals; k++ {
			row := RetentionRow{Value: v, Date: bounds[k]}
			for j := 0; k+j < r.Intervals; j++ {
				row.Counts = append(row.Counts, counts[v][cell{k, j}])
			}
			out = append(out, row)
		}
	}
	return out
}

// RetentionRow is one cohort's counts, per breakdown value.
type RetentionRow struct {
	Value  string
	Date   time.Time
	Counts []int
}

// Buckets are the buckets of a trends range: date_from rounded down and
// date_to up to their unit (hours: the hours holding them).
func Buckets(cal Calendar, unit string, from, to time.Time) []time.Time {
	first := cal.Start(unit, from)
	bounds := []time.Time{first}
	for bounds[len(bounds)-1].Before(to) || bounds[len(bounds)-1].Equal(to) {
		bounds = append(bounds, cal.Add(unit, bounds[len(bounds)-1], 1))
	}
	return bounds
}

// Lifecycle counts each status per bucket of [from, to]: new, returning,
// resurrecting, dormant (negative), by analytics.md's rules. A person's
// creation is their earliest event of any kind.
func Lifecycle(all []Event, cal Calendar, unit, event string, from, to time.Time) map[string][]int {
	bounds := Buckets(cal, unit, from, to)
	n := len(bounds) - 1
	before := cal.Add(unit, bounds[0], -1)
	all4 := append([]time.Time{before}, bounds...) // index 0: the bucket before
	out := map[string][]int{}
	for _, st := range []string{"new", "returning", "resurrecting", "dormant"} {
		out[st] = make([]int, n)
	}
	for _, evs := range EventsByPerson(all) {
		created := PeriodIndex(all4, evs[0].At)
		if evs[0].At.Before(before) {
			created = -1
		}
		active := map[int]bool{}
		for _, e := range evs {
			if e.Event == event {
				if k := PeriodIndex(all4, e.At); k >= 0 {
					active[k] = true
				}
			}
		}
		for b := 1; b <= n; b++ {
			switch {
			case active[b] && b == created:
				out["new"][b-1]++
			case active[b] && active[b-1]:
				out["returning"][b-1]++
			case active[b]:
				out["resurrecting"][b-1]++
			case active[b-1]:
				out["dormant"][b-1]--
			}
		}
	}
	return out
}

// Stickiness is data[k-1] = persons who did event in exactly k of the
// buckets of [from, to].
func Stickiness(all []Event, cal Calendar, unit, event string, from, to time.Time) []int {
	bounds := Buckets(cal, unit, from, to)
	data := make([]int, len(bounds)-1)
	for _, evs := range EventsByPerson(all) {
		active := map[int]bool{}
		for _, e := range evs {
			if e.Event == event && !e.At.Before(from) && !e.At.After(to) {
				active[PeriodIndex(bounds, e.At)] = true
			}
		}
		if len(active) > 0 {
			data[len(active)-1]++
		}
	}
	return data
}
