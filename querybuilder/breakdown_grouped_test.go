package querybuilder

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGroupedBreakdownGoldenSQL: totals and sums broken down by what
// groups first (groupedBreakdown): a group property through the lookup,
// two properties by their hashes with the collision check, an expression
// of a materialized column grouped by the column, a group property beside
// an event property with compare (a number key and a text key).
func TestGroupedBreakdownGoldenSQL(t *testing.T) {
	checkGolden(t, filepath.Join("testdata", "breakdowns"), map[string]string{
		"trend_grouped_group": `{"events": [{"id": "$pageview"}], "breakdown": "industry", "breakdown_type": "group",
			"breakdown_group_type_index": 1, "date_from": "-7d"}`,
		"trend_grouped_two_properties": `{"events": [{"id": "$pageview"}], "breakdowns": [{"property": "$browser"}, {"property": "$os"}],
			"date_from": "-7d"}`,
		"trend_grouped_hogql_materialized": hogqlTrend("lower(properties.$browser)", ""),
		"trend_grouped_group_and_event_sum": `{"events": [{"id": "$pageview", "math": "sum", "math_property": "price"}],
			"breakdowns": [{"property": "industry", "type": "group", "group_type_index": 0}, {"property": "plan"}], "compare": true, "date_from": "-7d"}`,
	}, buildKind(&trendsKind))
}

// TestGroupedBreakdownsOnlyWhereTheyAddUp: a breakdown is computed after
// grouping only for totals, sums and distinct counts (their sets of
// actors merge; only over columns of few values), and only when grouping
// shrinks the events: not an expression of a per-event field, not
// quantiles, per-actor maths or cumulative distinct counts, not cohorts
// or bins.
func TestGroupedBreakdownsOnlyWhereTheyAddUp(t *testing.T) {
	for body, grouped := range map[string]bool{
		hogqlTrend("lower(properties.$browser)", ""):                                                                                    true,
		hogqlTrend("concat(event, properties.$os)", ""):                                                                                 true,
		hogqlTrend("concat(distinct_id, properties.$os)", ""):                                                                           false,
		hogqlTrend("toString(timestamp)", ""):                                                                                           false,
		hogqlTrend("lower(properties.$browser)", `, "math": "dau"`):                                                                     true,
		hogqlTrend("lower(properties.plan)", `, "math": "dau"`):                                                                         false,
		`{"events": [{"id": "a", "math": "dau"}], "breakdown": "$browser"}`:                                                             true,
		`{"events": [{"id": "a", "math": "unique_session"}], "breakdown": "plan"}`:                                                      false,
		`{"events": [{"id": "a", "math": "dau"}], "breakdown": "industry", "breakdown_type": "group", "breakdown_group_type_index": 0}`: false,
		hogqlTrend("lower(properties.$browser)", `, "math": "median", "math_property": "n"`):                                            false,
		hogqlTrend("lower(properties.$browser)", `, "math": "avg_count_per_actor"`):                                                     false,
		`{"events": [{"id": "a", "math": "dau"}], "breakdown": "b", "display": "ActionsLineGraphCumulative"}`:                           false,
		`{"events": [{"id": "a"}], "breakdown": "n", "breakdown_histogram_bin_count": 3}`:                                               false,
		`{"events": [{"id": "a"}], "breakdown": ["all"], "breakdown_type": "cohort"}`:                                                   false,
		`{"events": [{"id": "a", "math": "sum", "math_property": "n"}], "breakdowns": [{"property": "a"}, {"property": "b"}]}`:          true,
	} {
		p, err := ParseBody([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		q, err := trendsKind.Parse(p, Env{Project: goldenProject, Now: testNow})
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		stmt, err := q.Build(Facts{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(stmt.SQL, "AS breakdown_raw"); got != grouped {
			t.Errorf("%s: grouped first %v, want %v\n%s", body, got, grouped, stmt.SQL)
		}
	}
}
