package api

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// readCSV checks a CSV answer and returns it as one map per row.
func readCSV(t *testing.T, f *fixture, method, path, body string, status int) []map[string]string {
	t.Helper()
	w := send(t, f, method, path, f.a.PersonalAPIKey, body)
	if w.Code != status || w.Header().Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("%s %s: %d %q %s", method, path, w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	records, err := csv.NewReader(w.Body).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, w.Body)
	}
	if len(records) == 0 {
		return nil
	}
	var rows []map[string]string
	for _, r := range records[1:] {
		row := map[string]string{}
		for k, col := range records[0] {
			row[col] = r[k]
		}
		rows = append(rows, row)
	}
	return rows
}

func TestInsightCSV(t *testing.T) {
	f := newFixture(t)
	hostile := "Quote \" comma, newline\n and =1+1"
	a := f.newInsight(t, map[string]any{"name": "Trend", "filters": trendsFilters, "tags": []any{"web", "kpi"}, "saved": true})
	b := f.newInsight(t, map[string]any{"name": hostile, "description": "second"})
	list := f.insights(f.a.ProjectID)

	t.Run("the list is one row per insight with flattened columns", func(t *testing.T) {
		rows := readCSV(t, f, "GET", list+"?format=csv", "", 200)
		if len(rows) != 2 {
			t.Fatalf("%d rows: %v", len(rows), rows)
		}
		want := []map[string]string{
			{"id": fmt.Sprint(b["id"]), "name": hostile, "description": "second", "filters": "{}", "tags": "[]", "saved": "false",
				"created_by.email": "ada@example.com", "query": "", "timezone": "UTC", "short_id": b["short_id"].(string)},
			{"id": fmt.Sprint(a["id"]), "name": "Trend", "tags": `["web","kpi"]`, "saved": "true", "deleted": "false",
				"last_modified_by.email": "ada@example.com", "effective_privilege_level": "37", "dashboards": "[]"},
		}
		var filters map[string]any
		if err := json.Unmarshal([]byte(rows[1]["filters"]), &filters); err != nil || !reflect.DeepEqual(filters, trendsFilters) {
			t.Errorf("filters cell %q is not the filters as JSON", rows[1]["filters"])
		}
		for k, w := range want {
			for col, v := range w {
				if rows[k][col] != v {
					t.Errorf("row %d %s = %q, want %q", k, col, rows[k][col], v)
				}
			}
		}
	})
	t.Run("the header names every field, users flattened", func(t *testing.T) {
		w := send(t, f, "GET", list+"?format=csv", f.a.PersonalAPIKey, "")
		header, _ := csv.NewReader(w.Body).Read()
		for _, col := range []string{"id", "short_id", "filters", "query", "result", "created_by.id", "created_by.email",
			"created_by.hedgehog_config", "last_modified_by.uuid", "timezone", "is_cached"} {
			if !slices.Contains(header, col) {
				t.Errorf("no column %s in %v", col, header)
			}
		}
	})
	t.Run("list filters apply to the CSV", func(t *testing.T) {
		if rows := readCSV(t, f, "GET", list+"?format=csv&saved=true", "", 200); len(rows) != 1 || rows[0]["name"] != "Trend" {
			t.Fatalf("%v", rows)
		}
	})
	t.Run("an empty list is an empty CSV", func(t *testing.T) {
		if rows := readCSV(t, f, "GET", list+"?format=csv&search=nothing-matches", "", 200); len(rows) != 0 {
			t.Fatalf("%v", rows)
		}
	})
	one := f.insight(f.a.ProjectID, a["id"])
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"retrieve", "GET", one + "?format=csv", "", 200},
		{"update", "PATCH", one + "?format=csv", `{"description": "via csv"}`, 200},
		{"viewed", "POST", one + "viewed/?format=csv", "", 200},
		{"create", "POST", list + "?format=csv", `{"name": "Trend"}`, 201},
	} {
		t.Run(tc.name+" as CSV is one row", func(t *testing.T) {
			rows := readCSV(t, f, tc.method, tc.path, tc.body, tc.status)
			if len(rows) != 1 || rows[0]["name"] != "Trend" || rows[0]["created_by.email"] != "ada@example.com" {
				t.Fatalf("%v", rows)
			}
		})
	}
	t.Run("my_last_viewed as CSV is one row per insight", func(t *testing.T) {
		if rows := readCSV(t, f, "GET", list+"my_last_viewed/?format=csv", "", 200); len(rows) != 1 || rows[0]["id"] != fmt.Sprint(a["id"]) {
			t.Fatalf("%v", rows)
		}
	})
	t.Run("activity as CSV is one row per entry", func(t *testing.T) {
		rows := readCSV(t, f, "GET", list+"activity/?format=csv", "", 200)
		var acts []string
		for _, r := range rows {
			acts = append(acts, r["activity"]+" "+r["detail.name"])
		}
		if !reflect.DeepEqual(acts, []string{"created Trend", "updated Trend", "created " + hostile, "created Trend"}) {
			t.Fatalf("%q", acts)
		}
		if !strings.Contains(rows[1]["detail.changes"], `"after":"via csv"`) || rows[1]["user.email"] != "ada@example.com" {
			t.Fatalf("%v", rows[1])
		}
	})
	t.Run("sharing as CSV is one row", func(t *testing.T) {
		rows := readCSV(t, f, "GET", one+"sharing/?format=csv", "", 200)
		if len(rows) != 1 || rows[0]["enabled"] != "false" || len(rows[0]["access_token"]) < 32 {
			t.Fatalf("%v", rows)
		}
	})
	t.Run("cancel as CSV is one row", func(t *testing.T) {
		rows := readCSV(t, f, "POST", list+"cancel/?format=csv", `{"client_query_id": "nothing"}`, 201)
		if len(rows) != 1 || rows[0]["cancelled"] != "false" || rows[0]["client_query_id"] != "nothing" {
			t.Fatalf("%v", rows)
		}
	})
	for _, format := range []string{"xml", "CSV", "csv,json", "%00"} {
		t.Run("format="+format+" is 400 naming format, and nothing is created", func(t *testing.T) {
			st, body := call(t, f.h, "POST", list+"?format="+format, f.a.PersonalAPIKey, map[string]any{"name": "never"})
			if st != 400 || body["attr"] != "format" {
				t.Fatalf("%d %v", st, body)
			}
		})
	}
	var n int
	f.s.store.DB().Get(&n, "SELECT count(*) FROM insights WHERE name = 'never'")
	if n != 0 {
		t.Fatal("a request with a bad format created an insight")
	}
	t.Run("format=json is the JSON answer", func(t *testing.T) {
		if st, body := call(t, f.h, "GET", one+"?format=json", f.a.PersonalAPIKey, nil); st != 200 || body["name"] != "Trend" {
			t.Fatalf("%d %v", st, body)
		}
	})
}
