package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/insightd/insightd/api/httpx"
	"github.com/insightd/insightd/querybuilder"
)

// A HogQL statement the engine refuses as written (aggregation, types,
// values that do not parse) answers 400 naming the query, with the
// engine's message cleaned of the compiled statement; an EventsQuery's
// names its select, and an aggregate in its where is refused before it
// runs.
func TestQueryStatementsTheEngineRefusesAnswer400(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, queryEvents())
	for _, tc := range []struct {
		name, node, attr, detail string
	}{
		{"a column neither aggregated nor grouped (215)", `{"kind": "HogQLQuery", "query": "SELECT event, count() FROM events"}`,
			"query.query", "Column 'event' is not under aggregate function and not in GROUP BY keys."},
		{"an aggregate in WHERE (184)", `{"kind": "HogQLQuery", "query": "SELECT count() FROM events WHERE count() > 1"}`,
			"query.query", "Aggregate function count() is found in WHERE"},
		{"a date that does not parse (38)", `{"kind": "HogQLQuery", "query": "SELECT toDate('x')"}`,
			"query.query", "Cannot parse date"},
		{"a date and time that does not parse (41)", `{"kind": "HogQLQuery", "query": "SELECT toDateTime('x') FROM events"}`,
			"query.query", "Cannot parse DateTime"},
		{"arguments of the wrong types (43)", `{"kind": "HogQLQuery", "query": "SELECT 1 + 'a' FROM events"}`,
			"query.query", "Illegal types Int64 and String of arguments of function plus."},
		{"a scalar subquery of many rows (125)", `{"kind": "HogQLQuery", "query": "SELECT count() FROM events WHERE event = (SELECT event FROM events)"}`,
			"query.query", "Scalar subquery returned more than one row."},
		{"a string longer than the engine makes (131)", `{"kind": "HogQLQuery", "query": "SELECT leftPad('a', 2000000000)"}`,
			"query.query", "too big"},
		{"a bool that does not parse (467)", `{"kind": "HogQLQuery", "query": "SELECT toBool('maybe')"}`,
			"query.query", "Cannot parse boolean value"},
		{"a quantile level out of range (12)", `{"kind": "HogQLQuery", "query": "SELECT quantile(5)(1)"}`,
			"query.query", "Quantile level"},
		{"a regular expression that does not compile (427)", `{"kind": "HogQLQuery", "query": "SELECT match(event, '(') FROM events"}`,
			"query.query", "missing )"},
		{"a uuid that does not parse", `{"kind": "HogQLQuery", "query": "SELECT toUUID('x')"}`,
			"query.query", "UUID"},
		{"a huge array (128)", `{"kind": "HogQLQuery", "query": "SELECT arrayWithConstant(2000000000, 1)"}`,
			"query.query", "array"},
		{"an events list selecting arguments of the wrong types", `{"kind": "EventsQuery", "select": ["event", "1 + 'a'"]}`,
			"query.select", "Illegal types Int64 and String of arguments of function plus."},
		{"an events list with an aggregate in where", `{"kind": "EventsQuery", "select": ["event", "count()"], "where": ["event != ''", "count() > 1"]}`,
			"query.where[1]", "aggregate functions are not allowed in where"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := p.query(t, js(t, tc.node))
			var attr, detail, errCode string
			json.Unmarshal(body["attr"], &attr)
			json.Unmarshal(body["detail"], &detail)
			json.Unmarshal(body["code"], &errCode)
			if code != 400 || errCode != "invalid_input" || attr != tc.attr || !strings.Contains(detail, tc.detail) {
				t.Fatalf("want 400 invalid_input at %s saying %q, got %d %s", tc.attr, tc.detail, code, mustJSON(t, body))
			}
			for _, internal := range []string{"hq_", "team", "SETTINGS", "Code:", "DB::", "_CAST", "mat_", "(NOT_AN", "(ILLEGAL"} {
				if strings.Contains(detail, internal) {
					t.Errorf("the detail shows %q: %s", internal, detail)
				}
			}
		})
	}
}

// statementError leaves every code outside its allow-list, and errors
// without a code, to toError: a syntax error of the compiled SQL is
// insightd's bug, a 500; an unknown identifier is the statement's.
func TestStatementErrorKeepsOtherErrorsTheServers(t *testing.T) {
	env := newFunnelEnv(t)
	for _, tc := range []struct {
		sql  string
		kind httpx.Kind
	}{
		{"SELECT nosuch_column FROM system.one", httpx.KindInvalid},
		{"SELECT FROM WHERE", httpx.KindInternal},
	} {
		_, err := env.s.analysis.Query(t.Context(), 1, querybuilder.Statement{SQL: tc.sql})
		if err == nil {
			t.Fatalf("%s ran", tc.sql)
		}
		if e := httpx.ToError(statementError(err, "query.query")); e.Kind != tc.kind {
			t.Errorf("%s: kind %v, want %v (%v)", tc.sql, e.Kind, tc.kind, err)
		}
	}
	if e := httpx.ToError(statementError(fmt.Errorf("plain"), "query.query")); e.Kind != httpx.KindInternal {
		t.Errorf("an error without a code: %v", e.Kind)
	}
}

// An EventsQuery's event, range and properties narrow its own scan, not
// the subqueries its where and select hold: the users who signed up are
// found among all events while their pageviews are counted.
func TestEventsQueryNarrowsOnlyItsOwnScan(t *testing.T) {
	env := newFunnelEnv(t)
	p := env.project(t, queryEvents())
	for _, tc := range []struct{ name, node, want string }{
		{"a where holding a subquery over events",
			`{"kind": "EventsQuery", "select": ["count()"], "event": "$pageview", "after": "2026-02-01", "properties": [{"key": "plan", "value": "pro", "operator": "exact", "type": "event"}], ` +
				`"where": ["distinct_id IN (SELECT distinct_id FROM events WHERE event = 'signup')"]}`, `[[6]]`},
		{"a select holding a subquery over events",
			`{"kind": "EventsQuery", "select": ["count()", "(SELECT count() FROM events WHERE event = 'signup')"], "event": "$pageview"}`, `[[10,3]]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := p.query(t, js(t, tc.node))
			if code != 200 || string(body["results"]) != tc.want {
				t.Fatalf("want %s, got %d %s", tc.want, code, mustJSON(t, body))
			}
		})
	}
}
