package hogql

import "testing"

func TestHasAggregateFindsAggregatesOutsideSubqueries(t *testing.T) {
	for src, want := range map[string]bool{
		"count()":                               true,
		"event":                                 false,
		"round(avg(toFloat(x)), 2) + 1":         true,
		"if(event = 'a', sum(1), 0)":            true,
		"event IN (SELECT count() FROM events)": false,
		"toDate(timestamp)":                     false,
		"quantile(0.5)(toFloat(x))":             true,
	} {
		e, err := ParseExpr(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := HasAggregate(e); got != want {
			t.Errorf("%s: got %v, want %v", src, got, want)
		}
	}
}
