package api

import (
	"encoding/json"
	"reflect"
	"testing"
)

func decodeResult(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTrendTable(t *testing.T) {
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			header, rows := trendTable(decodeResult(t, tc.result))
			if !reflect.DeepEqual(header, tc.header) || !reflect.DeepEqual(rows, tc.rows) {
				t.Fatalf("header %q rows %q\nwant %q %q", header, rows, tc.header, tc.rows)
			}
		})
	}
}

func TestFunnelTable(t *testing.T) {
	result := decodeResult(t, `[
		{"action_id": "$pageview", "name": "$pageview", "custom_name": null, "order": 0, "count": 100,
		 "average_conversion_time": null, "median_conversion_time": null},
		{"action_id": "signup", "name": "signup", "custom_name": "Signed up", "order": 1, "count": 25,
		 "average_conversion_time": 3600.5, "median_conversion_time": 1800}]`)
	header, rows := funnelTable(result)
	wantHeader := []string{"step", "name", "action_id", "count", "average_conversion_time", "median_conversion_time"}
	wantRows := [][]string{{"1", "$pageview", "$pageview", "100", "", ""}, {"2", "Signed up", "signup", "25", "3600.5", "1800"}}
	if !reflect.DeepEqual(header, wantHeader) || !reflect.DeepEqual(rows, wantRows) {
		t.Fatalf("header %q rows %q", header, rows)
	}
}

func TestRecordsTableFlattens(t *testing.T) {
	for _, tc := range []struct {
		name   string
		v      any
		header []string
		rows   [][]string
	}{
		{"nested objects become dotted columns in key order",
			json.RawMessage(`{"b": 1, "a": {"y": "s", "x": null}, "l": [1, "two"], "e": {}}`),
			[]string{"b", "a.y", "a.x", "l", "e"}, [][]string{{"1", "s", "", `[1,"two"]`, "{}"}}},
		{"opaque documents stay one JSON cell",
			json.RawMessage(`{"filters": {"insight": "TRENDS"}, "query": {"kind": "<x>"}}`),
			[]string{"filters", "query"}, [][]string{{`{"insight":"TRENDS"}`, `{"kind":"<x>"}`}}},
		{"a list unions its records' columns in first-seen order",
			[]map[string]any{{"a": 1}, {"a": 2, "b": true}},
			[]string{"a", "b"}, [][]string{{"1", ""}, {"2", "true"}}},
		{"a list of scalars is one value column", []string{"x", "y"}, []string{"value"}, [][]string{{"x"}, {"y"}}},
		{"an empty list has no rows", []int{}, nil, [][]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			header, rows, err := recordsTable(tc.v)
			if err != nil || !reflect.DeepEqual(header, tc.header) || !reflect.DeepEqual(rows, tc.rows) {
				t.Fatalf("header %q rows %q err %v\nwant %q %q", header, rows, err, tc.header, tc.rows)
			}
		})
	}
}
