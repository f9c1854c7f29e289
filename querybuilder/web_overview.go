package querybuilder

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"
)

// Web analytics (analytics.md, "Web analytics"): sessions are the events
// sharing a $session_id, folded at read time from the events (each
// session's first event, duration, views, autocaptures and person), and a
// session belongs to the period its first event is in. Events are read
// sessionMargin either side of the periods, so a session crossing an edge
// is read whole when it lasts less than a day.

// WebOverviewQuery is a WebOverviewQuery node: the top numbers of web
// analytics over the range and, with compare, the period before.
type WebOverviewQuery struct {
	Common
	Compare bool
}

var webOverviewKind = Kind{Name: "web_overview", Route: "web_overview", Insight: "WEB_OVERVIEW",
	Parse: func(p Params, env Env) (Query, error) { return ParseWebOverview(p, env) },
	Node:  "WebOverviewQuery", translate: webOverviewNode}

// ParseWebOverview reads a web overview request.
func ParseWebOverview(p Params, env Env) (*WebOverviewQuery, error) {
	pr := &problems{}
	q := &WebOverviewQuery{Common: newCommon(env, pr)}
	q.parse(p, pr)
	q.Compare = p.boolean("compare", pr)
	q.resolveRange(pr)
	return q, pr.err()
}

// Needs implements Query.
func (q *WebOverviewQuery) Needs() Needs {
	return Needs{FirstEvent: q.FromAll(), PersonOverrides: true}
}

// webSessions writes the per-session fold of the events of the range (and
// with compare the previous period): one row per session whose first
// event is in a period, with its period (0 current, 1 previous), person,
// duration in seconds, views ($pageview and $screen), pageviews,
// autocaptures, and the extra columns asked for. Each extra is
// "name expression": an aggregate over the session's events.
func webSessions(c *Common, s *eventSource, compare bool, extra []string) string {
	from, to := c.Range.bounds()
	first := from
	if compare {
		first, _ = c.Range.previous().bounds()
	}
	cur := s.named("date_from", typeTime, from.UTC())
	lo := s.named("period_from", typeTime, first.UTC())
	hi := s.named("date_to", typeTime, to.UTC())
	s.readsSpan(first, to)
	cols := []string{
		"e.mat_session_id AS sid",
		"argMin(" + s.personID() + ", e.timestamp) AS person",
		"min(e.timestamp) AS start",
		"dateDiff('second', min(e.timestamp), max(e.timestamp)) AS duration",
		"countIf(e.event IN ('$pageview', '$screen')) AS views",
		"countIf(e.event = '$autocapture') AS autocaptures",
	}
	cols = append(cols, extra...)
	where := []string{"e.team_id = {team:Int64}", "e.mat_session_id != ''",
		"e.timestamp >= " + s.time(first.Add(-sessionMargin)), "e.timestamp <= " + s.time(to.Add(sessionMargin))}
	props := andFilters(c.Properties, c.TestAccounts)
	if cond := s.cond(props); cond != "" {
		where = append(where, cond)
	}
	j := joins{overrides: true, persons: props.usesPersons(), sessions: props.usesSessions()}
	return "SELECT *, if(start >= " + cur + ", 0, 1) AS period\nFROM (\n" +
		indent(s.selectFrom(cols, j, where)+"\nGROUP BY sid\nHAVING start >= "+lo+" AND start <= "+hi) + "\n)"
}

// webOverviewColumns are the overview statement's columns, one row per
// period.
var webOverviewColumns = []string{"period", "visitors", "views", "sessions", "duration", "viewed", "bounces"}

// Build implements Query.
func (q *WebOverviewQuery) Build(f Facts) (Statement, error) {
	if err := q.applyFacts(f); err != nil {
		return Statement{}, err
	}
	s := newEventSource(&q.Common, f)
	inner := webSessions(&q.Common, s, q.Compare, nil)
	sql := "SELECT period, uniqExact(person) AS visitors, sum(views) AS total_views, count() AS sessions,\n" +
		"    avg(duration) AS mean_duration, countIf(views > 0) AS viewed,\n" +
		"    countIf(views = 1 AND autocaptures = 0 AND duration < 10) AS bounces\nFROM (\n" +
		indent(inner) + "\n)\nGROUP BY period\nORDER BY period"
	return s.statement(sql), nil
}

// WebOverviewItem is one number of the overview, as PostHog answers it.
type WebOverviewItem struct {
	Key                   string   `json:"key"`
	Kind                  string   `json:"kind"`
	Value                 *float64 `json:"value"`
	Previous              *float64 `json:"previous"`
	ChangeFromPreviousPct *float64 `json:"changeFromPreviousPct"`
	IsIncreaseBad         bool     `json:"isIncreaseBad"`
}

// WebOverviewResult is PostHog's WebOverviewQueryResponse: its fields go
// at the top of a query response (WholeResponse).
type WebOverviewResult struct {
	Results      []WebOverviewItem `json:"results"`
	DateFrom     string            `json:"dateFrom"`
	DateTo       string            `json:"dateTo"`
	SamplingRate struct {
		Numerator   int `json:"numerator"`
		Denominator int `json:"denominator"`
	} `json:"samplingRate"`
}

// Table implements Result.
func (r *WebOverviewResult) Table() ([]string, [][]string) {
	rows := make([][]string, len(r.Results))
	for i, it := range r.Results {
		rows[i] = []string{it.Key, numText(it.Value), numText(it.Previous), numText(it.ChangeFromPreviousPct)}
	}
	return []string{"key", "value", "previous", "change_from_previous_pct"}, rows
}

func numText(v *float64) string {
	if v == nil {
		return ""
	}
	b, _ := json.Marshal(*v)
	return string(b)
}

// Shape implements Query.
func (q *WebOverviewQuery) Shape(rows [][]any) (Result, error) {
	var per [2][]float64
	for _, row := range rows {
		if len(row) != len(webOverviewColumns) {
			return nil, errors.New("web overview: unexpected row width")
		}
		p := int(webNum(row[0]))
		if p < 0 || p > 1 {
			continue
		}
		vals := make([]float64, len(row)-1)
		for i := range vals {
			vals[i] = webNum(row[i+1])
		}
		per[p] = vals
	}
	// metric gives a period's number, nil where it has none (a rate of
	// no sessions).
	metric := func(p, i int) *float64 {
		v := per[p]
		if v == nil {
			v = make([]float64, len(webOverviewColumns)-1)
		}
		switch i {
		case 3: // duration: the mean of no sessions is 0, as PostHog answers
			if v[2] == 0 {
				return ptr(0)
			}
			return ptr(v[3])
		case 4: // bounce rate, a percentage of the sessions with a view
			if v[4] == 0 {
				return nil
			}
			return ptr(100 * v[5] / v[4])
		}
		return ptr(v[i])
	}
	items := []struct {
		key, kind string
		i         int
		bad       bool
	}{{"visitors", "unit", 0, false}, {"views", "unit", 1, false}, {"sessions", "unit", 2, false},
		{"session duration", "duration_s", 3, false}, {"bounce rate", "percentage", 4, true}}
	out := &WebOverviewResult{}
	out.SamplingRate.Numerator = 1
	for _, it := range items {
		cur := metric(0, it.i)
		var prev *float64
		if q.Compare {
			prev = metric(1, it.i)
		}
		out.Results = append(out.Results, WebOverviewItem{Key: it.key, Kind: it.kind, Value: cur, Previous: prev,
			ChangeFromPreviousPct: changePct(cur, prev), IsIncreaseBad: it.bad})
	}
	from, to := q.Range.bounds()
	out.DateFrom, out.DateTo = isoLocal(from, q.clock.loc), isoLocal(to, q.clock.loc)
	return out, nil
}

// changePct is PostHog's change from the previous period: the rounded
// percentage, null without a previous value or when it is 0.
func changePct(cur, prev *float64) *float64 {
	if cur == nil || prev == nil || *prev == 0 {
		return nil
	}
	return ptr(math.Round(100 * (*cur - *prev) / *prev))
}

func ptr(v float64) *float64 { return &v }

func isoLocal(t time.Time, loc *time.Location) string { return t.In(loc).Format(time.RFC3339) }

// Decode implements Query.
func (q *WebOverviewQuery) Decode(raw json.RawMessage) (Result, error) {
	var r WebOverviewResult
	err := json.Unmarshal(raw, &r)
	return &r, err
}

// WholeResponse reports whether a node kind's result is a whole query
// response (its fields at the top of the answer, as PostHog's web
// analytics responses are) rather than the response's results.
func WholeResponse(nodeKind string) bool {
	return strings.HasPrefix(nodeKind, "Web")
}

// webNum is a numeric cell (0 for NULL or nothing numeric).
func webNum(v any) float64 {
	f, err := asFloat(v)
	if err != nil || math.IsNaN(f) {
		return 0
	}
	return f
}
