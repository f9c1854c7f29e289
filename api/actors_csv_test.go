package api

import (
	"encoding/json"
	"testing"
)

// The export's name is the list's name (displayName), whatever the
// properties hold.
func TestExportNameIsTheDisplayName(t *testing.T) {
	names := []string{"email", "name", "a<b"}
	for _, props := range []string{
		`{}`, `{"email":"ada@example.com"}`, `{"email":"","name":"Ada"}`, `{"email":5,"name":"Ada"}`,
		`{"x":"email","y":"\"name\""}`, `{"nested":{"email":"no"},"name":"top"}`, `{"a\u003cb":"escaped key"}`,
		`{"a<b":"plain key"}`, `{"name":null}`, `not json`,
	} {
		for _, ids := range [][]string{nil, {"d1", "d2"}} {
			p := personJSON{ID: "id", Properties: json.RawMessage(props), DistinctIDs: ids}
			want := "id"
			if json.Valid(p.Properties) {
				want = displayName(p, names)
			} else if len(ids) > 0 {
				want = ids[0]
			}
			if got := exportName(p, names); got != want {
				t.Errorf("%s %v: %q, want %q", props, ids, got, want)
			}
		}
	}
}
