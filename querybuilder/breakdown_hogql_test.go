package querybuilder

import (
	"path/filepath"
	"strings"
	"testing"
)

// hogqlTrend is a pageview trend over a week broken down by expression.
func hogqlTrend(expr, extra string) string {
	return `{"events": [{"id": "$pageview"` + extra + `}], "breakdown_type": "hogql", "breakdown": ` + quoteJSON(expr) + `, "date_from": "-7d"}`
}

func quoteJSON(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func TestHogQLBreakdownGoldenSQL(t *testing.T) {
	checkGolden(t, filepath.Join("testdata", "breakdowns"), map[string]string{
		"trend_hogql_property":   hogqlTrend("properties.$browser", ""),
		"trend_hogql_functions":  hogqlTrend("concat(lower(properties.utm_source), '-', if(properties.price > 10, 'big', 'small'))", ""),
		"trend_hogql_person":     hogqlTrend("coalesce(person.properties.plan, 'none')", `, "math": "dau"`),
		"trend_hogql_arithmetic": hogqlTrend("round(toFloat(properties.price) * 2, 1)", ""),
		"trend_hogql_multiif":    hogqlTrend("multiIf(event = '$pageview' AND properties.$os = 'Mac', 'mac', properties.$os IN ('Windows', 'Linux'), 'pc', 'other')", ""),
	}, buildKind(&trendsKind))
}

// Anything outside the subset is a 400 on breakdown naming what.
func TestHogQLBreakdownRefusalsNameWhat(t *testing.T) {
	for expr, want := range map[string]string{
		"file('/etc/passwd')":                 "function file is not allowed",
		"toStartOfDay(timestamp)":             "function toStartOfDay is not allowed",
		"count()":                             "function count is not allowed",
		"properties":                          "field properties is not allowed",
		"secret.column":                       "field secret.column is not allowed",
		"event IN (SELECT event FROM events)": "subqueries are not allowed here",
		"lower(event":                         "unexpected token end of input",
		"'unterminated":                       "unterminated string",
		"1; SELECT 1":                         "multiple statements are not allowed",
		strings.Repeat("lower(", 80) + "event" + strings.Repeat(")", 80): "nested deeper than 64",
	} {
		p, err := ParseBody([]byte(hogqlTrend(expr, "")))
		if err != nil {
			t.Fatal(err)
		}
		_, err = ParseTrends(p, Env{Project: goldenProject, Now: testNow})
		ves := ValidationErrors(err)
		if len(ves) != 1 || ves[0].Attr != "breakdown" || !strings.Contains(ves[0].Detail, want) {
			t.Errorf("%.40s: got %v, want one breakdown error saying %q", expr, err, want)
		}
	}
	for body, want := range map[string]string{
		`{"events": [{"id": "a"}, {"id": "b"}], "breakdown_type": "hogql", "breakdown": "event"}`:                                                   "expression breakdowns are for trends",
		`{"events": [{"id": "a"}], "breakdown_type": "hogql", "breakdown": "properties.x", "breakdown_histogram_bin_count": 4, "date_from": "-7d"}`: "bins are for property breakdowns",
	} {
		p, _ := ParseBody([]byte(body))
		var err error
		if strings.Contains(body, "bin_count") {
			_, err = ParseTrends(p, Env{Project: goldenProject, Now: testNow})
		} else {
			_, err = ParseFunnel(p, Env{Project: goldenProject, Now: testNow})
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", body, err, want)
		}
	}
}
