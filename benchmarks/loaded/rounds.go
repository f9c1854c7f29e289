package loaded

import (
	"fmt"
	"strings"
	"time"

	"github.com/insightd/insightd/querybuilder"
)

// Way is one way of running a case, timed round by round: its wall and
// process CPU times, index r for timed round r+1. A run that failed keeps
// its place with zero times, so that ratios between ways and cases stay
// taken from the same rounds.
type Way struct {
	Wall, CPU []time.Duration
	// Warm is the warm-up round's wall time, not in the medians.
	Warm, WarmCPU time.Duration
	// Fails counts the timed runs that failed; Err is the last failure.
	Fails int
	Err   string
}

// Time runs fn and records its wall and CPU time for round (0: the
// warm-up, kept apart). A failed run is recorded as zero times.
func (w *Way) Time(round int, fn func() error) time.Duration {
	c0, t0 := CPUTime(), time.Now()
	err := fn()
	d, c := time.Since(t0), CPUTime()-c0
	if err != nil {
		d, c = 0, 0
		if round > 0 {
			w.Fails++
			w.Err = fmt.Sprintf("%.200s", err.Error())
		}
	}
	if round == 0 {
		w.Warm, w.WarmCPU = d, c
		return d
	}
	w.Wall, w.CPU = append(w.Wall, d), append(w.CPU, c)
	return d
}

// Timed is the wall times of the runs that succeeded.
func (w *Way) Timed() []time.Duration { return nonZero(w.Wall) }

// Cell is the median wall time with its range and the median CPU time,
// as two table cells, or n/a when no run succeeded.
func (w *Way) Cell() string {
	if len(w.Timed()) == 0 {
		return "n/a | n/a"
	}
	s := Spread(w.Timed())
	if w.Fails > 0 {
		s += fmt.Sprintf(" (%d failed)", w.Fails)
	}
	return fmt.Sprintf("%s | %.0f", s, Ms(Median(nonZero(w.CPU))))
}

// PerRound is a / b taken round by round, over the rounds where both ran.
func PerRound(a, b []time.Duration) []float64 {
	var out []float64
	for i := range min(len(a), len(b)) {
		if a[i] > 0 && b[i] > 0 {
			out = append(out, float64(a[i])/float64(b[i]))
		}
	}
	return out
}

// RatiosOr is Ratios, or n/a when there is no ratio.
func RatiosOr(xs []float64) string {
	if len(xs) == 0 {
		return "n/a"
	}
	return Ratios(xs)
}

// Rotate runs fns in turn, fns[round mod len] first: the first statement
// after another case pays for reading the columns that case did not
// read, and that cost must not always land on the same way.
func Rotate(round int, fns ...func()) {
	for i := range fns {
		fns[(i+round)%len(fns)]()
	}
}

// Discard is st with its result discarded by the engine (FORMAT Null):
// references and floors are timed without returning rows to Go, which
// would time the transfer instead of the work. Its fallback is dropped:
// a statement whose own check fails is an error here, not a second
// statement timed as the first.
func Discard(st querybuilder.Statement) querybuilder.Statement {
	st.SQL = strings.TrimSpace(st.SQL) + "\nFORMAT Null"
	st.Fallback = nil
	return st
}

func nonZero(ds []time.Duration) []time.Duration {
	var out []time.Duration
	for _, d := range ds {
		if d > 0 {
			out = append(out, d)
		}
	}
	return out
}

// Cold times one request to the analysis route, meant as the first after
// opening the engine (the migrations' checks aside, before anything else
// reads the events), and prints it: the cost a restarted server's first
// user pays, which the warm rounds leave out.
func (e *Env) Cold(name, route string, body []byte) {
	c0, t0 := CPUTime(), time.Now()
	e.HTTPResult(route, body)
	fmt.Printf("cold: the first request after opening the engine (%s over HTTP): %.0f ms, CPU %.0f ms\n\n",
		name, Ms(time.Since(t0)), Ms(CPUTime()-c0))
}
