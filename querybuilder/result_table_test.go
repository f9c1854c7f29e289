package querybuilder

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestTrendsTable(t *testing.T) {
	for _, tc := range []struct {
		name, result string
		header       []string
		rows         [][]string
	}{
		{"two series are two rows with one column per day",
			`[{"label": "$pageview", "data": [1, 0, 2.5], "labels": ["1-Jan-2026", "2-Jan-2026", "3-Jan-2026"], "days": ["2026-01-01", "2026-01-02", "2026-01-03"]},
			  {"label": "signup", "data": [0, 3, 1e6], "labels": ["1-Jan-2026", "2-Jan-2026", "3-Jan-2026"]}]`,
			[]string{"series", "1-Jan-2026", "2-Jan-2026", "3-Jan-2026"},
			[][]string{{"$pageview", "1", "0", "2.5"}, {"signup", "0", "3", "1000000"}}},
		{"days name the columns when labels are missing",
			`[{"label": "a, \"quoted\"", "data": [4], "days": ["2026-01-01"]}]`,
			[]string{"series", "2026-01-01"}, [][]string{{`a, "quoted"`, "4"}}},
		{"no series is a header alone", `[]`, []string{"series"}, [][]string{}},
		{"an aggregated display has one value column",
			`[{"label": "$pageview", "data": [], "aggregated_value": 12.5}, {"label": "signup", "data": [], "aggregated_value": 3}]`,
			[]string{"series", "value"}, [][]string{{"$pageview", "12.5"}, {"signup", "3"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r TrendsResult
			if err := json.Unmarshal([]byte(tc.result), &r); err != nil {
				t.Fatal(err)
			}
			header, rows := r.Table()
			if !reflect.DeepEqual(header, tc.header) || !reflect.DeepEqual(rows, tc.rows) {
				t.Fatalf("header %q rows %q\nwant %q %q", header, rows, tc.header, tc.rows)
			}
		})
	}
}

func TestFunnelStepsTable(t *testing.T) {
	var result FunnelSteps
	if err := json.Unmarshal([]byte(`[
		{"action_id": "$pageview", "name": "$pageview", "custom_name": null, "order": "0", "count": 100,
		 "average_conversion_time": null, "median_conversion_time": null},
		{"action_id": "signup", "name": "signup", "custom_name": "Signed up", "order": "1", "count": 25,
		 "average_conversion_time": 3600.5, "median_conversion_time": 1800}]`), &result); err != nil {
		t.Fatal(err)
	}
	header, rows := result.Table()
	wantHeader := []string{"step", "name", "action_id", "count", "average_conversion_time", "median_conversion_time"}
	wantRows := [][]string{{"1", "$pageview", "$pageview", "100", "", ""}, {"2", "Signed up", "signup", "25", "3600.5", "1800"}}
	if !reflect.DeepEqual(header, wantHeader) || !reflect.DeepEqual(rows, wantRows) {
		t.Fatalf("header %q rows %q", header, rows)
	}
}
