package analysis_test

// Funnel conversion times over HTTP (the steps' average and median times,
// time to convert, the timing endpoint), against the brute-force reference
// (funnel_reference_test.go) and numbers worked out by hand.

import (
	"testing"
	"time"

	"github.com/insightd/insightd/api/analysis/analysistest"
	"github.com/insightd/insightd/querybuilder/reference"
)

// fourConverters convert from A to B in 10, 20, 40 and 100 seconds; a
// fifth only does A.
var fourConverters = []reference.Event{
	analysistest.Fev("c1", "A", 0), analysistest.Fev("c1", "B", 10*sc),
	analysistest.Fev("c2", "A", 0), analysistest.Fev("c2", "B", 20*sc),
	analysistest.Fev("c3", "A", 0), analysistest.Fev("c3", "B", 40*sc),
	analysistest.Fev("c4", "A", 0), analysistest.Fev("c4", "B", 100*sc),
	analysistest.Fev("c5", "A", 0),
}

func TestFunnelConversionTimes(t *testing.T) {
	runStepsCases(t, []stepsCase{
		{name: "average and median over an even number of persons (the median interpolates)",
			events: fourConverters, f: analysistest.FunnelOf("", "A", "B"), hand: []reference.StepResult{analysistest.St(5), analysistest.St(4, 42.5, 30)}},
		{name: "times keep microseconds",
			events: []reference.Event{analysistest.Fev("m1", "A", 0), analysistest.Fev("m1", "B", 1500*time.Millisecond), analysistest.Fev("m2", "A", 0), analysistest.Fev("m2", "B", 2*sc+us)},
			f:      analysistest.FunnelOf("", "A", "B"), hand: []reference.StepResult{analysistest.St(2), analysistest.St(2, 1.7500005, 1.7500005)}},
		{name: "nobody at a step gives null times",
			events: []reference.Event{analysistest.Fev("n1", "A", 0)}, f: analysistest.FunnelOf("", "A", "B"), hand: []reference.StepResult{analysistest.St(1), analysistest.St(0)}},
	})
}

func TestFunnelTimeToConvert(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, fourConverters)
	ab := analysistest.FunnelOf("", "A", "B")
	t.Run("bin_count 3: lo 10, width 30, the last bin holds its upper end", func(t *testing.T) {
		analysistest.CheckTimeToConvert(t, p, fourConverters, ab, 3, [][2]float64{{10, 2}, {40, 1}, {70, 1}})
	})
	t.Run("the default bin count is the cube root of the persons, rounded up", func(t *testing.T) {
		analysistest.CheckTimeToConvert(t, p, fourConverters, ab, 0, [][2]float64{{10, 3}, {55, 1}})
	})
	t.Run("one bin holds everyone", func(t *testing.T) {
		analysistest.CheckTimeToConvert(t, p, fourConverters, ab, 1, [][2]float64{{10, 4}})
	})
	t.Run("fractional times: lo is floored, width at least 1", func(t *testing.T) {
		events := []reference.Event{analysistest.Fev("f1", "A", 0), analysistest.Fev("f1", "B", 500*time.Millisecond), analysistest.Fev("f2", "A", 0), analysistest.Fev("f2", "B", 3250*time.Millisecond)}
		analysistest.CheckTimeToConvert(t, env.project(t, events), events, ab, 2, [][2]float64{{0, 1}, {2, 1}})
	})
	t.Run("between funnel_from_step and funnel_to_step", func(t *testing.T) {
		events := []reference.Event{
			analysistest.Fev("s1", "A", 0), analysistest.Fev("s1", "B", 10*sc), analysistest.Fev("s1", "C", 70*sc),
			analysistest.Fev("s2", "A", 0), analysistest.Fev("s2", "B", 100*sc), analysistest.Fev("s2", "C", 105*sc),
			analysistest.Fev("s3", "A", 0), analysistest.Fev("s3", "B", 5*sc),
		}
		f := analysistest.FunnelOf("", "A", "B", "C")
		f.FromStep, f.ToStep = 1, 2
		analysistest.CheckTimeToConvert(t, env.project(t, events), events, f, 2, [][2]float64{{5, 1}, {33, 1}})
		f.FromStep, f.ToStep = 0, 1
		analysistest.CheckTimeToConvert(t, env.project(t, events), events, f, 0, [][2]float64{{5, 2}, {53, 1}})
	})
	t.Run("nobody converting gives no bins and a null average", func(t *testing.T) {
		events := []reference.Event{analysistest.Fev("z", "A", 0)}
		analysistest.CheckTimeToConvert(t, env.project(t, events), events, ab, 0, [][2]float64{})
	})
}

func TestFunnelTimingEndpoint(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, fourConverters)
	f := analysistest.FunnelOf("", "A", "B")
	ts := f.ConversionTimes(fourConverters)
	if q := [3]float64{reference.Quantile(ts, 0.5), reference.Quantile(ts, 0.9), reference.Quantile(ts, 0.99)}; !analysistest.SameFloats(q[:], []float64{30, 82, 98.2}) {
		t.Errorf("the reference quantiles %v disagree with the hand-written [30 82 98.2]", q)
	}
	var got analysistest.Timing
	p.result(t, "timing", f.Filter(nil), &got)
	want := reference.Bins(ts, 0)
	if !analysistest.SameBins(got.Bins, want) || !analysistest.SamePtr(got.Avg, analysistest.Ptr(42.5)) || !analysistest.SamePtr(got.Median, analysistest.Ptr(30)) ||
		!analysistest.SamePtr(got.P90, analysistest.Ptr(82)) || !analysistest.SamePtr(got.P99, analysistest.Ptr(98.2)) || !analysistest.SamePtr(got.Persons, analysistest.Ptr(4)) {
		t.Errorf("timing: bins %v avg %s median %s p90 %s p99 %s persons %s\nwant bins %v avg 42.5 median 30 p90 82 p99 98.2 persons 4",
			got.Bins, analysistest.FmtPtr(got.Avg), analysistest.FmtPtr(got.Median), analysistest.FmtPtr(got.P90), analysistest.FmtPtr(got.P99), analysistest.FmtPtr(got.Persons), want)
	}
	t.Run("with bin_count and steps 1 to 2", func(t *testing.T) {
		events := []reference.Event{
			analysistest.Fev("s1", "A", 0), analysistest.Fev("s1", "B", 10*sc), analysistest.Fev("s1", "C", 70*sc),
			analysistest.Fev("s2", "A", 0), analysistest.Fev("s2", "B", 100*sc), analysistest.Fev("s2", "C", 105*sc),
		}
		f := analysistest.FunnelOf("", "A", "B", "C")
		f.FromStep, f.ToStep = 1, 2
		ts := f.ConversionTimes(events)
		filter := f.Filter(map[string]any{"bin_count": 2})
		var got analysistest.Timing
		env.project(t, events).result(t, "timing", filter, &got)
		if !analysistest.SameBins(got.Bins, [][2]float64{{5, 1}, {33, 1}}) || !analysistest.SamePtr(got.Median, analysistest.Ptr(reference.Quantile(ts, 0.5))) ||
			!analysistest.SamePtr(got.P99, analysistest.Ptr(reference.Quantile(ts, 0.99))) || !analysistest.SamePtr(got.Persons, analysistest.Ptr(2)) {
			t.Errorf("timing %+v median %s p99 %s persons %s", got.Bins, analysistest.FmtPtr(got.Median), analysistest.FmtPtr(got.P99), analysistest.FmtPtr(got.Persons))
		}
	})
}
