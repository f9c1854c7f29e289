package querybuilder

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// eventsListGolden are the cases of testdata/events_list/<name>.sql, as
// query parameters.
var eventsListGolden = map[string]map[string]string{
	"default":          {},
	"every_filter":     {"event": "$pageview", "distinct_id": "ada", "person_id": "0190D6A2-5B7E-7C3A-9F1E-2D4B6A8C0E12", "after": "2026-03-01", "before": "-1d", "limit": "50"},
	"cursor_newest":    {"before": "2026-03-04T05:06:07.123456Z", "before_uuid": "0190d6a2-5b7e-7c3a-9f1e-2d4b6a8c0e12"},
	"cursor_oldest":    {"orderBy": `["timestamp"]`, "after": "2026-03-04T05:06:07.123456Z", "after_uuid": "0190d6a2-5b7e-7c3a-9f1e-2d4b6a8c0e12"},
	"event_properties": {"properties": `[{"key": "$browser", "value": "Chrome"}, {"key": "amount", "value": 10, "operator": "gt"}]`},
	"person_property":  {"properties": `{"type": "OR", "values": [{"key": "plan", "value": "pro", "type": "person"}, {"key": "$os", "value": "Mac"}]}`},
	"date_property":    {"properties": `[{"key": "signed_up", "value": "2026-03-01", "operator": "is_date_after"}]`},
}

func TestEventsListGoldenSQL(t *testing.T) {
	dir := filepath.Join("testdata", "events_list")
	names := make([]string, 0, len(eventsListGolden))
	for name := range eventsListGolden {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			build := func() string {
				q, err := ParseEventsList(eventsListGolden[name], Env{Project: goldenProject, Now: testNow})
				if err != nil {
					t.Fatal(err)
				}
				stmt, err := BuildEventsList(q, Facts{})
				if err != nil {
					t.Fatal(err)
				}
				return stmt.String()
			}
			got := build()
			for range 3 {
				if build() != got {
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
				t.Fatalf("%v (run go test ./querybuilder -run EventsListGoldenSQL -update)", err)
			}
			if got != string(want) {
				t.Fatalf("SQL differs from %s (refresh with -update if intended):\n%s", path, got)
			}
		})
	}
}

// Every string the list takes: the event, the distinct id, property keys
// and values.
func TestEventsListHostileValuesNeverReachTheSQLText(t *testing.T) {
	checkHostile(t, func(t *testing.T, v string) Statement {
		s := quoted(t, v)
		q, err := ParseEventsList(map[string]string{"event": v, "distinct_id": v,
			"properties": `[{"key": ` + s + `, "value": ` + s + `}, {"key": ` + s + `, "value": [` + s + `], "operator": "is_not", "type": "person"}]`},
			Env{Project: goldenProject, Now: testNow})
		if err != nil {
			t.Fatal(err)
		}
		stmt, err := BuildEventsList(q, Facts{})
		if err != nil {
			t.Fatal(err)
		}
		return stmt
	})
}

func TestEventsListValidation(t *testing.T) {
	for _, tc := range []struct {
		params map[string]string
		attrs  []string
	}{
		{map[string]string{"person_id": "1 OR 1=1", "limit": "0"}, []string{"person_id", "limit"}},
		{map[string]string{"after": "soon", "before": "later"}, []string{"after", "before"}},
		{map[string]string{"after_uuid": "0190d6a2-5b7e-7c3a-9f1e-2d4b6a8c0e12"}, []string{"after_uuid"}},
		{map[string]string{"orderBy": `["-timestamp", "event"]`}, []string{"orderBy"}},
		{map[string]string{"properties": `{"type": "XOR", "values": []}`}, []string{"properties"}},
	} {
		_, err := ParseEventsList(tc.params, Env{Project: goldenProject, Now: testNow})
		var got []string
		for _, ve := range ValidationErrors(err) {
			got = append(got, ve.Attr)
		}
		if strings.Join(got, ",") != strings.Join(tc.attrs, ",") {
			t.Errorf("%v: problems with %v, want %v (%v)", tc.params, got, tc.attrs, err)
		}
	}
	q, err := ParseEventsList(map[string]string{"limit": "100000"}, Env{Project: goldenProject, Now: testNow})
	if err != nil || q.Limit != EventsListMaxLimit {
		t.Errorf("a limit past the maximum is clamped: %v %d", err, q.Limit)
	}
}
