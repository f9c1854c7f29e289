package querybuilder

import (
	"fmt"
	"strings"
	"time"

	"github.com/insightd/insightd/querybuilder/hogql"
)

// A HogQLQuery's filters (dateRange, properties, filterTestAccounts)
// fill the {filters} placeholder of its text, as PostHog's
// replace_filters does: the placeholder is the condition the filters
// put on a row of the events table the select holding it reads (in its
// FROM or a join): timestamp >= date_from (unless all), timestamp <
// date_to, the property conditions and, with filterTestAccounts, the
// project's test-account filters; true when they say nothing. The
// dates are read as sent, a day meaning its midnight in the project's
// timezone (date_to 2026-03-07 ends before that day, as in PostHog).
// Without the placeholder the filters change nothing: PostHog applies
// them only where the text asks for them.
//
// The condition is a column the events scan computes (filtersColumn),
// so the placeholder means the same wherever the text puts it (WHERE,
// a column, countIf): its values are bound like the analyses' filters,
// its person conditions read the person the scan joins.

// filtersColumn is the column of an events scan holding the filters'
// condition, and filtersPersonColumn prefixes the person expressions it
// reads (pf_0, pf_1...), apart from the fields' (pp_) and the scan
// condition's (pc_). No field of a statement resolves to either.
const (
	filtersColumn       = "filters_match"
	filtersPersonColumn = "pf_"
)

// hogqlFilters is a statement's filters: what they say, parsed, and once
// the placeholder asks for it their condition over the events row e
// with what it reads of the event's person.
type hogqlFilters struct {
	common   *Common
	from, to *time.Time
	props    *PropertyFilter
	// compiled marks cond and reads as written (the first {filters});
	// cond is "" when the filters say nothing.
	compiled bool
	cond     string
	reads    *personReads
}

// parseFilters reads the request's filters; nil when {filters} is the
// statement's value of that name (values.filters, without filters: the
// value, as PostHog substitutes values first).
func (q *HogQLQuery) parseFilters(p Params, values map[string]any, pr *problems) *hogqlFilters {
	sent := false
	for _, k := range hogqlFilterParams {
		sent = sent || p.present(k)
	}
	if _, ok := values["filters"]; ok {
		if sent {
			pr.add(hogqlValuesParam, "values.filters and filters are both given: {filters} is the placeholder filters fill; name the value otherwise")
		}
		return nil
	}
	q.parse(p, pr)
	f := &hogqlFilters{common: &q.Common}
	for _, b := range []struct {
		name, value string
		at          **time.Time
	}{{"date_from", q.DateFrom, &f.from}, {"date_to", q.DateTo, &f.to}} {
		v := strings.TrimSpace(b.value)
		if v == "" || (b.name == "date_from" && strings.EqualFold(v, "all")) {
			continue // date_from all: no lower bound
		}
		t, _, err := q.clock.parse(v, false)
		if err != nil {
			pr.add(b.name, "%s: %v", b.name, err)
			continue
		}
		// What a relative date resolved to keys the cached answer.
		q.relative = append(q.relative, t)
		*b.at = &t
	}
	f.props = andFilters(q.Properties, q.TestAccounts)
	unsupported := func(f *PropertyFilter) bool { return f.usesSessions() || f.usesGroups() }
	switch {
	case unsupported(q.Properties):
		pr.add("properties", "session and group conditions are not supported in a HogQL query's filters; write them in the query")
	case unsupported(q.TestAccounts):
		pr.add("filter_test_accounts", "the project's test_account_filters hold session or group conditions, which a HogQL "+
			"query's filters do not apply; write them in the query")
	}
	return f
}

// compile writes the condition with the statement's binder, once.
func (f *hogqlFilters) compile(b *binder) {
	if f.compiled {
		return
	}
	f.compiled, f.reads = true, &personReads{}
	src := newEventSource(f.common, Facts{})
	sc := src.scope
	sc.binder = b
	// Person and cohort conditions read the event's person as the scan
	// joins it for person.properties: its latest properties, the merged
	// person's id.
	sc.person = func(expr string) string {
		f.reads.id = true
		f.reads.cols = append(f.reads.cols, expr)
		return fmt.Sprintf("pp.%s%d", filtersPersonColumn, len(f.reads.cols)-1)
	}
	sc.personID = func() string {
		f.reads.id = true
		return EventPersonID
	}
	var parts []string
	if f.from != nil {
		parts = append(parts, "e.timestamp >= "+b.time(*f.from))
	}
	if f.to != nil {
		parts = append(parts, "e.timestamp < "+b.time(*f.to))
	}
	if s := f.props.sql(&sc); s != "" {
		parts = append(parts, s)
	}
	if len(parts) > 0 {
		f.cond = "(" + strings.Join(parts, " AND ") + ")"
	}
}

// Filters is the compiler's {filters} hook: the condition read from the
// first events table of the select (tables in order).
func (r *hogqlResolver) Filters(b *binder) func(tables []hogql.FieldRef) (string, error) {
	return func(tables []hogql.FieldRef) (string, error) {
		for _, t := range tables {
			if t.Table != "events" {
				continue
			}
			r.filters.compile(b)
			if r.filters.cond == "" {
				return "true", nil
			}
			r.scan(t.Alias).filters = true
			return t.Alias + "." + filtersColumn, nil
		}
		return "", &hogql.Error{Pos: -1, Msg: "the {filters} placeholder must be in a SELECT that reads events (in its FROM or a join)"}
	}
}
