package api

// Funnel conversion times over HTTP (the steps' average and median times,
// time to convert, the timing endpoint), against the brute-force reference
// (funnel_reference_test.go) and numbers worked out by hand.

import (
	"testing"
	"time"
)

// fourConverters convert from A to B in 10, 20, 40 and 100 seconds; a
// fifth only does A.
var fourConverters = []refEvent{
	fev("c1", "A", 0), fev("c1", "B", 10*sc),
	fev("c2", "A", 0), fev("c2", "B", 20*sc),
	fev("c3", "A", 0), fev("c3", "B", 40*sc),
	fev("c4", "A", 0), fev("c4", "B", 100*sc),
	fev("c5", "A", 0),
}

func TestFunnelConversionTimes(t *testing.T) {
	runStepsCases(t, []stepsCase{
		{name: "average and median over an even number of persons (the median interpolates)",
			events: fourConverters, f: funnelOf("", "A", "B"), hand: []refStepResult{st(5), st(4, 42.5, 30)}},
		{name: "times keep microseconds",
			events: []refEvent{fev("m1", "A", 0), fev("m1", "B", 1500*time.Millisecond), fev("m2", "A", 0), fev("m2", "B", 2*sc+us)},
			f:      funnelOf("", "A", "B"), hand: []refStepResult{st(2), st(2, 1.7500005, 1.7500005)}},
		{name: "nobody at a step gives null times",
			events: []refEvent{fev("n1", "A", 0)}, f: funnelOf("", "A", "B"), hand: []refStepResult{st(1), st(0)}},
	})
}

func TestFunnelTimeToConvert(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, fourConverters)
	ab := funnelOf("", "A", "B")
	t.Run("bin_count 3: lo 10, width 30, the last bin holds its upper end", func(t *testing.T) {
		checkTimeToConvert(t, p, fourConverters, ab, 3, [][2]float64{{10, 2}, {40, 1}, {70, 1}})
	})
	t.Run("the default bin count is the cube root of the persons, rounded up", func(t *testing.T) {
		checkTimeToConvert(t, p, fourConverters, ab, 0, [][2]float64{{10, 3}, {55, 1}})
	})
	t.Run("one bin holds everyone", func(t *testing.T) {
		checkTimeToConvert(t, p, fourConverters, ab, 1, [][2]float64{{10, 4}})
	})
	t.Run("fractional times: lo is floored, width at least 1", func(t *testing.T) {
		events := []refEvent{fev("f1", "A", 0), fev("f1", "B", 500*time.Millisecond), fev("f2", "A", 0), fev("f2", "B", 3250*time.Millisecond)}
		checkTimeToConvert(t, env.project(t, events), events, ab, 2, [][2]float64{{0, 1}, {2, 1}})
	})
	t.Run("between funnel_from_step and funnel_to_step", func(t *testing.T) {
		events := []refEvent{
			fev("s1", "A", 0), fev("s1", "B", 10*sc), fev("s1", "C", 70*sc),
			fev("s2", "A", 0), fev("s2", "B", 100*sc), fev("s2", "C", 105*sc),
			fev("s3", "A", 0), fev("s3", "B", 5*sc),
		}
		f := funnelOf("", "A", "B", "C")
		f.FromStep, f.ToStep = 1, 2
		checkTimeToConvert(t, env.project(t, events), events, f, 2, [][2]float64{{5, 1}, {33, 1}})
		f.FromStep, f.ToStep = 0, 1
		checkTimeToConvert(t, env.project(t, events), events, f, 0, [][2]float64{{5, 2}, {53, 1}})
	})
	t.Run("nobody converting gives no bins and a null average", func(t *testing.T) {
		events := []refEvent{fev("z", "A", 0)}
		checkTimeToConvert(t, env.project(t, events), events, ab, 0, [][2]float64{})
	})
}

func TestFunnelTimingEndpoint(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, fourConverters)
	f := funnelOf("", "A", "B")
	ts := f.conversionTimes(fourConverters)
	if q := [3]float64{refQuantile(ts, 0.5), refQuantile(ts, 0.9), refQuantile(ts, 0.99)}; !sameFloats(q[:], []float64{30, 82, 98.2}) {
		t.Errorf("the reference quantiles %v disagree with the hand-written [30 82 98.2]", q)
	}
	var got timing
	p.result(t, "timing", f.filter(nil), &got)
	want := refBins(ts, 0)
	if !sameBins(got.Bins, want) || !samePtr(got.Avg, ptr(42.5)) || !samePtr(got.Median, ptr(30)) ||
		!samePtr(got.P90, ptr(82)) || !samePtr(got.P99, ptr(98.2)) || !samePtr(got.Persons, ptr(4)) {
		t.Errorf("timing: bins %v avg %s median %s p90 %s p99 %s persons %s\nwant bins %v avg 42.5 median 30 p90 82 p99 98.2 persons 4",
			got.Bins, fmtPtr(got.Avg), fmtPtr(got.Median), fmtPtr(got.P90), fmtPtr(got.P99), fmtPtr(got.Persons), want)
	}
	t.Run("with bin_count and steps 1 to 2", func(t *testing.T) {
		events := []refEvent{
			fev("s1", "A", 0), fev("s1", "B", 10*sc), fev("s1", "C", 70*sc),
			fev("s2", "A", 0), fev("s2", "B", 100*sc), fev("s2", "C", 105*sc),
		}
		f := funnelOf("", "A", "B", "C")
		f.FromStep, f.ToStep = 1, 2
		ts := f.conversionTimes(events)
		filter := f.filter(map[string]any{"bin_count": 2})
		var got timing
		env.project(t, events).result(t, "timing", filter, &got)
		if !sameBins(got.Bins, [][2]float64{{5, 1}, {33, 1}}) || !samePtr(got.Median, ptr(refQuantile(ts, 0.5))) ||
			!samePtr(got.P99, ptr(refQuantile(ts, 0.99))) || !samePtr(got.Persons, ptr(2)) {
			t.Errorf("timing %+v median %s p99 %s persons %s", got.Bins, fmtPtr(got.Median), fmtPtr(got.P99), fmtPtr(got.Persons))
		}
	})
}
