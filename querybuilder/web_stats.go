package querybuilder

import (
	"encoding/json"
	"errors"
	"sort"
	"strings"
)

// WebStatsTableQuery is a WebStatsTableQuery node: visitors and views
// (and the bounce rate) per value of one breakdown.
type WebStatsTableQuery struct {
	Common
	Compare           bool
	BreakdownBy       string
	IncludeBounceRate bool
	Limit, Offset     int
}

var webStatsKind = Kind{Name: "web_stats", Route: "web_stats", Insight: "WEB_STATS_TABLE",
	Parse: func(p Params, env Env) (Query, error) { return ParseWebStats(p, env) },
	Node:  "WebStatsTableQuery", translate: webStatsNode}

// webBreakdowns are the breakdownBy values insightd answers: the event
// property each reads and whether it is the session's first pageview's
// (InitialX), its last (ExitPage) or every pageview's (Page).
var webBreakdowns = map[string]struct {
	key  string
	mode string // "page", "first", "last"
}{
	"Page": {"$pathname", "page"}, "InitialPage": {"$pathname", "first"}, "ExitPage": {"$pathname", "last"},
	"InitialReferringDomain": {"$referring_domain", "first"},
	"InitialUTMSource":       {"utm_source", "first"}, "InitialUTMMedium": {"utm_medium", "first"},
	"InitialUTMCampaign": {"utm_campaign", "first"}, "InitialUTMContent": {"utm_content", "first"},
	"InitialUTMTerm": {"utm_term", "first"},
	"Browser":        {"$browser", "first"}, "OS": {"$os", "first"}, "DeviceType": {"$device_type", "first"},
	"Country": {"$geoip_country_code", "first"}, "Region": {"$geoip_subdivision_1_name", "first"},
	"City": {"$geoip_city_name", "first"}, "Language": {"$browser_language", "first"}, "Timezone": {"$timezone", "first"},
}

// webBreakdownList names the answered breakdowns, for errors.
func webBreakdownList() string {
	return strings.Join(sortedKeys(webBreakdowns), ", ")
}

// ParseWebStats reads a web stats table request.
func ParseWebStats(p Params, env Env) (*WebStatsTableQuery, error) {
	pr := &problems{}
	q := &WebStatsTableQuery{Common: newCommon(env, pr), Limit: 10}
	q.parse(p, pr)
	q.Compare = p.boolean("compare", pr)
	q.IncludeBounceRate = p.boolean("include_bounce_rate", pr)
	q.BreakdownBy, _ = p.str("breakdown_by", pr)
	b, ok := webBreakdowns[q.BreakdownBy]
	switch {
	case q.BreakdownBy == "":
		pr.add("breakdown_by", "breakdownBy is required: one of %s", webBreakdownList())
	case !ok:
		pr.add("breakdown_by", "breakdownBy %q is not supported; use one of %s", q.BreakdownBy, webBreakdownList())
	case b.mode == "page" && q.IncludeBounceRate:
		pr.add("include_bounce_rate", "includeBounceRate is not supported with breakdownBy Page yet; use InitialPage")
	}
	if n, ok := p.integer("limit", pr); ok {
		if n < 1 || n > 1000 {
			pr.add("limit", "limit must be 1 to 1000; got %d", n)
		}
		q.Limit = int(n)
	}
	if n, ok := p.integer("offset", pr); ok {
		if n < 0 || n > 1000000 {
			pr.add("offset", "offset must be 0 to 1000000; got %d", n)
		}
		q.Offset = int(n)
	}
	q.resolveRange(pr)
	return q, pr.err()
}

// Needs implements Query.
func (q *WebStatsTableQuery) Needs() Needs {
	return Needs{FirstEvent: q.FromAll(), PersonOverrides: true}
}

// webStatsColumns are the statement's columns: one row per value and
// period.
var webStatsColumns = []string{"value", "period", "visitors", "views", "viewed", "bounces"}

// Build implements Query.
func (q *WebStatsTableQuery) Build(f Facts) (Statement, error) {
	if err := q.applyFacts(f); err != nil {
		return Statement{}, err
	}
	s := newEventSource(&q.Common, f)
	b := webBreakdowns[q.BreakdownBy]
	prop := propertyText(&s.scope, "event", b.key)
	if b.mode == "page" {
		return s.statement(q.pages(s, prop)), nil
	}
	agg := "argMinIf"
	if b.mode == "last" {
		agg = "argMaxIf"
	}
	value := agg + "(" + prop + ", e.timestamp, e.event IN ('$pageview', '$screen'))"
	if b.key == "$referring_domain" {
		value = "if(" + value + " = '', '$direct', " + value + ")"
	}
	inner := webSessions(&q.Common, s, q.Compare, []string{value + " AS value"})
	sql := "SELECT value, period, uniqExact(person) AS visitors, sum(views) AS total_views, countIf(views > 0) AS viewed,\n" +
		"    countIf(views = 1 AND autocaptures = 0 AND duration < 10) AS bounces\nFROM (\n" + indent(inner) +
		"\n)\nWHERE views > 0\nGROUP BY value, period"
	return s.statement(sql), nil
}

// pages is the Page breakdown: every pageview whose own time is in a
// period, by its path.
func (q *WebStatsTableQuery) pages(s *eventSource, prop string) string {
	from, to := q.Range.bounds()
	first := from
	if q.Compare {
		first, _ = q.Range.previous().bounds()
	}
	cur := s.named("date_from", typeTime, from.UTC())
	lo := s.named("period_from", typeTime, first.UTC())
	hi := s.named("date_to", typeTime, to.UTC())
	s.readsSpan(first, to)
	where := []string{"e.team_id = {team:Int64}", "e.mat_session_id != ''", "e.event = '$pageview'",
		"e.timestamp >= " + lo, "e.timestamp <= " + hi}
	props := andFilters(q.Properties, q.TestAccounts)
	if cond := s.cond(props); cond != "" {
		where = append(where, cond)
	}
	cols := []string{prop + " AS value", "if(e.timestamp >= " + cur + ", 0, 1) AS period", s.personID() + " AS person"}
	j := joins{overrides: true, persons: props.usesPersons(), sessions: props.usesSessions()}
	return "SELECT value, period, uniqExact(person) AS visitors, count() AS total_views, 0 AS viewed, 0 AS bounces\nFROM (\n" +
		indent(s.selectFrom(cols, j, where)) + "\n)\nGROUP BY value, period"
}

// WebStatsResult is PostHog's WebStatsTableQueryResponse: its fields go
// at the top of a query response (WholeResponse). Each row is the value
// then [current, previous] per column (previous null without compare).
type WebStatsResult struct {
	Columns []string `json:"columns"`
	Results [][]any  `json:"results"`
	Types   []string `json:"types"`
	HasMore bool     `json:"hasMore"`
	Limit   int      `json:"limit"`
	Offset  int      `json:"offset"`
}

// Table implements Result.
func (r *WebStatsResult) Table() ([]string, [][]string) {
	rows := make([][]string, len(r.Results))
	for i, row := range r.Results {
		for _, c := range row {
			b, _ := json.Marshal(c)
			rows[i] = append(rows[i], string(b))
		}
	}
	return r.Columns, rows
}

// Shape implements Query: values ranked by current visitors, then views,
// then value; a page of limit from offset.
func (q *WebStatsTableQuery) Shape(rows [][]any) (Result, error) {
	type agg struct{ visitors, views, viewed, bounces [2]float64 }
	byValue := map[string]*agg{}
	for _, row := range rows {
		if len(row) != len(webStatsColumns) {
			return nil, errors.New("web stats: unexpected row width")
		}
		v, _ := row[0].(string)
		p := int(webNum(row[1]))
		if p < 0 || p > 1 {
			continue
		}
		a := byValue[v]
		if a == nil {
			a = &agg{}
			byValue[v] = a
		}
		a.visitors[p], a.views[p], a.viewed[p], a.bounces[p] = webNum(row[2]), webNum(row[3]), webNum(row[4]), webNum(row[5])
	}
	values := make([]string, 0, len(byValue))
	for v, a := range byValue {
		if a.visitors[0] > 0 || a.views[0] > 0 {
			values = append(values, v)
		}
	}
	sort.Slice(values, func(i, j int) bool {
		a, b := byValue[values[i]], byValue[values[j]]
		if a.visitors[0] != b.visitors[0] {
			return a.visitors[0] > b.visitors[0]
		}
		if a.views[0] != b.views[0] {
			return a.views[0] > b.views[0]
		}
		return values[i] < values[j]
	})
	out := &WebStatsResult{Columns: []string{"context.columns.breakdown_value", "context.columns.visitors", "context.columns.views"},
		Types: []string{"String", "Tuple(UInt64, UInt64)", "Tuple(UInt64, UInt64)"}, Limit: q.Limit, Offset: q.Offset, Results: [][]any{}}
	if q.IncludeBounceRate {
		out.Columns = append(out.Columns, "context.columns.bounce_rate")
		out.Types = append(out.Types, "Tuple(Float64, Float64)")
	}
	pair := func(x [2]float64) []any {
		if !q.Compare {
			return []any{int64(x[0]), nil}
		}
		return []any{int64(x[0]), int64(x[1])}
	}
	rate := func(a *agg, p int) any {
		if a.viewed[p] == 0 {
			return nil
		}
		return a.bounces[p] / a.viewed[p]
	}
	for i := q.Offset; i < len(values) && i < q.Offset+q.Limit; i++ {
		v := values[i]
		a := byValue[v]
		row := []any{v, pair(a.visitors), pair(a.views)}
		if q.IncludeBounceRate {
			var prev any
			if q.Compare {
				prev = rate(a, 1)
			}
			row = append(row, []any{rate(a, 0), prev})
		}
		out.Results = append(out.Results, row)
	}
	out.HasMore = len(values) > q.Offset+q.Limit
	return out, nil
}

// Decode implements Query.
func (q *WebStatsTableQuery) Decode(raw json.RawMessage) (Result, error) {
	var r WebStatsResult
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	err := d.Decode(&r)
	return &r, err
}
