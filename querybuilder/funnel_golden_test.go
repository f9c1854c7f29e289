package querybuilder

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// funnelsGolden are the cases of testdata/funnels/<name>.sql: each order
// type, visualisation, attribution, exclusions, breakdown kinds, group
// aggregation, filters and a 20-step funnel.
func funnelsGolden() map[string]string {
	abc := `"events": [{"id": "$pageview"}, {"id": "signup"}, {"id": "purchase"}], "date_from": "2026-03-01", "date_to": "2026-03-31"`
	return map[string]string{
		"ordered":             `{` + abc + `}`,
		"strict":              `{` + abc + `, "funnel_order_type": "strict"}`,
		"unordered":           `{` + abc + `, "funnel_order_type": "unordered"}`,
		"unordered_repeated":  `{"events": [{"id": "a"}, {"id": "b"}, {"id": "a"}], "funnel_order_type": "unordered", "date_from": "-7d"}`,
		"repeated_steps":      `{"events": [{"id": "a"}, {"id": "a"}, {"id": "b"}], "date_from": "-7d"}`,
		"all_events_step":     `{"events": [{"id": "a"}, {"id": null}], "date_from": "-7d"}`,
		"window_hours":        `{` + abc + `, "funnel_window_interval": 6, "funnel_window_interval_unit": "hour"}`,
		"window_days_legacy":  `{` + abc + `, "funnel_window_days": 3}`,
		"exclusions":          `{` + abc + `, "exclusions": [{"id": "refund", "funnel_from_step": 0, "funnel_to_step": 1}, {"id": "churn", "funnel_from_step": 1, "funnel_to_step": 2}]}`,
		"strict_exclusion":    `{` + abc + `, "funnel_order_type": "strict", "exclusions": [{"id": "refund", "funnel_from_step": 0, "funnel_to_step": 2}]}`,
		"breakdown_event":     `{` + abc + `, "breakdown": "$browser"}`,
		"breakdown_last":      `{` + abc + `, "breakdown": "utm_source", "breakdown_attribution_type": "last_touch", "breakdown_limit": 3}`,
		"breakdown_step":      `{` + abc + `, "breakdown": "utm_source", "breakdown_attribution_type": "step", "breakdown_attribution_value": 1}`,
		"breakdown_person":    `{` + abc + `, "breakdown": "plan", "breakdown_type": "person"}`,
		"trends":              `{` + abc + `, "funnel_viz_type": "trends", "funnel_from_step": 1}`,
		"trends_breakdown":    `{` + abc + `, "funnel_viz_type": "trends", "interval": "week", "breakdown": "$os"}`,
		"time_to_convert":     `{` + abc + `, "funnel_viz_type": "time_to_convert", "funnel_from_step": 0, "funnel_to_step": 1, "bin_count": 10}`,
		"filters":             `{"events": [{"id": "$pageview", "properties": [{"key": "$current_url", "value": "/pricing", "operator": "icontains"}]}, {"id": "signup"}], "properties": [{"key": "plan", "value": "pro", "type": "person"}], "filter_test_accounts": true, "date_from": "-14d"}`,
		"aggregation_group":   `{"events": [{"id": "$pageview"}, {"id": "signup"}], "aggregation_group_type_index": 1, "date_from": "-14d"}`,
		"optional_step":       `{"events": [{"id": "$pageview"}, {"id": "pricing", "optionalInFunnel": true}, {"id": "signup"}, {"id": "purchase", "optionalInFunnel": true}], "breakdown": "utm_source", "breakdown_attribution_type": "step", "breakdown_attribution_value": 1, "date_from": "2026-03-01", "date_to": "2026-03-31"}`,
		"hour_trends_unorder": `{"events": [{"id": "a"}, {"id": "b"}], "funnel_order_type": "unordered", "funnel_viz_type": "trends", "interval": "hour", "date_from": "-12h"}`,
		"twenty_steps": `{"events": [{"id": "s1"}, {"id": "s2"}, {"id": "s3"}, {"id": "s4"}, {"id": "s5"}, {"id": "s6"}, {"id": "s7"}, {"id": "s8"}, {"id": "s9"}, {"id": "s10"},
			{"id": "s11"}, {"id": "s12"}, {"id": "s13"}, {"id": "s14"}, {"id": "s15"}, {"id": "s16"}, {"id": "s17"}, {"id": "s18"}, {"id": "s19"}, {"id": "s20"}], "date_from": "-7d"}`,
	}
}

func TestFunnelsGoldenSQL(t *testing.T) {
	build := func(p Params) (Statement, error) {
		q, err := ParseFunnel(p, Env{Project: goldenProject, Now: testNow})
		if err != nil {
			return Statement{}, err
		}
		return BuildFunnel(q, Facts{})
	}
	checkGolden(t, filepath.Join("testdata", "funnels"), funnelsGolden(), build)
	timing := func(p Params) (Statement, error) {
		q, err := ParseTiming(p, Env{Project: goldenProject, Now: testNow})
		if err != nil {
			return Statement{}, err
		}
		return BuildFunnel(q, Facts{})
	}
	checkGolden(t, filepath.Join("testdata", "timing"), map[string]string{
		"ordered": `{"events": [{"id": "$pageview"}, {"id": "signup"}, {"id": "purchase"}], "funnel_from_step": 1, "date_from": "-30d"}`,
	}, timing)
}

// checkGolden compares each case's statement with dir/<name>.sql, or
// rewrites the files with -update.
func checkGolden(t *testing.T, dir string, cases map[string]string, build func(Params) (Statement, error)) {
	t.Helper()
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			p, err := ParseBody([]byte(cases[name]))
			if err != nil {
				t.Fatal(err)
			}
			stmt, err := build(p)
			if err != nil {
				t.Fatal(err)
			}
			got := stmt.String()
			// The same request gives the same text, whatever map order.
			for i := 0; i < 3; i++ {
				if again, _ := build(p); again.String() != got {
					t.Fatal("building twice gave different SQL")
				}
			}
			path := filepath.Join(dir, name+".sql")
			if *update {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./querybuilder -run GoldenSQL -update)", err)
			}
			if got != string(want) {
				t.Fatalf("SQL differs from %s (refresh with -update if intended):\n%s", path, got)
			}
		})
	}
}
