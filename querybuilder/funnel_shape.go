package querybuilder

import (
	"fmt"
	"math"
	"sort"
	"strconv"
)

// FunnelStep is one step of a funnel result.
type FunnelStep struct {
	ActionID   any    `json:"action_id"`
	Name       string `json:"name"`
	CustomName any    `json:"custom_name"`
	// Order is the step's index as text, as the contract types it.
	Order                 string   `json:"order"`
	Count                 int      `json:"count"`
	Type                  string   `json:"type"`
	AverageConversionTime *float64 `json:"average_conversion_time"`
	MedianConversionTime  *float64 `json:"median_conversion_time"`
	ConvertedPeopleURL    string   `json:"converted_people_url"`
	DroppedPeopleURL      *string  `json:"dropped_people_url"`
	People                []any    `json:"people"`
	// Breakdown and BreakdownValue are set in a broken-down funnel.
	// (text, or a multiple breakdown's list of values).
	Breakdown      any `json:"breakdown,omitempty"`
	BreakdownValue any `json:"breakdown_value,omitempty"`
}

// FunnelTrend is the conversion rate (%) per bucket of entry, for one
// breakdown value (BreakdownValue nil without a breakdown).
type FunnelTrend struct {
	Count          int       `json:"count"`
	Data           []float64 `json:"data"`
	Days           []string  `json:"days"`
	Labels         []string  `json:"labels"`
	BreakdownValue any       `json:"breakdown_value,omitempty"`
}

// FunnelTimes is time_to_convert's and timing's result: bins of
// [from_seconds, persons] and statistics in seconds (nil with no one
// converting). The quantiles and Persons are timing's only.
type FunnelTimes struct {
	Bins                  [][2]float64 `json:"bins"`
	AverageConversionTime *float64     `json:"average_conversion_time"`
	MedianConversionTime  *float64     `json:"median_conversion_time,omitempty"`
	P90ConversionTime     *float64     `json:"p90_conversion_time,omitempty"`
	P99ConversionTime     *float64     `json:"p99_conversion_time,omitempty"`
	Persons               *int         `json:"persons,omitempty"`
}

// FunnelSteps is a funnel's steps (funnel_viz_type steps).
type FunnelSteps []FunnelStep

// FunnelBreakdown is a broken-down funnel: a step list per value.
type FunnelBreakdown [][]FunnelStep

// FunnelTrends is funnel_viz_type trends: a rate series per value.
type FunnelTrends []FunnelTrend

var funnelStepsHeader = []string{"step", "name", "action_id", "count", "average_conversion_time", "median_conversion_time"}

// Table implements Result: one row per step, in step order.
func (r FunnelSteps) Table() ([]string, [][]string) {
	rows := make([][]string, len(r))
	for k, step := range r {
		name := step.Name
		if s, _ := step.CustomName.(string); s != "" {
			name = s
		}
		id, _ := step.ActionID.(string)
		rows[k] = []string{strconv.Itoa(k + 1), name, id, strconv.Itoa(step.Count),
			numberCell(step.AverageConversionTime), numberCell(step.MedianConversionTime)}
	}
	return append([]string(nil), funnelStepsHeader...), rows
}

// Table implements Result: each value's steps, the value first.
func (r FunnelBreakdown) Table() ([]string, [][]string) {
	var rows [][]string
	for _, steps := range r {
		_, stepRows := FunnelSteps(steps).Table()
		for k, row := range stepRows {
			value := valueText(steps[k].BreakdownValue)
			rows = append(rows, append([]string{value}, row...))
		}
	}
	return append([]string{"breakdown_value"}, funnelStepsHeader...), rows
}

// Table implements Result: one row per value (its rates), one column per
// bucket, as a trend's table.
func (r FunnelTrends) Table() ([]string, [][]string) {
	series := make(TrendsResult, len(r))
	for k, t := range r {
		series[k] = TrendSeries{Data: t.Data, Days: t.Days, Labels: t.Labels}
		series[k].Label = valueText(t.BreakdownValue)
	}
	return series.Table()
}

// Table implements Result: one row per bin.
func (r FunnelTimes) Table() ([]string, [][]string) {
	rows := make([][]string, len(r.Bins))
	for k, b := range r.Bins {
		rows[k] = []string{numberCell(&b[0]), numberCell(&b[1])}
	}
	return []string{"from_seconds", "persons"}, rows
}

// ShapeFunnel turns the rows of BuildFunnel's statement into the
// visualisation's result: FunnelSteps, or FunnelBreakdown with a
// breakdown; FunnelTrends; or FunnelTimes.
func ShapeFunnel(q *FunnelQuery, rows [][]any) (Result, error) {
	switch q.Viz {
	case VizTrends:
		return shapeFunnelTrends(q, rows)
	case VizTimeToConvert, VizTiming:
		return shapeFunnelTimes(q, rows)
	}
	return shapeFunnelSteps(q, rows)
}

// stepRow is one breakdown value's row of a steps statement.
type stepRow struct {
	value   string
	counts  []int
	avg, md []*float64
}

func shapeFunnelSteps(q *FunnelQuery, rows [][]any) (Result, error) {
	var list []stepRow
	for _, r := range rows {
		if len(r) != len(funnelStepsColumns) {
			return nil, fmt.Errorf("funnel row has %d columns, want %d", len(r), len(funnelStepsColumns))
		}
		sr := stepRow{value: fmt.Sprint(r[0])}
		counts, avg, md, ok := r[1].([]any), r[2].([]any), r[3].([]any), true
		if !ok || len(counts) != len(q.Steps) || len(avg) != len(q.Steps) || len(md) != len(q.Steps) {
			return nil, fmt.Errorf("funnel row: arrays of %d steps expected", len(q.Steps))
		}
		for i := range counts {
			c, err := asInt(counts[i])
			if err != nil {
				return nil, err
			}
			sr.counts = append(sr.counts, c)
			sr.avg = append(sr.avg, optionalFloat(avg[i]))
			sr.md = append(sr.md, optionalFloat(md[i]))
		}
		list = append(list, sr)
	}
	if q.Breakdown == nil {
		sr := stepRow{counts: make([]int, len(q.Steps)), avg: make([]*float64, len(q.Steps)), md: make([]*float64, len(q.Steps))}
		if len(list) > 0 {
			sr = list[0]
		}
		return FunnelSteps(funnelSteps(q, sr, false)), nil
	}
	sort.SliceStable(list, func(a, b int) bool {
		x, y := list[a], list[b]
		if (x.value == BreakdownOther) != (y.value == BreakdownOther) {
			return y.value == BreakdownOther
		}
		if x.counts[0] != y.counts[0] {
			return x.counts[0] > y.counts[0]
		}
		return x.value < y.value
	})
	out := make(FunnelBreakdown, 0, len(list))
	for _, sr := range list {
		out = append(out, funnelSteps(q, sr, true))
	}
	return out, nil
}

// funnelSteps is one step list.
func funnelSteps(q *FunnelQuery, sr stepRow, broken bool) []FunnelStep {
	steps := make([]FunnelStep, len(q.Steps))
	for i, e := range q.Steps {
		id := e.IDValue()
		name := e.Name
		switch {
		case name != "":
		case e.AllEvents:
			name = "All events"
		default:
			name = e.ID
		}
		s := FunnelStep{ActionID: id, Name: name, CustomName: nullIfEmpty(e.CustomName), Order: strconv.Itoa(i), Count: sr.counts[i],
			Type: e.Type, AverageConversionTime: sr.avg[i], MedianConversionTime: sr.md[i], People: []any{},
			ConvertedPeopleURL: q.peopleURL(i+1, sr.value, broken)}
		if i > 0 {
			u := q.peopleURL(-(i + 1), sr.value, broken)
			s.DroppedPeopleURL = &u
		}
		if broken {
			v := sr.value
			s.Breakdown = q.Breakdown.breakdownJSON(v)
			s.BreakdownValue = s.Breakdown
		}
		steps[i] = s
	}
	return steps
}

// peopleURL is where clients fetch the actors who reached (step > 0)
// or dropped off before (step < 0) a step, 1-based: the request and the
// step (and breakdown value).
func (q *FunnelQuery) peopleURL(step int, value string, broken bool) string {
	if q.peopleBaseURL == "" {
		q.peopleBaseURL = q.peopleBase("funnel")
	}
	sel := map[string]string{"funnel_step": strconv.Itoa(step)}
	if broken {
		sel["funnel_step_breakdown"] = value
	}
	return withSelection(q.peopleBaseURL, sel)
}

func optionalFloat(v any) *float64 {
	f, ok := v.(float64)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func shapeFunnelTrends(q *FunnelQuery, rows [][]any) (Result, error) {
	type counts struct{ entered, converted int }
	byValue := map[string]map[string]counts{}
	volume := map[string]int{}
	for _, r := range rows {
		if len(r) != len(funnelTrendsColumns) {
			return nil, fmt.Errorf("funnel trends row has %d columns, want %d", len(r), len(funnelTrendsColumns))
		}
		value, bucket := fmt.Sprint(r[0]), fmt.Sprint(r[1])
		e, err1 := asInt(r[2])
		c, err2 := asInt(r[3])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("funnel trends row: counts expected")
		}
		if byValue[value] == nil {
			byValue[value] = map[string]counts{}
		}
		byValue[value][bucket] = counts{e, c}
		volume[value] += e
	}
	values := make([]string, 0, len(byValue))
	for v := range byValue {
		values = append(values, v)
	}
	if q.Breakdown == nil {
		values = []string{""}
	}
	sort.Slice(values, func(a, b int) bool {
		x, y := values[a], values[b]
		if (x == BreakdownOther) != (y == BreakdownOther) {
			return y == BreakdownOther
		}
		if volume[x] != volume[y] {
			return volume[x] > volume[y]
		}
		return x < y
	})
	buckets := q.Range.Buckets()
	out := make(FunnelTrends, 0, len(values))
	for _, v := range values {
		t := FunnelTrend{Count: len(buckets), Data: []float64{}, Days: []string{}, Labels: []string{}}
		for _, b := range buckets {
			c := byValue[v][b.Key]
			rate := 0.0
			if c.entered > 0 {
				rate = 100 * float64(c.converted) / float64(c.entered)
			}
			t.Data = append(t.Data, rate)
			t.Days = append(t.Days, b.Day)
			t.Labels = append(t.Labels, b.Label)
		}
		if q.Breakdown != nil {
			value := v
			t.BreakdownValue = q.Breakdown.breakdownJSON(value)
		}
		out = append(out, t)
	}
	return out, nil
}

func shapeFunnelTimes(q *FunnelQuery, rows [][]any) (Result, error) {
	res := FunnelTimes{Bins: [][2]float64{}}
	if q.Viz == VizTiming {
		zero := 0
		res.Persons = &zero
	}
	if len(rows) == 0 {
		return res, nil
	}
	var counts = map[int]float64{}
	var lo, width float64
	var bins int
	for i, r := range rows {
		if len(r) != len(funnelTimeColumns) {
			return nil, fmt.Errorf("funnel times row has %d columns, want %d", len(r), len(funnelTimeColumns))
		}
		bin, err := asInt(r[0])
		if err != nil {
			return nil, err
		}
		persons, err := asFloat(r[1])
		if err != nil {
			return nil, err
		}
		counts[bin] = persons
		if i == 0 {
			lo, _ = asFloat(r[2])
			width, _ = asFloat(r[3])
			bins, _ = asInt(r[4])
			total, _ := asInt(r[5])
			res.AverageConversionTime = optionalFloat(r[6])
			if q.Viz == VizTiming {
				res.Persons = &total
				res.MedianConversionTime, res.P90ConversionTime, res.P99ConversionTime =
					optionalFloat(r[7]), optionalFloat(r[8]), optionalFloat(r[9])
			}
		}
	}
	for i := 0; i < bins; i++ {
		res.Bins = append(res.Bins, [2]float64{lo + float64(i)*width, counts[i]})
	}
	return res, nil
}
