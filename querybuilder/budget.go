package querybuilder

import (
	"fmt"
	"strings"
)

// MaxResultCells bounds the numbers one analysis answers. A request is
// refused before it runs when its result would hold more: the engine
// would compute them, and the server hold, encode and cache them, for a
// client that cannot draw them (an hourly trend over 416 days broken down
// by 1 000 values is ten million points). 100 000 numbers are a few
// megabytes of JSON.
const MaxResultCells = 100_000

// budget refuses a result of cells numbers past MaxResultCells, naming
// the parameters that narrow it (the first as attr).
func budget(cells int, what string, narrow ...string) error {
	if cells <= MaxResultCells {
		return nil
	}
	return &ValidationError{Attr: narrow[0], Detail: fmt.Sprintf(
		"the %s would hold %d numbers, more than the %d an analysis answers: narrow it with %s",
		what, cells, MaxResultCells, strings.Join(narrow, ", "))}
}

// values is the number of series a breakdown makes: its limit and the
// other value, or 1 without one.
func (bd *Breakdown) values() int {
	if bd == nil {
		return 1
	}
	return bd.Limit + 1
}

// budget refuses a lifecycle past MaxResultCells: buckets x its four
// statuses (a lifecycle has one entity and no breakdown or compare).
func (q *LifecycleQuery) budget() error {
	return budget(q.Range.count()*len(lifecycleStatuses), "lifecycle", "interval", "date_from", "date_to")
}

// timesBudget is a funnel time to convert's (and timing's) numbers: two
// per bin and the five averages and percentiles. Bins are at most
// maxFunnelBins and breakdowns do not apply, so it is always within the
// budget; it is written down so that a change to either shows here.
func (q *FunnelQuery) timesBudget() error {
	bins := q.BinCount
	if bins == 0 {
		bins = maxFunnelBins
	}
	return budget(2*bins+5, "time to convert", "bin_count")
}
