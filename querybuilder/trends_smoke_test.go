package querybuilder_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/insightd/insightd/querybuilder"
)

// Every combination of math, display, interval, breakdown and compare
// compiles to SQL the engine accepts (on an empty project), and its rows
// shape into series.
func TestEveryTrendsStatementRunsOnTheEngine(t *testing.T) {
	eng := testEngine(t)
	team := newTeam()
	maths := []string{"total", "dau", "weekly_active", "monthly_active", "unique_session", "unique_group", "sum", "avg", "min", "max",
		"median", "p75", "p90", "p95", "p99", "avg_count_per_actor", "min_count_per_actor", "max_count_per_actor",
		"median_count_per_actor", "p90_count_per_actor", "p95_count_per_actor", "p99_count_per_actor"}
	displays := []string{"ActionsLineGraph", "ActionsLineGraphCumulative", "BoldNumber"}
	intervals := []string{"hour", "day", "week", "month"}
	now := time.Date(2026, 3, 10, 15, 30, 0, 0, time.UTC)
	extras := []string{"", `"breakdown": "$browser", "compare": true,`,
		`"breakdown": "plan", "breakdown_type": "person", "properties": [{"key": "email", "value": "x", "operator": "icontains", "type": "person"}],`}
	// Every math with every display; intervals and extras rotate, which
	// covers each pair of them across the maths without running all
	// combinations (each is a query).
	k := 0
	for _, math := range maths {
		for _, display := range displays {
			for _, interval := range []string{intervals[k%len(intervals)], intervals[(k+1)%len(intervals)]} {
				for _, extra := range []string{extras[k%len(extras)]} {
					k++
					body := fmt.Sprintf(`{%s "events": [{"id": "$pageview", "math": %q, "math_property": "price", "math_group_type_index": 1}, {"id": null}],
						"date_from": "-3d", "interval": %q, "display": %q, "formula": "A + B / 2"}`, extra, math, interval, display)
					name := fmt.Sprintf("%s %s %s %s", math, display, interval, extra)
					params, err := querybuilder.ParseBody([]byte(body))
					if err != nil {
						t.Fatal(err)
					}
					q, err := querybuilder.ParseTrends(params, querybuilder.Env{Project: querybuilder.Project{ID: team, Timezone: "Europe/Berlin", WeekStartDay: 1}, Now: now})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					stmt, err := querybuilder.BuildTrends(q, querybuilder.Facts{})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					rows, err := eng.Query(context.Background(), stmt)
					if err != nil {
						t.Fatalf("%s: %v\n%s", name, err, stmt)
					}
					res, err := querybuilder.ShapeTrends(q, rows.Data)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if _, err := json.Marshal(res); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
}
