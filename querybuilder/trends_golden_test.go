package querybuilder

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// goldenProject is the project every golden statement is built for: a
// timezone with DST and Monday weeks, so that both show in parameters.
var goldenProject = Project{ID: 42, Timezone: "Europe/Berlin", WeekStartDay: 1,
	TestAccountFilters: json.RawMessage(`[{"key": "email", "operator": "not_icontains", "value": "@example.com", "type": "person"}]`)}

// trendsGolden are the cases of testdata/trends/<name>.sql: one per
// math, display, breakdown kind, compare, formula, interval and operator.
func trendsGolden() map[string]string {
	pageview := func(extra string) string {
		return `{"events": [{"id": "$pageview"` + extra + `}], "date_from": "2026-03-01", "date_to": "2026-03-07"}`
	}
	cases := map[string]string{
		"interval_hour":        `{"events": [{"id": "$pageview"}], "date_from": "2026-03-29T00:00:00", "date_to": "2026-03-29T06:00:00", "interval": "hour"}`,
		"interval_day":         pageview(""),
		"interval_week":        `{"events": [{"id": "$pageview"}], "date_from": "2026-03-01", "date_to": "2026-03-31", "interval": "week"}`,
		"interval_month":       `{"events": [{"id": "$pageview"}], "date_from": "2026-01-01", "date_to": "2026-03-31", "interval": "month"}`,
		"all_events":           `{"events": [{"id": null}], "date_from": "-7d"}`,
		"breakdown_event":      `{"events": [{"id": "$pageview"}], "breakdown": "$browser", "breakdown_limit": 5, "date_from": "-7d"}`,
		"breakdown_event_json": `{"events": [{"id": "$pageview"}], "breakdown": "utm_source", "date_from": "-7d"}`,
		"breakdown_person":     `{"events": [{"id": "$pageview", "math": "dau"}], "breakdown": "plan", "breakdown_type": "person", "date_from": "-7d"}`,
		"breakdown_dau_folded": `{"events": [{"id": "$pageview", "math": "dau"}], "breakdown": "$browser", "compare": true, "date_from": "-7d"}`,
		"compare_day":          `{"events": [{"id": "$pageview"}], "compare": true, "date_from": "-7d"}`,
		"compare_to_year":      `{"events": [{"id": "$pageview"}], "compare": true, "compare_to": "-1y", "date_from": "-7d"}`,
		"compare_hour_dau":     `{"events": [{"id": "$pageview", "math": "dau"}], "compare": true, "date_from": "-6h", "interval": "hour"}`,
		"compare_breakdown_weekly_active": `{"events": [{"id": "$pageview", "math": "weekly_active"}], "compare": true, "breakdown": "$os",
			"date_from": "-14d", "interval": "week"}`,
		"formula":                   `{"events": [{"id": "signup"}, {"id": "$pageview", "math": "dau"}], "formula": "(A / B) * 100", "date_from": "-7d"}`,
		"filter_test_accounts":      `{"events": [{"id": "$pageview"}], "filter_test_accounts": true, "date_from": "-7d"}`,
		"entity_and_global_filters": `{"events": [{"id": "$pageview", "properties": [{"key": "$current_url", "value": "/docs", "operator": "icontains"}]}], "properties": {"type": "OR", "values": [{"key": "plan", "value": "pro", "type": "person"}, {"key": "$os", "value": "Mac"}]}, "date_from": "-7d"}`,
		"person_filter":             pageview(`, "properties": [{"key": "plan", "value": "pro", "type": "person"}]`),
		"person_filter_is_not_set":  pageview(`, "properties": [{"key": "plan", "operator": "is_not_set", "type": "person"}, {"key": "$browser", "value": "Chrome"}]`),
		"person_filter_regex":       pageview(`, "properties": [{"key": "plan", "value": "^pro", "operator": "regex", "type": "person"}]`),
		"aggregation_group":         `{"events": [{"id": "$pageview", "math": "dau"}], "aggregation_group_type_index": 2, "date_from": "-7d"}`,
		"date_from_all":             `{"events": [{"id": "$pageview"}], "date_from": "all", "interval": "month"}`,
	}
	for _, m := range []string{"total", "dau", "weekly_active", "monthly_active", "unique_session", "avg_count_per_actor",
		"min_count_per_actor", "max_count_per_actor", "median_count_per_actor", "p75_count_per_actor", "p90_count_per_actor",
		"p95_count_per_actor", "p99_count_per_actor"} {
		cases["math_"+m] = pageview(`, "math": "` + m + `"`)
	}
	cases["math_unique_group"] = pageview(`, "math": "unique_group", "math_group_type_index": 0`)
	for _, m := range []string{"sum", "avg", "min", "max", "median", "p75", "p90", "p95", "p99"} {
		cases["math_"+m] = pageview(`, "math": "` + m + `", "math_property": "price"`)
	}
	for _, d := range []string{"ActionsLineGraph", "ActionsLineGraphCumulative", "ActionsBar", "ActionsTable", "ActionsPie",
		"ActionsBarValue", "WorldMap", "BoldNumber"} {
		cases["display_"+d] = `{"events": [{"id": "$pageview"}], "display": "` + d + `", "date_from": "-7d"}`
	}
	cases["display_ActionsLineGraphCumulative_dau"] = `{"events": [{"id": "$pageview", "math": "dau"}], "display": "ActionsLineGraphCumulative", "date_from": "-7d"}`
	cases["display_BoldNumber_monthly_active"] = `{"events": [{"id": "$pageview", "math": "monthly_active"}], "display": "BoldNumber", "compare": true, "date_from": "-7d"}`
	cases["display_ActionsTable_p90_count_per_actor"] = `{"events": [{"id": "$pageview", "math": "p90_count_per_actor"}], "display": "ActionsTable", "breakdown": "$browser", "date_from": "-7d"}`
	for op, cond := range map[string]string{
		"exact":          `"value": "Chrome"`,
		"exact_list":     `"value": ["Chrome", "Safari", 3], "operator": "exact"`,
		"is_not":         `"value": "Chrome", "operator": "is_not"`,
		"icontains":      `"value": "chr", "operator": "icontains"`,
		"not_icontains":  `"value": "chr", "operator": "not_icontains"`,
		"regex":          `"value": "^(Chrome|Safari)$", "operator": "regex"`,
		"not_regex":      `"value": "^Chrome", "operator": "not_regex"`,
		"gt":             `"value": 10, "operator": "gt"`,
		"gte":            `"value": "10.5", "operator": "gte"`,
		"lt":             `"value": 10, "operator": "lt"`,
		"lte":            `"value": 0, "operator": "lte"`,
		"is_set":         `"operator": "is_set"`,
		"is_not_set":     `"operator": "is_not_set"`,
		"is_date_exact":  `"value": "2026-03-01", "operator": "is_date_exact"`,
		"is_date_before": `"value": "2026-03-01T12:00:00", "operator": "is_date_before"`,
		"is_date_after":  `"value": "-30d", "operator": "is_date_after"`,
		"negation":       `"value": "Chrome", "negation": true`,
	} {
		key := "$browser"
		if strings.HasPrefix(op, "g") || strings.HasPrefix(op, "l") || strings.HasPrefix(op, "is_date") {
			key = "price"
		}
		cases["operator_"+op] = `{"events": [{"id": "$pageview"}], "properties": [{"key": "` + key + `", ` + cond + `}], "date_from": "-7d"}`
	}
	return cases
}

func TestTrendsGoldenSQL(t *testing.T) {
	checkGolden(t, filepath.Join("testdata", "trends"), trendsGolden(), func(p Params) (Statement, error) {
		q, err := ParseTrends(p, Env{Project: goldenProject, Now: testNow})
		if err != nil {
			return Statement{}, err
		}
		return BuildTrends(q, Facts{})
	})
}
