package analysistest

// Events and funnels written compactly, and the comparisons of a
// project's funnel answers with the reference (querybuilder/reference)
// and with steps worked out by hand.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/querybuilder/reference"
)

// Fday is the day most cases happen on: Tuesday 3 March 2026, noon UTC.
var Fday = time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)

// Fev is an event of distinct id who, d after Fday, with a random uuid
// and "key", "value" property pairs.
func Fev(who, name string, d time.Duration, kv ...string) reference.Event {
	return FevID(who, name, d, uuid.NewString(), kv...)
}

// FevID is Fev with a chosen uuid, to order events of the same time.
func FevID(who, name string, d time.Duration, id string, kv ...string) reference.Event {
	props := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		props[kv[i]] = kv[i+1]
	}
	return reference.Event{UUID: id, DistinctID: who, Event: name, At: Fday.Add(d), Props: props}
}

// Fident merges the anonymous distinct id into user.
func Fident(user, anon string, d time.Duration) reference.Event {
	return reference.Event{UUID: uuid.NewString(), DistinctID: user, Event: "$identify", At: Fday.Add(d),
		Props: map[string]any{"$anon_distinct_id": anon}}
}

// FunnelOf is an ordered-by-default funnel over named steps with the usual
// date range (1 to 10 March).
func FunnelOf(order string, steps ...string) reference.Funnel {
	f := reference.Funnel{Order: order, DateFrom: "2026-03-01", DateTo: "2026-03-10"}
	for _, s := range steps {
		f.Steps = append(f.Steps, reference.Step{Event: s})
	}
	return f
}

// St is a hand-written step: its count, then its average and median
// conversion times when it has them.
func St(count int, avgMedian ...float64) reference.StepResult {
	r := reference.StepResult{Count: count}
	if len(avgMedian) == 2 {
		r.Avg, r.Median = &avgMedian[0], &avgMedian[1]
	}
	return r
}

// APIStep is one step of a funnel answer.
type APIStep struct {
	ActionID       any      `json:"action_id"`
	Name           any      `json:"name"`
	CustomName     any      `json:"custom_name"`
	Order          *string  `json:"order"`
	Count          *float64 `json:"count"`
	Type           string   `json:"type"`
	Avg            *float64 `json:"average_conversion_time"`
	Median         *float64 `json:"median_conversion_time"`
	ConvertedURL   any      `json:"converted_people_url"`
	DroppedURL     any      `json:"dropped_people_url"`
	People         []any    `json:"people"`
	Breakdown      any      `json:"breakdown"`
	BreakdownValue any      `json:"breakdown_value"`
}

func AsRef(steps []APIStep) []reference.StepResult {
	out := make([]reference.StepResult, len(steps))
	for i, s := range steps {
		out[i] = reference.StepResult{Count: -1, Avg: s.Avg, Median: s.Median}
		if s.Count != nil {
			out[i].Count = int(*s.Count)
		}
	}
	return out
}

func CloseTo(a, b float64) bool {
	d := math.Abs(a - b)
	return d <= 1e-6*math.Max(math.Abs(a), math.Abs(b)) || d < 1e-9
}

func SamePtr(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return CloseTo(*a, *b)
}

func SameSteps(a, b []reference.StepResult) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Count != b[i].Count || !SamePtr(a[i].Avg, b[i].Avg) || !SamePtr(a[i].Median, b[i].Median) {
			return false
		}
	}
	return true
}

func StepsText(steps []reference.StepResult) string {
	f := func(p *float64) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprintf("%.6g", *p)
	}
	var parts []string
	for _, s := range steps {
		parts = append(parts, fmt.Sprintf("%d(avg %s med %s)", s.Count, f(s.Avg), f(s.Median)))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func SeriesText(ss []reference.Series) string {
	var parts []string
	for _, s := range ss {
		parts = append(parts, s.Value+": "+StepsText(s.Steps))
	}
	return strings.Join(parts, "; ")
}

func SameSeries(a, b []reference.Series) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Value != b[i].Value || !SameSteps(a[i].Steps, b[i].Steps) {
			return false
		}
	}
	return true
}

// CheckSteps asks for f's steps and compares them with the reference
// and, when given, the hand-written steps.
func CheckSteps(t testing.TB, p Project, events []reference.Event, f reference.Funnel, extra map[string]any, hand []reference.StepResult) {
	t.Helper()
	want := f.StepResults(events)
	if hand != nil && !SameSteps(want, hand) {
		t.Errorf("the reference disagrees with the hand-written steps:\nreference %s\nhand      %s", StepsText(want), StepsText(hand))
	}
	var got []APIStep
	Result(t, p, "funnel", f.Filter(extra), &got)
	if !SameSteps(AsRef(got), want) {
		t.Errorf("server %s\nwant   %s", StepsText(AsRef(got)), StepsText(want))
	}
	for i, s := range got {
		if s.Order == nil || *s.Order != strconv.Itoa(i) || s.Type != "events" || s.People == nil {
			t.Errorf("step %d: order %v type %q people %v", i, s.Order, s.Type, s.People)
		}
		if want := f.Steps[i].Event; !f.Steps[i].Any && (s.Name != want || s.ActionID != want) {
			t.Errorf("step %d: name %v action_id %v, want %q", i, s.Name, s.ActionID, want)
		}
	}
}

// CheckBreakdown does CheckSteps for a funnel with a breakdown.
func CheckBreakdown(t testing.TB, p Project, events []reference.Event, f reference.Funnel, hand []reference.Series) {
	t.Helper()
	want := f.BreakdownResults(events)
	if hand != nil && !SameSeries(want, hand) {
		t.Errorf("the reference disagrees with the hand-written series:\nreference %s\nhand      %s", SeriesText(want), SeriesText(hand))
	}
	var got [][]APIStep
	Result(t, p, "funnel", f.Filter(nil), &got)
	var gotSeries []reference.Series
	for _, steps := range got {
		s := reference.Series{Steps: AsRef(steps)}
		if len(steps) > 0 {
			s.Value = fmt.Sprint(steps[0].BreakdownValue)
		}
		for i, st := range steps {
			if fmt.Sprint(st.BreakdownValue) != s.Value || fmt.Sprint(st.Breakdown) != s.Value {
				t.Errorf("series %q step %d: breakdown %v breakdown_value %v", s.Value, i, st.Breakdown, st.BreakdownValue)
			}
		}
		gotSeries = append(gotSeries, s)
	}
	if !SameSeries(gotSeries, want) {
		t.Errorf("server %s\nwant   %s", SeriesText(gotSeries), SeriesText(want))
	}
}

type TimeToConvert struct {
	Bins [][]float64 `json:"bins"`
	Avg  *float64    `json:"average_conversion_time"`
}

type Timing struct {
	TimeToConvert
	Median  *float64 `json:"median_conversion_time"`
	P90     *float64 `json:"p90_conversion_time"`
	P99     *float64 `json:"p99_conversion_time"`
	Persons *float64 `json:"persons"`
}

func SameBins(got [][]float64, want [][2]float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if len(got[i]) != 2 || !CloseTo(got[i][0], want[i][0]) || got[i][1] != want[i][1] {
			return false
		}
	}
	return true
}

func Ptr(x float64) *float64 { return &x }

// MeanOf is the mean of ts, nil when there are none.
func MeanOf(ts []float64) *float64 {
	if len(ts) == 0 {
		return nil
	}
	return Ptr(reference.Mean(ts))
}

// CheckTimeToConvert compares funnel_viz_type=time_to_convert with the
// reference; hand (if not nil) are the bins worked out by hand.
func CheckTimeToConvert(t testing.TB, p Project, events []reference.Event, f reference.Funnel, binCount int, hand [][2]float64) {
	t.Helper()
	ts := f.ConversionTimes(events)
	want := reference.Bins(ts, binCount)
	if hand != nil && fmt.Sprint(want) != fmt.Sprint(hand) {
		t.Errorf("the reference bins %v disagree with the hand-written %v", want, hand)
	}
	extra := map[string]any{"funnel_viz_type": "time_to_convert"}
	if binCount != 0 {
		extra["bin_count"] = binCount
	}
	var got TimeToConvert
	Result(t, p, "funnel", f.Filter(extra), &got)
	if !SameBins(got.Bins, want) || !SamePtr(got.Avg, MeanOf(ts)) {
		t.Errorf("server bins %v avg %v, want bins %v avg %v", got.Bins, FmtPtr(got.Avg), want, FmtPtr(MeanOf(ts)))
	}
}

// CheckTiming compares the timing endpoint with the reference.
func CheckTiming(t testing.TB, p Project, events []reference.Event, f reference.Funnel, binCount int) {
	t.Helper()
	ts := f.ConversionTimes(events)
	var median, p90, p99 *float64
	if len(ts) > 0 {
		median, p90, p99 = Ptr(reference.Quantile(ts, 0.5)), Ptr(reference.Quantile(ts, 0.9)), Ptr(reference.Quantile(ts, 0.99))
	}
	extra := map[string]any{}
	if binCount != 0 {
		extra["bin_count"] = binCount
	}
	var got Timing
	Result(t, p, "timing", f.Filter(extra), &got)
	want := reference.Bins(ts, binCount)
	if !SameBins(got.Bins, want) || !SamePtr(got.Avg, MeanOf(ts)) || !SamePtr(got.Median, median) ||
		!SamePtr(got.P90, p90) || !SamePtr(got.P99, p99) || !SamePtr(got.Persons, Ptr(float64(len(ts)))) {
		t.Errorf("timing: bins %v avg %s median %s p90 %s p99 %s persons %s\nwant bins %v avg %s median %s p90 %s p99 %s persons %d",
			got.Bins, FmtPtr(got.Avg), FmtPtr(got.Median), FmtPtr(got.P90), FmtPtr(got.P99), FmtPtr(got.Persons),
			want, FmtPtr(MeanOf(ts)), FmtPtr(median), FmtPtr(p90), FmtPtr(p99), len(ts))
	}
}

func FmtPtr(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// CheckTrends compares funnel_viz_type=trends (interval day) with the
// reference; hand (if not nil) are the rates worked out by hand.
func CheckTrends(t testing.TB, p Project, events []reference.Event, f reference.Funnel, hand []float64) {
	t.Helper()
	rates, days := f.TrendRates(events)
	if hand != nil && !SameFloats(rates, hand) {
		t.Errorf("the reference rates %v disagree with the hand-written %v", rates, hand)
	}
	var got []struct {
		Count  float64   `json:"count"`
		Data   []float64 `json:"data"`
		Days   []string  `json:"days"`
		Labels []string  `json:"labels"`
	}
	Result(t, p, "funnel", f.Filter(map[string]any{"funnel_viz_type": "trends"}), &got)
	if len(got) != 1 {
		t.Fatalf("want one trend series, got %d: %+v", len(got), got)
	}
	g := got[0]
	if !SameFloats(g.Data, rates) || fmt.Sprint(g.Days) != fmt.Sprint(days) || int(g.Count) != len(days) || len(g.Labels) != len(days) {
		t.Errorf("server count %v data %v days %v labels %v\nwant count %d data %v days %v", g.Count, g.Data, g.Days, g.Labels, len(days), rates, days)
	}
}

func SameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !CloseTo(a[i], b[i]) {
			return false
		}
	}
	return true
}

// stepsCase is one steps-funnel case: events, the funnel, extra request
