package querybuilder

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
)

// TrendSeries is one series of a trends result, in PostHog's shape.
type TrendSeries struct {
	// Action is the entity the series counts; null for a formula.
	Action map[string]any `json:"action"`
	Label  string         `json:"label"`
	// Count is the sum of the per-bucket values (with the cumulative
	// display, the last running total).
	Count  float64   `json:"count"`
	Data   []float64 `json:"data"`
	Days   []string  `json:"days"`
	Labels []string  `json:"labels"`
	// Filter is the request as it was run for this series' period.
	Filter map[string]any `json:"filter"`
	// BreakdownValue is the value: text, or the list of values of a
	// multiple breakdown.
	BreakdownValue any    `json:"breakdown_value,omitempty"`
	Compare        bool   `json:"compare,omitempty"`
	CompareLabel   string `json:"compare_label,omitempty"`
	// Status is a lifecycle series' status (new, returning, ...).
	Status string `json:"status,omitempty"`
	// AggregatedValue is the one number of an aggregated display.
	AggregatedValue *float64            `json:"aggregated_value,omitempty"`
	PersonsURLs     []map[string]string `json:"persons_urls"`
}

// TrendsResult is a trends analysis' series.
type TrendsResult []TrendSeries

// Table implements Result: one row per series (its label), one column
// per point (the first series' labels, else its days); aggregated
// displays have one value column instead.
func (r TrendsResult) Table() ([]string, [][]string) {
	header := []string{"series"}
	aggregated := len(r) > 0 && r[0].AggregatedValue != nil
	switch {
	case aggregated:
		header = append(header, "value")
	case len(r) > 0:
		labels := r[0].Labels
		if len(labels) == 0 {
			labels = r[0].Days
		}
		header = append(header, labels...)
	}
	rows := make([][]string, len(r))
	for k, s := range r {
		row := []string{s.Label}
		if aggregated {
			row = append(row, numberCell(s.AggregatedValue))
		}
		for _, d := range s.Data {
			row = append(row, numberCell(&d))
		}
		rows[k] = row
	}
	return header, rows
}

// numberCell is a number as a CSV cell, without exponent or trailing
// zeros; nil is empty.
func numberCell(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

type cell struct {
	series, period int
	breakdown      string
	bucket         string
}

// ShapeTrends turns the rows of BuildTrends' statement into series:
// zero-filled buckets, breakdown series by volume, the previous period
// after the current one with compare, the formula in place of the series
// when there is one.
func ShapeTrends(q *TrendsQuery, rows [][]any) (TrendsResult, error) {
	if q == nil || q.clock.loc == nil || q.Range.From.IsZero() {
		return nil, fmt.Errorf("querybuilder: ShapeTrends needs a request that ParseTrends validated")
	}
	sh := &shaper{q: q, values: make(map[cell]float64, len(rows)), deltas: map[int]map[string]*activeDeltas{}, periods: []DateRange{q.Range}}
	for n, r := range rows {
		if len(r) != len(trendsColumns) {
			return nil, fmt.Errorf("trends row %d: %d columns, want %d", n, len(r), len(trendsColumns))
		}
		s, err1 := asInt(r[0])
		p, err2 := asInt(r[1])
		bd, ok1 := r[2].(string)
		bk, ok2 := r[3].(string)
		v, err3 := asFloat(r[4])
		if err1 != nil || err2 != nil || err3 != nil || !ok1 || !ok2 || s < 0 || s >= len(q.Series) || p < 0 || p > 1 {
			return nil, fmt.Errorf("trends row %d: unexpected values %v", n, r)
		}
		if _, active := activeMath[q.Series[s].Math]; active && q.timeSeries() {
			sh.delta(s, bd).add(bk, v)
			continue
		}
		sh.values[cell{s, p, bd, bk}] += v
	}
	if q.Compare {
		sh.periods = append(sh.periods, q.Range.previous())
	}
	for _, r := range sh.periods {
		sh.buckets = append(sh.buckets, r.Buckets())
	}
	return sh.shape(), nil
}

type shaper struct {
	q          *TrendsQuery
	peopleBase string
	values     map[cell]float64
	// deltas hold the active-users series (by series, then breakdown
	// value): changes in the number of active actors per unit.
	deltas  map[int]map[string]*activeDeltas
	periods []DateRange
	buckets [][]Bucket
}

func (sh *shaper) delta(series int, bd string) *activeDeltas {
	m := sh.deltas[series]
	if m == nil {
		m = map[string]*activeDeltas{}
		sh.deltas[series] = m
	}
	d := m[bd]
	if d == nil {
		d = &activeDeltas{}
		m[bd] = d
	}
	return d
}

// activeDeltas are the changes in active actors at unit keys (local
// dates, or UTC hour starts: both sort as time does); the number active
// at a unit is the sum of the changes up to it.
type activeDeltas struct {
	keys   []string
	values []float64
	sums   []float64 // sums[n]: the first n changes, in key order
}

func (d *activeDeltas) add(key string, v float64) {
	d.keys = append(d.keys, key)
	d.values = append(d.values, v)
	d.sums = nil
}

// at is the number active at unit key.
func (d *activeDeltas) at(key string) float64 {
	if d.sums == nil {
		idx := make([]int, len(d.keys))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return d.keys[idx[a]] < d.keys[idx[b]] })
		keys := make([]string, len(idx))
		d.sums = make([]float64, len(idx)+1)
		for n, i := range idx {
			keys[n] = d.keys[i]
			d.sums[n+1] = d.sums[n] + d.values[i]
		}
		d.keys = keys
	}
	n := sort.Search(len(d.keys), func(i int) bool { return d.keys[i] > key })
	return d.sums[n]
}

// lastUnit is the key of a bucket's last unit: the bucket itself for
// hours and days, the last day of a week or month.
func (sh *shaper) lastUnit(b Bucket) string {
	switch sh.q.Interval {
	case IntervalHour, IntervalDay:
		return b.Key
	}
	return addDays(b.End.In(sh.q.clock.loc), -1).Format("2006-01-02")
}

// raw is one series' numbers before display transforms.
type raw struct {
	data []float64 // per bucket (time series)
	agg  float64   // aggregated displays
}

func (sh *shaper) raw(series, period int, bd string) raw {
	if !sh.q.timeSeries() {
		return raw{agg: sh.values[cell{series, period, bd, ""}]}
	}
	bs := sh.buckets[period]
	r := raw{data: make([]float64, len(bs))}
	if _, active := activeMath[sh.q.Series[series].Math]; active {
		if d := sh.deltas[series][bd]; d != nil {
			for k, b := range bs {
				r.data[k] = d.at(sh.lastUnit(b))
			}
		}
		return r
	}
	for k, b := range bs {
		r.data[k] = sh.values[cell{series, period, bd, b.Key}]
	}
	return r
}

func (r raw) volume() float64 {
	if r.data == nil {
		return r.agg
	}
	var sum float64
	for _, v := range r.data {
		sum += v
	}
	return sum
}

// has reports whether any of the series has rows for the value.
func (sh *shaper) has(series []int, bd string) bool {
	for _, s := range series {
		if sh.deltas[s][bd] != nil {
			return true
		}
	}
	for c := range sh.values {
		if c.breakdown == bd {
			for _, s := range series {
				if c.series == s {
					return true
				}
			}
		}
	}
	return false
}

// breakdownValues lists a series' breakdown values: by volume in the
// current period (then the previous), ties by value, "other" last.
func (sh *shaper) breakdownValues(series []int) []string {
	if sh.q.Breakdown == nil {
		return []string{""}
	}
	seen := map[string]bool{}
	for c := range sh.values {
		seen[c.breakdown] = true
	}
	for _, m := range sh.deltas {
		for bd := range m {
			seen[bd] = true
		}
	}
	volume := map[string][2]float64{}
	for bd := range seen {
		var v [2]float64
		for p := range sh.periods {
			for _, s := range series {
				v[p] += sh.raw(s, p, bd).volume()
			}
		}
		// A value of another series only: not one of these series'.
		if v[0] != 0 || v[1] != 0 || sh.has(series, bd) {
			volume[bd] = v
		}
	}
	out := make([]string, 0, len(volume))
	for bd := range volume {
		out = append(out, bd)
	}
	sort.Slice(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if (x == BreakdownOther) != (y == BreakdownOther) {
			return y == BreakdownOther
		}
		vx, vy := volume[x], volume[y]
		if vx[0] != vy[0] {
			return vx[0] > vy[0]
		}
		if vx[1] != vy[1] {
			return vx[1] > vy[1]
		}
		return x < y
	})
	return out
}

func (sh *shaper) shape() TrendsResult {
	q := sh.q
	out := TrendsResult{}
	if q.formula != nil {
		all := make([]int, len(q.Series))
		for i := range all {
			all[i] = i
		}
		values := sh.breakdownValues(all)
		for p := range sh.periods {
			for _, bd := range values {
				r := sh.formulaRaw(p, bd)
				out = append(out, sh.finish(nil, "Formula ("+q.Formula+")", r, p, bd, -1))
			}
		}
		return out
	}
	for i, e := range q.Series {
		values := sh.breakdownValues([]int{i})
		for p := range sh.periods {
			for _, bd := range values {
				label := e.Label()
				if q.Breakdown != nil {
					label = q.Breakdown.breakdownLabel(label, bd)
				}
				out = append(out, sh.finish(e.JSON(), label, sh.raw(i, p, bd), p, bd, i))
			}
		}
	}
	return out
}

// formulaRaw evaluates the formula bucket by bucket (or on the aggregated
// values) over the series of one period and breakdown value.
func (sh *shaper) formulaRaw(p int, bd string) raw {
	n := len(sh.q.Series)
	parts := make([]raw, n)
	for i := 0; i < n; i++ {
		parts[i] = sh.raw(i, p, bd)
	}
	if !sh.q.timeSeries() {
		return raw{agg: sh.q.formula.eval(func(i int) float64 { return parts[i].agg })}
	}
	r := raw{data: make([]float64, len(sh.buckets[p]))}
	for k := range r.data {
		r.data[k] = sh.q.formula.eval(func(i int) float64 { return parts[i].data[k] })
	}
	return r
}

// finish builds a series from its numbers: running sums for the
// cumulative display, labels, compare fields and persons URLs.
func (sh *shaper) finish(action map[string]any, label string, r raw, p int, bd string, series int) TrendSeries {
	q := sh.q
	s := TrendSeries{Action: action, Label: label, Filter: q.filterJSON(sh.periods[p]),
		Data: []float64{}, Days: []string{}, Labels: []string{}, PersonsURLs: []map[string]string{}}
	if q.Breakdown != nil {
		s.BreakdownValue = q.Breakdown.breakdownJSON(bd)
	}
	if q.Compare {
		s.Compare = true
		s.CompareLabel = [2]string{"current", "previous"}[p]
	}
	if !q.timeSeries() {
		v := finite(r.agg)
		s.AggregatedValue = &v
		if series >= 0 {
			s.PersonsURLs = append(s.PersonsURLs, sh.personsURL(series, p, bd, ""))
		}
		return s
	}
	var running float64
	for k, b := range sh.buckets[p] {
		v := r.data[k]
		s.Count += v
		if q.cumulative() {
			running += v
			v = running
		}
		s.Data = append(s.Data, finite(v))
		s.Days = append(s.Days, b.Day)
		if q.Compare {
			s.Labels = append(s.Labels, q.Interval.String()+" "+strconv.Itoa(k))
		} else {
			s.Labels = append(s.Labels, b.Label)
		}
		if series >= 0 {
			s.PersonsURLs = append(s.PersonsURLs, sh.personsURL(series, p, bd, b.Key))
		}
	}
	s.Count = finite(s.Count)
	return s
}

// finite keeps a sum past float64's range (only reachable with absurd
// property values) from making the result unencodable: JSON has no
// infinity.
func finite(v float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	return v
}

// personsURL is where clients fetch the actors behind a point: series,
// period and breakdown value, and the bucket ("" for the whole period).
func (sh *shaper) personsURL(series, period int, bd, bucket string) map[string]string {
	if sh.peopleBase == "" {
		sh.peopleBase = sh.q.peopleBase("trends")
	}
	sel := map[string]string{"series": strconv.Itoa(series), "period": strconv.Itoa(period), "entity_id": sh.q.Series[series].ID}
	if bucket != "" {
		sel["bucket"] = bucket
	}
	if sh.q.Breakdown != nil {
		sel["breakdown_value"] = bd
	}
	return map[string]string{"url": withSelection(sh.peopleBase, sel)}
}

// filterJSON is the request as run over r, in the legacy filter shape.
func (q *TrendsQuery) filterJSON(r DateRange) map[string]any {
	events := make([]any, len(q.Series))
	for i, e := range q.Series {
		events[i] = e.JSON()
	}
	m := map[string]any{
		"insight": "TRENDS", "events": events, "actions": []any{},
		"properties": q.Properties.JSON(), "filter_test_accounts": q.FilterTestAccounts,
		"date_from": r.From.In(q.clock.loc).Format(time.RFC3339Nano),
		"date_to":   r.To.In(q.clock.loc).Format(time.RFC3339Nano),
		"interval":  q.Interval.String(), "display": q.Display, "compare": q.Compare,
	}
	if q.Breakdown != nil {
		m["breakdown"] = q.Breakdown.Property
		m["breakdown_type"] = q.Breakdown.Type
		if q.Breakdown.multi() {
			m["breakdowns"] = q.Breakdown.Props
		}
		m["breakdown_limit"] = q.Breakdown.Limit
	}
	if q.formula != nil {
		m["formula"] = q.Formula
	}
	if q.Range.compareUnit != 0 {
		m["compare_to"] = q.CompareTo
	}
	if q.AggregationGroupTypeIndex > 0 {
		m["aggregation_group_type_index"] = q.AggregationGroupTypeIndex
	}
	return m
}

func asInt(v any) (int, error) {
	switch x := v.(type) {
	case int64:
		return int(x), nil
	case uint64:
		return int(x), nil
	case int:
		return x, nil
	case float64:
		return int(x), nil
	}
	return 0, fmt.Errorf("not an integer: %T", v)
}

func asFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case int:
		return float64(x), nil
	case nil:
		return 0, nil
	}
	return 0, fmt.Errorf("not a number: %T", v)
}
