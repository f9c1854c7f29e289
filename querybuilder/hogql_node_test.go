package querybuilder

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hogqlNode compiles a HogQL node as the query API and saved insights
// do: translated, parsed in the golden project, built.
func hogqlNode(t *testing.T, node string) (Statement, error) {
	t.Helper()
	n, err := TranslateHogQLNode(json.RawMessage(node), "query")
	if err != nil {
		return Statement{}, err
	}
	q, err := ParseHogQL(n.Params, Env{Project: goldenProject, Now: testNow})
	if err != nil {
		return Statement{}, NodeErrors(n, err)
	}
	return q.Build(Facts{})
}

func TestHogQLFiltersGoldenSQL(t *testing.T) {
	// checkGolden reads bodies as legacy filters (a top-level filters is
	// the filter): the node travels as a string instead.
	build := func(p Params) (Statement, error) {
		var node string
		if err := json.Unmarshal(p["node"], &node); err != nil {
			return Statement{}, err
		}
		return hogqlNode(t, node)
	}
	wrap := func(node string) string { return `{"node": ` + quoted(t, node) + `}` }
	cases := map[string]string{
		// Dates as sent, an event and a person condition, the project's
		// test accounts (a person condition too): one column of the scan.
		"filters_where": `{"kind": "HogQLQuery", "query": "SELECT event, count() FROM events WHERE {filters} GROUP BY event",
			"filters": {"dateRange": {"date_from": "2026-03-01", "date_to": "-1dStart"},
			"properties": [{"key": "$browser", "value": "Chrome"}, {"key": "plan", "value": ["pro", "team"], "type": "person"}],
			"filterTestAccounts": true}}`,
		// The placeholder in a subquery and in a column reads the scan of
		// its own select; the outer scan of persons needs none.
		"filters_nested": `{"kind": "DataVisualizationNode", "display": "ActionsTable", "chartSettings": {"goalLines": []},
			"source": {"kind": "HogQLQuery", "query": "SELECT count() FROM persons WHERE id IN (SELECT person_id FROM events WHERE {filters} AND event = 'signup')",
			"filters": {"dateRange": {"date_from": "-7d"}}}}`,
		"filters_in_a_column": `{"kind": "HogQLQuery", "query": "SELECT countIf({filters}), count() FROM events",
			"filters": {"properties": [{"key": "$os", "value": "Mac", "operator": "icontains"}]}}`,
	}
	for name, node := range cases {
		cases[name] = wrap(node)
	}
	checkGolden(t, filepath.Join("testdata", "hogql"), cases, build)
}

func TestHogQLFiltersApplyOnlyWhereThePlaceholderIs(t *testing.T) {
	plain, err := hogqlNode(t, `{"kind": "HogQLQuery", "query": "SELECT count() FROM events"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range []string{
		`{"kind": "HogQLQuery", "query": "SELECT count() FROM events", "filters": {"dateRange": {"date_from": "-7d"}, "properties": [{"key": "a", "value": "b"}]}}`,
		`{"kind": "DataVisualizationNode", "source": {"kind": "HogQLQuery", "query": "SELECT count() FROM events", "filters": {"filterTestAccounts": true}}}`,
	} {
		st, err := hogqlNode(t, node)
		if err != nil {
			t.Fatal(err)
		}
		if st.SQL != plain.SQL {
			t.Errorf("%s: filters without {filters} changed the statement:\n%s", node, st.SQL)
		}
	}
	// Filters that say nothing make the placeholder true.
	for _, filters := range []string{``, `, "filters": {}`, `, "filters": {"filterTestAccounts": false, "dateRange": {"date_from": "all"}}`} {
		st, err := hogqlNode(t, `{"kind": "HogQLQuery", "query": "SELECT count() FROM events WHERE {filters}"`+filters+`}`)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(st.SQL, "WHERE true") || strings.Contains(st.SQL, filtersColumn) {
			t.Errorf("%q: %s", filters, st.SQL)
		}
	}
	// Without filters, a value named filters is the placeholder's value.
	st, err := hogqlNode(t, `{"kind": "HogQLQuery", "query": "SELECT {filters}", "values": {"filters": "x"}}`)
	if err != nil || !strings.Contains(st.SQL, "SELECT {p0:String}") || st.Params["p0"] != "x" {
		t.Errorf("%v %s %v", err, st.SQL, st.Params)
	}
}

// Every string of the filters is bound: property keys and values, the
// project's test-account filters are the project's own.
func TestHogQLFiltersHostileValuesNeverReachTheSQLText(t *testing.T) {
	checkHostile(t, func(t *testing.T, v string) Statement {
		s := quoted(t, v)
		st, err := hogqlNode(t, `{"kind": "HogQLQuery", "query": "SELECT count() FROM events WHERE {filters}", "filters": {"properties": [`+
			`{"key": `+s+`, "value": `+s+`}, {"key": `+s+`, "value": [`+s+`], "operator": "is_not", "type": "person"}, `+
			`{"key": `+s+`, "value": `+s+`, "operator": "icontains"}, {"key": `+s+`, "value": `+s+`, "operator": "not_icontains", "type": "person"}]}}`)
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

func TestHogQLNodesRefuseWhatTheyCannotHonour(t *testing.T) {
	for _, tc := range []struct{ name, node, attr string }{
		{"{filters} where no events are read", `{"kind": "HogQLQuery", "query": "SELECT count() FROM persons WHERE {filters}", "filters": {}}`, "query.query"},
		{"{filters} without FROM", `{"kind": "HogQLQuery", "query": "SELECT {filters}"}`, "query.query"},
		{"a date that is not one", `{"kind": "HogQLQuery", "query": "SELECT 1", "filters": {"dateRange": {"date_from": "yesterday'); DROP"}}}`, "query.filters.dateRange.date_from"},
		{"date_to all", `{"kind": "HogQLQuery", "query": "SELECT 1", "filters": {"dateRange": {"date_to": "all"}}}`, "query.filters.dateRange.date_to"},
		{"an unknown operator", `{"kind": "HogQLQuery", "query": "SELECT 1", "filters": {"properties": [{"key": "a", "value": "b", "operator": "drop"}]}}`, "query.filters.properties"},
		{"a session condition", `{"kind": "HogQLQuery", "query": "SELECT 1", "filters": {"properties": [{"key": "$session_duration", "value": 1, "operator": "gt", "type": "session"}]}}`, "query.filters.properties"},
		{"filterTestAccounts not a boolean", `{"kind": "HogQLQuery", "query": "SELECT 1", "filters": {"filterTestAccounts": "maybe"}}`, "query.filters.filterTestAccounts"},
		{"an unknown filters field", `{"kind": "HogQLQuery", "query": "SELECT 1", "filters": {"dateRnage": {}}}`, "query.filters.dateRnage"},
		{"values.filters beside filters", `{"kind": "HogQLQuery", "query": "SELECT {filters}", "values": {"filters": 1}, "filters": {"filterTestAccounts": true}}`, "query.values"},
		{"variables", `{"kind": "HogQLQuery", "query": "SELECT 1", "variables": {"a": {"code_name": "a", "value": 1}}}`, "query.variables"},
		{"another connection", `{"kind": "HogQLQuery", "query": "SELECT 1", "connectionId": "pg"}`, "query.connectionId"},
		{"no text", `{"kind": "HogQLQuery", "query": " "}`, "query.query"},
		{"a viz node without a source", `{"kind": "DataVisualizationNode", "display": "ActionsTable"}`, "query.source"},
		{"a viz node around a trends query", `{"kind": "DataVisualizationNode", "source": {"kind": "TrendsQuery", "series": []}}`, "query.source.kind"},
		{"an unknown viz field", `{"kind": "DataVisualizationNode", "source": {"kind": "HogQLQuery", "query": "SELECT 1"}, "colour": "red"}`, "query.colour"},
		{"a bad statement inside the viz node", `{"kind": "DataVisualizationNode", "source": {"kind": "HogQLQuery", "query": "SELECT FROM"}}`, "query.source.query"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := hogqlNode(t, tc.node)
			ves := ValidationErrors(err)
			if len(ves) == 0 || ves[0].Attr != tc.attr {
				t.Fatalf("want a problem naming %s, got %v", tc.attr, err)
			}
		})
	}
	// What only labels or draws the request is accepted.
	for _, node := range []string{
		`{"kind": "HogQLQuery", "query": "SELECT 1", "name": "x", "explain": true, "modifiers": {}, "tags": {}, "version": 2, "response": null, "variables": {}, "sendRawQuery": false}`,
		`{"kind": "DataVisualizationNode", "source": {"kind": "HogQLQuery", "query": "SELECT 1", "filters": {"interval": "day", "breakdownFilter": {}, "dateRange": {"explicitDate": true}}},
			"display": "BoldNumber", "chartSettings": {}, "tableSettings": {"columns": []}, "version": 1}`,
	} {
		if _, err := hogqlNode(t, node); err != nil {
			t.Errorf("%s: %v", node, err)
		}
	}
}

func TestShapeHogQLAnswersTheFirstLimitRows(t *testing.T) {
	st := HogQLStatement{Columns: []string{"day", "n"}, Limit: 2}
	day := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)
	r := ShapeHogQL(st, []string{"Date", "UInt64"}, [][]any{{day, uint64(1)}, {day, uint64(2)}, {day, uint64(3)}})
	if !r.HasMore || len(r.Results) != 2 || r.Results[0][0] != "2026-03-04" {
		t.Fatalf("%+v", r)
	}
	header, rows := r.Table()
	if fmt.Sprint(header, rows) != "[day n] [[2026-03-04 1] [2026-03-04 2]]" {
		t.Fatalf("%v %v", header, rows)
	}
	if r := ShapeHogQL(st, nil, nil); r.HasMore || r.Results == nil || r.Columns == nil || r.Types == nil {
		t.Fatalf("%+v", r)
	}
}
