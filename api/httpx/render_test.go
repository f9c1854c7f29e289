package httpx

import (
	"encoding/json"
	"reflect"
	"testing"
)

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
