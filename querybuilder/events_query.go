package querybuilder

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/insightd/insightd/querybuilder/hogql"
)

// EventsQuery is PostHog's list of events as a query node: select and
// where are HogQL expressions over one event, compiled as a HogQL
// statement over events; event, after, before and properties narrow the
// events scan itself. A select holding aggregates groups by its other
// columns, as PostHog's does.

// EventsStar is what a select column "*" compiles to: the event's own
// fields, which the caller answers as an object with these keys.
var EventsStar = []string{"uuid", "event", "properties", "timestamp", "distinct_id"}

// EventsQueryStatement is a compiled EventsQuery: Star marks the columns
// that were "*" (a tuple of EventsStar).
type EventsQueryStatement struct {
	HogQLStatement
	Star []bool
}

// eventsQueryNode is an EventsQuery's fields.
type eventsQueryNode struct {
	Select             []string        `json:"select"`
	Where              []string        `json:"where"`
	OrderBy            []string        `json:"orderBy"`
	Limit              *int64          `json:"limit"`
	Offset             *int64          `json:"offset"`
	After              string          `json:"after"`
	Before             string          `json:"before"`
	Event              string          `json:"event"`
	Properties         json.RawMessage `json:"properties"`
	FilterTestAccounts json.RawMessage `json:"filterTestAccounts"`
}

// eventsQueryIgnored are fields of the node that say how a client shows
// the list.
var eventsQueryIgnored = map[string]bool{"kind": true, "response": true, "modifiers": true, "tags": true, "version": true}

// BuildEventsQuery compiles an EventsQuery node found at path.
func BuildEventsQuery(raw json.RawMessage, path string, env Env) (EventsQueryStatement, error) {
	var fields map[string]json.RawMessage
	var n eventsQueryNode
	if json.Unmarshal(raw, &fields) != nil || json.Unmarshal(raw, &n) != nil {
		return EventsQueryStatement{}, &ValidationError{Attr: path, Detail: path + " must be an EventsQuery object: select and where are lists of HogQL expressions"}
	}
	pr := &problems{}
	known := map[string]bool{"select": true, "where": true, "orderBy": true, "limit": true, "offset": true, "after": true,
		"before": true, "event": true, "properties": true, "filterTestAccounts": true}
	for k, v := range fields {
		if !known[k] && !eventsQueryIgnored[k] && !isNull(v) {
			pr.add(path+"."+k, "%s.%s is not supported", path, k)
		}
	}
	if len(n.Select) == 0 {
		pr.add(path+".select", "%s.select must list at least one expression", path)
	}
	sel := &hogql.Select{From: &hogql.From{Table: []string{"events"}}}
	var star []bool
	for i, src := range n.Select {
		at := fmt.Sprintf("%s.select[%d]", path, i)
		if strings.TrimSpace(src) == "*" {
			src = "tuple(" + strings.Join(EventsStar, ", ") + ")"
		}
		x, err := hogql.ParseExpr(src)
		if err != nil {
			pr.add(at, "%s: %s", at, hogqlMessage(err))
			continue
		}
		sel.Columns = append(sel.Columns, x)
		star = append(star, strings.TrimSpace(n.Select[i]) == "*")
	}
	var where []hogql.Expr
	for i, src := range n.Where {
		at := fmt.Sprintf("%s.where[%d]", path, i)
		x, err := hogql.ParseExpr(src)
		if err != nil {
			pr.add(at, "%s: %s", at, hogqlMessage(err))
			continue
		}
		if hogql.HasAggregate(x) {
			// The engine would refuse it too, without naming which
			// condition.
			pr.add(at, "%s: aggregate functions are not allowed in where; a where condition is over one event", at)
			continue
		}
		where = append(where, x)
	}
	switch len(where) {
	case 0:
	case 1:
		sel.Where = where[0]
	default:
		sel.Where = &hogql.Logic{Op: "AND", Items: where}
	}
	agg := false
	for _, x := range sel.Columns {
		agg = agg || hogql.HasAggregate(x)
	}
	if agg {
		for _, x := range sel.Columns {
			if !hogql.HasAggregate(x) {
				sel.GroupBy = append(sel.GroupBy, x)
			}
		}
	}
	for i, src := range n.OrderBy {
		at := fmt.Sprintf("%s.orderBy[%d]", path, i)
		o := hogql.OrderBy{}
		text := strings.TrimSpace(src)
		if upper := strings.ToUpper(text); strings.HasSuffix(upper, " DESC") {
			o.Desc, text = true, text[:len(text)-5]
		} else if strings.HasSuffix(upper, " ASC") {
			text = text[:len(text)-4]
		}
		x, err := hogql.ParseExpr(text)
		if err != nil {
			pr.add(at, "%s: %s", at, hogqlMessage(err))
			continue
		}
		o.X = x
		sel.OrderBy = append(sel.OrderBy, o)
	}
	if len(n.OrderBy) == 0 && !agg {
		sel.OrderBy = []hogql.OrderBy{{X: &hogql.Field{Chain: []string{"timestamp"}}, Desc: true}}
	}
	if n.Limit != nil {
		if *n.Limit < 1 {
			pr.add(path+".limit", "%s.limit must be at least 1", path)
		}
		sel.Limit = &hogql.Constant{Value: *n.Limit}
	}
	if n.Offset != nil {
		if *n.Offset < 0 {
			pr.add(path+".offset", "%s.offset must not be negative", path)
		}
		sel.Offset = &hogql.Constant{Value: *n.Offset}
	}
	cond, b := eventsQueryScan(n, path, env, pr)
	if !pr.ok() {
		return EventsQueryStatement{}, pr.err()
	}
	st, err := compileHogQL(sel, nil, env, path, b, cond, nil)
	if err != nil {
		return EventsQueryStatement{}, err
	}
	return EventsQueryStatement{HogQLStatement: st, Star: star}, nil
}

// eventsQueryScan compiles what narrows the events scan: the event, the
// range (after, before) and the property filters, over the row e (with
// what they read of its person), and the binder holding them.
func eventsQueryScan(n eventsQueryNode, path string, env Env, pr *problems) (scanCond, *binder) {
	reads := &personReads{}
	c := newCommon(env, pr)
	local := &problems{}
	p := Params{"properties": n.Properties, "filter_test_accounts": n.FilterTestAccounts}
	c.parse(p, local)
	for _, ve := range ValidationErrors(local.err()) {
		attr := path + ".properties"
		if ve.Attr == "filter_test_accounts" || ve.Attr == "test_account_filters" {
			attr = path + ".filterTestAccounts"
		}
		pr.add(attr, "%s", ve.Detail)
	}
	src := newEventSource(&c, Facts{})
	var parts []string
	if n.Event != "" {
		parts = append(parts, "e.event = "+src.str(n.Event))
	}
	for _, b := range []struct{ name, value, op string }{{"after", n.After, ">"}, {"before", n.Before, "<"}} {
		if strings.TrimSpace(b.value) == "" || (b.name == "after" && strings.EqualFold(strings.TrimSpace(b.value), "all")) {
			continue // after "all": no lower bound, as PostHog reads it
		}
		t := eventsListTime(map[string]string{b.name: b.value}, b.name, c.clock, local)
		if t == nil {
			pr.add(path+"."+b.name, "%s.%s: %q is not a date or a relative date such as -24h", path, b.name, b.value)
			continue
		}
		parts = append(parts, "e.timestamp "+b.op+" "+src.time(*t))
	}
	f := andFilters(c.Properties, c.TestAccounts)
	unsupported := func(f *PropertyFilter) bool { return f.usesSessions() || f.usesGroups() }
	switch {
	case unsupported(c.Properties):
		pr.add(path+".properties", "%s.properties: session and group conditions are not supported here; use where", path)
	case unsupported(c.TestAccounts):
		// The project's test-account filters hold such a condition: the
		// field the client sent is filterTestAccounts.
		pr.add(path+".filterTestAccounts", "%s.filterTestAccounts: the project's test_account_filters hold session or group "+
			"conditions, which events queries do not apply; filter with where instead", path)
	default:
		// Person and cohort conditions read the event's person as the
		// scan joins it for person.properties (hogqlResolver.Source):
		// the person's latest properties, the merged person's id.
		sc := src.scope
		sc.person = func(expr string) string {
			reads.id = true
			reads.cols = append(reads.cols, expr)
			return fmt.Sprintf("pp.%s%d", condPersonColumn, len(reads.cols)-1)
		}
		sc.personID = func() string {
			reads.id = true
			return EventPersonID
		}
		if s := f.sql(&sc); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return scanCond{reads: reads}, src.binder
	}
	return scanCond{sql: "\n      AND " + strings.Join(parts, "\n      AND "), reads: reads}, src.binder
}
