package reference

// A brute-force evaluator of the funnel semantics decided in
// .scratch/funnel-semantics.md, written from the text alone and with no
// SQL in sight: it is the oracle the funnel tests compare the server
// with. It walks each person's events in Go, one attempt at a time, and
// favours being obviously right over being fast.

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

const (
	Null  = "$$_posthog_breakdown_null_$$"
	Other = "$$_posthog_breakdown_other_$$"
)

// Event is one event as sent to /batch/. An $identify event merges
// Props["$anon_distinct_id"] into its DistinctID; Props["$set"] sets person
// properties.
type Event struct {
	UUID, DistinctID, Event string
	At                      time.Time
	Props                   map[string]any
}

// Step is one funnel step (or exclusion): an event name, or any event
// when Any, and exact-match event property conditions.
type Step struct {
	Event string
	Any   bool
	Props map[string]string
	// Optional is a step the conversion may skip (optionalInFunnel).
	Optional bool
}

func (s Step) Matches(e Event) bool {
	if !s.Any && e.Event != s.Event {
		return false
	}
	for k, v := range s.Props {
		if String(e.Props[k]) != v {
			return false
		}
	}
	return true
}

// key says when two step definitions are identical (unordered funnels
// need m distinct events for a definition repeated m times).
func (s Step) Key() string {
	keys := make([]string, 0, len(s.Props))
	for k := range s.Props {
		keys = append(keys, fmt.Sprintf("%q=%q", k, s.Props[k]))
	}
	sort.Strings(keys)
	return fmt.Sprintf("%v|%q|%s", s.Any, s.Event, strings.Join(keys, ","))
}

type Exclusion struct {
	Event    string
	From, To int
}

// Funnel is a funnel request as the reference reads it.
type Funnel struct {
	Steps []Step
	Order string // ordered (default), strict, unordered
	// Window: WindowDays > 0 overrides Interval (default 14) x Unit (default day).
	WindowInterval int
	WindowUnit     string
	WindowDays     int
	// DateFrom, DateTo are ISO dates; with interval=day the range is
	// [DateFrom 00:00, DateTo+1 00:00) in Loc (nil = UTC).
	DateFrom, DateTo string
	Loc              *time.Location
	// Properties are global exact-match event property filters.
	Properties      map[string]string
	Exclusions      []Exclusion
	Breakdown       string
	BreakdownType   string // event (default) or person
	Attribution     string // first_touch (default), last_touch, step
	AttributionStep int
	BreakdownLimit  int // 0 = 10
	FromStep        int
	ToStep          int // 0 = last (a to step is always after the from step)
	// GroupIndex k > 0 makes the actor the event's $group_k value instead of
	// the person (events without it are not read).
	GroupIndex int
}

func (f Funnel) order() string {
	if f.Order == "" {
		return "ordered"
	}
	return f.Order
}

// Location is the funnel's time zone, UTC when it has none.
func (f Funnel) Location() *time.Location {
	if f.Loc == nil {
		return time.UTC
	}
	return f.Loc
}

func (f Funnel) LastStep() int {
	if f.ToStep <= 0 {
		return len(f.Steps) - 1
	}
	return f.ToStep
}

// window is the conversion window as a duration, by the spec's table.
func (f Funnel) Window() time.Duration {
	day := 24 * time.Hour
	if f.WindowDays > 0 {
		return time.Duration(f.WindowDays) * day
	}
	n := f.WindowInterval
	if n == 0 {
		n = 14
	}
	unit := map[string]time.Duration{"second": time.Second, "minute": time.Minute, "hour": time.Hour,
		"day": day, "week": 7 * day, "month": 30 * day}[strings.ToLower(f.WindowUnit)]
	if f.WindowUnit == "" {
		unit = day
	}
	return time.Duration(n) * unit
}

func (f Funnel) DateRange() (from, to time.Time) {
	d1, err1 := time.ParseInLocation("2006-01-02", f.DateFrom, f.Location())
	d2, err2 := time.ParseInLocation("2006-01-02", f.DateTo, f.Location())
	if err1 != nil || err2 != nil {
		panic(fmt.Sprintf("reference: bad dates %q %q", f.DateFrom, f.DateTo))
	}
	return d1, d2.AddDate(0, 0, 1)
}

// Person is one person's read events (sorted by time, then uuid text)
// and the counted attempt: Path[j] is the position of step j's event, -1
// for an optional step the attempt skipped; the path ends at the
// furthest step reached.
type Person struct {
	ID       string
	Events   []Event
	Path     []int
	Excluded bool
	Value    string // breakdown value
}

func (p *Person) Level() int { return len(p.Path) }

// reached reports whether the counted attempt has step j.
func (p *Person) Reached(j int) bool { return j < len(p.Path) && p.Path[j] >= 0 }

// seconds between the events at positions i and j (j later).
func (p *Person) Seconds(i, j int) float64 {
	return float64(p.Events[j].At.Sub(p.Events[i].At).Microseconds()) / 1e6
}

// Identities maps every distinct id to its person through $identify
// merges, and gives each person's properties ($set in send order).
func Identities(all []Event) (personOf func(string) string, props map[string]map[string]any) {
	parent := map[string]string{}
	var find func(string) string
	find = func(id string) string {
		p, ok := parent[id]
		if !ok || p == id {
			return id
		}
		root := find(p)
		parent[id] = root
		return root
	}
	for _, e := range all {
		if e.Event != "$identify" {
			continue
		}
		if anon, ok := e.Props["$anon_distinct_id"].(string); ok && anon != "" {
			a, b := find(anon), find(e.DistinctID)
			if a != b {
				parent[a] = b
			}
		}
	}
	props = map[string]map[string]any{}
	for _, e := range all {
		set, ok := e.Props["$set"].(map[string]any)
		if !ok {
			continue
		}
		p := find(e.DistinctID)
		if props[p] == nil {
			props[p] = map[string]any{}
		}
		for k, v := range set {
			props[p][k] = v
		}
	}
	return find, props
}

// read groups the events the funnel reads (in the date range, passing the
// global filters) by person, each person's sorted by (time, uuid text).
func (f Funnel) Read(all []Event) map[string]*Person {
	personOf, _ := Identities(all)
	from, to := f.DateRange()
	groups := GroupsOf(all)
	out := map[string]*Person{}
	for _, e := range all {
		if e.At.Before(from) || !e.At.Before(to) {
			continue
		}
		if !(Step{Any: true, Props: f.Properties}).Matches(e) {
			continue
		}
		id := personOf(e.DistinctID)
		if f.GroupIndex > 0 {
			if id = groups.Key(e, f.GroupIndex); id == "" {
				continue
			}
		}
		if out[id] == nil {
			out[id] = &Person{ID: id}
		}
		out[id].Events = append(out[id].Events, e)
	}
	for _, p := range out {
		sort.Slice(p.Events, func(i, j int) bool {
			a, b := p.Events[i], p.Events[j]
			if !a.At.Equal(b.At) {
				return a.At.Before(b.At)
			}
			return strings.ToLower(a.UUID) < strings.ToLower(b.UUID)
		})
	}
	return out
}

func (f Funnel) InWindow(evs []Event, start, k int) bool {
	return evs[k].At.Sub(evs[start].At) <= f.Window()
}

// attempt is the path of the attempt starting at position start, or nil
// when no attempt starts there.
func (f Funnel) Attempt(evs []Event, start int) []int {
	if f.order() == "unordered" {
		return f.UnorderedAttempt(evs, start)
	}
	if f.hasOptional() {
		return f.optionalAttempt(evs, start)
	}
	if !f.Steps[0].Matches(evs[start]) {
		return nil
	}
	path := []int{start}
	for j := 1; j < len(f.Steps); j++ {
		next := -1
		if f.order() == "strict" {
			k := path[j-1] + 1
			if k < len(evs) && f.InWindow(evs, start, k) && f.Steps[j].Matches(evs[k]) {
				next = k
			}
		} else {
			for k := path[j-1] + 1; k < len(evs) && f.InWindow(evs, start, k); k++ {
				if f.Steps[j].Matches(evs[k]) {
					next = k
					break
				}
			}
		}
		if next < 0 {
			break
		}
		path = append(path, next)
	}
	return path
}

func (f Funnel) UnorderedAttempt(evs []Event, start int) []int {
	matchesAny := false
	for _, s := range f.Steps {
		matchesAny = matchesAny || s.Matches(evs[start])
	}
	if !matchesAny {
		return nil
	}
	var defs []Step
	m := map[string]int{}
	for _, s := range f.Steps {
		if m[s.Key()] == 0 {
			defs = append(defs, s)
		}
		m[s.Key()]++
	}
	var path []int
	for _, d := range defs {
		n := 0
		for k := start; k < len(evs) && f.InWindow(evs, start, k) && n < m[d.Key()]; k++ {
			if d.Matches(evs[k]) {
				path = append(path, k)
				n++
			}
		}
	}
	sort.Ints(path)
	return path
}

// counted is the attempt reaching the highest level, the latest started
// among those.
func (f Funnel) Counted(evs []Event) []int {
	var best []int
	for start := range evs {
		if p := f.Attempt(evs, start); p != nil && (best == nil || len(p) >= len(best)) {
			best = p
		}
	}
	return best
}

func (f Funnel) Excluded(p *Person) bool {
	evs, path := p.Events, p.Path
	for _, x := range f.Exclusions {
		if len(path) <= x.From {
			continue
		}
		end := -1
		if len(path) > x.To {
			end = path[x.To]
		}
		for k := path[x.From] + 1; k < len(evs); k++ {
			if end >= 0 && k >= end || end < 0 && !f.InWindow(evs, path[0], k) {
				break
			}
			if evs[k].Event == x.Event {
				return true
			}
		}
	}
	return false
}

// persons are the funnel's persons (entered and not excluded), sorted by
// id, each with its counted attempt and breakdown value.
func (f Funnel) Persons(all []Event) []*Person {
	_, props := Identities(all)
	var out []*Person
	for _, p := range f.Read(all) {
		p.Path = f.Counted(p.Events)
		if p.Path == nil {
			continue
		}
		if p.Excluded = f.Excluded(p); p.Excluded {
			continue
		}
		if f.Breakdown != "" {
			p.Value = f.BreakdownValue(p, props[p.ID])
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (f Funnel) BreakdownValue(p *Person, personProps map[string]any) string {
	var v string
	if f.BreakdownType == "person" {
		v = String(personProps[f.Breakdown])
	} else {
		at := p.Path[0]
		switch f.Attribution {
		case "last_touch":
			at = p.Path[len(p.Path)-1]
		case "step":
			at = -1
			if p.Reached(f.AttributionStep) {
				at = p.Path[f.AttributionStep]
			}
		}
		if at >= 0 {
			v = String(p.Events[at].Props[f.Breakdown])
		}
	}
	if v == "" {
		return Null
	}
	return v
}

func String(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}

// StepResult is what the reference expects of one step.
type StepResult struct {
	Count       int
	Avg, Median *float64
}

type Series struct {
	Value string
	Steps []StepResult
}

// stepsOf is the funnel's step list over the given persons.
func (f Funnel) stepsOf(ps []*Person) []StepResult {
	out := make([]StepResult, len(f.Steps))
	for i := range f.Steps {
		var times []float64
		for _, p := range ps {
			if p.Reached(i) {
				out[i].Count++
				if i > 0 {
					// From the required step before: an optional one may be skipped.
					times = append(times, p.Seconds(p.Path[f.prevRequired(i)], p.Path[i]))
				}
			}
		}
		if len(times) > 0 {
			avg, med := Mean(times), Quantile(times, 0.5)
			out[i].Avg, out[i].Median = &avg, &med
		}
	}
	return out
}

// stepResults is the result of a funnel without a breakdown.
func (f Funnel) StepResults(all []Event) []StepResult { return f.stepsOf(f.Persons(all)) }

// breakdownResults is the result of a funnel with a breakdown: one step
// list per value, ranked by step-1 count, the rest folded into the other
// bucket.
func (f Funnel) BreakdownResults(all []Event) []Series {
	ps := f.Persons(all)
	byValue := map[string][]*Person{}
	for _, p := range ps {
		byValue[p.Value] = append(byValue[p.Value], p)
	}
	var values []string
	for v := range byValue {
		values = append(values, v)
	}
	sort.Slice(values, func(i, j int) bool {
		a, b := len(byValue[values[i]]), len(byValue[values[j]])
		if a != b {
			return a > b
		}
		return values[i] < values[j]
	})
	limit := f.BreakdownLimit
	if limit == 0 {
		limit = 10
	}
	var out []Series
	var other []*Person
	for i, v := range values {
		if i < limit {
			out = append(out, Series{Value: v, Steps: f.stepsOf(byValue[v])})
		} else {
			other = append(other, byValue[v]...)
		}
	}
	if len(other) > 0 {
		out = append(out, Series{Value: Other, Steps: f.stepsOf(other)})
	}
	return out
}

// conversionTimes are, per person whose counted attempt reached ToStep,
// the seconds from FromStep to ToStep.
func (f Funnel) ConversionTimes(all []Event) []float64 {
	var out []float64
	for _, p := range f.Persons(all) {
		if p.Level() > f.LastStep() {
			out = append(out, p.Seconds(p.Path[f.FromStep], p.Path[f.LastStep()]))
		}
	}
	return out
}

// Bins are the time_to_convert bins of ts with binCount bins (0 = the
// default from the number of persons).
func Bins(ts []float64, binCount int) [][2]float64 {
	if len(ts) == 0 {
		return [][2]float64{}
	}
	if binCount == 0 {
		binCount = int(math.Ceil(math.Cbrt(float64(len(ts)))))
		binCount = max(1, min(90, binCount))
	}
	lo, hi := math.Floor(slices.Min(ts)), slices.Max(ts)
	width := math.Max(1, math.Ceil((hi-lo)/float64(binCount)))
	bins := make([][2]float64, binCount)
	for i := range bins {
		bins[i][0] = lo + float64(i)*width
	}
	for _, t := range ts {
		i := int(math.Floor((t - lo) / width))
		if i >= binCount {
			i = binCount - 1
		}
		bins[i][1]++
	}
	return bins
}

func Mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Quantile is numpy's default (linear) quantile.
func Quantile(xs []float64, q float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	pos := q * float64(len(s)-1)
	i := int(math.Floor(pos))
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}
