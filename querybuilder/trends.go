package querybuilder

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// TrendsQuery is a validated trends request (insights/trend): one series
// per entity, or per entity and breakdown value, over time buckets.
type TrendsQuery struct {
	Common

	Series []Entity

	Breakdown *Breakdown
	// Compare adds each series for the period of equal length before,
	// or starting CompareTo (a relative date such as -1w) earlier.
	Compare   bool
	CompareTo string
	Display   string
	// Formula combines the series (A, B, ...); empty for none.
	Formula string
	// AggregationGroupTypeIndex > 0 makes actors the events' $group_N
	// instead of persons (dau, active users, per-actor counts).
	AggregationGroupTypeIndex int

	formula *formula
}

// Trends defaults, from PostHog's legacy API.
const (
	defaultDisplay        = "ActionsLineGraph"
	trendsBreakdownLimit  = 25
	displayCumulative     = "ActionsLineGraphCumulative"
	maxGroupTypeIndex     = 4
	trendsDisplayExpected = "ActionsLineGraph, ActionsLineGraphCumulative, ActionsBar, ActionsAreaGraph, ActionsStackedBar, ActionsUnstackedBar, " +
		"ActionsTable, ActionsPie, ActionsBarValue, WorldMap, BoldNumber"
)

// compareTo is compare_to's grammar: how far back the compared period
// starts.
var compareTo = regexp.MustCompile(`^-?([0-9]{1,4})([hdwmqy])$`)

// displays maps each display to whether it is a time series; the others
// answer one aggregated_value over the whole range.
var displays = map[string]bool{
	"ActionsLineGraph": true, "ActionsLineGraphCumulative": true, "ActionsBar": true,
	// PostHog's area and stacked charts draw the same series.
	"ActionsAreaGraph": true, "ActionsStackedBar": true, "ActionsUnstackedBar": true,
	"ActionsTable": false, "ActionsPie": false, "ActionsBarValue": false, "WorldMap": false, "BoldNumber": false,
}

// The maths analytics.md lists, by how they are computed.
var (
	// distinctMath count distinct actors, sessions or groups per bucket.
	distinctMath = map[string]bool{"dau": true, "unique_session": true, "unique_group": true}
	// activeMath count persons active in the window (days) ending at
	// each bucket's end.
	activeMath = map[string]int{"weekly_active": 7, "monthly_active": 30}
	// propertyMath aggregate math_property's numeric values; quantiles
	// carry their level.
	propertyMath = map[string]float64{"sum": 0, "avg": 0, "min": 0, "max": 0,
		"median": 0.5, "p75": 0.75, "p90": 0.9, "p95": 0.95, "p99": 0.99}
	// perActorMath aggregate each actor's event count in the bucket.
	perActorMath = map[string]float64{"avg_count_per_actor": 0, "min_count_per_actor": 0, "max_count_per_actor": 0,
		"median_count_per_actor": 0.5, "p75_count_per_actor": 0.75, "p90_count_per_actor": 0.9,
		"p95_count_per_actor": 0.95, "p99_count_per_actor": 0.99}
)

const mathExpected = "total, dau, weekly_active, monthly_active, unique_session, unique_group, sum, avg, min, max, median, " +
	"p75, p90, p95, p99, avg_count_per_actor, min_count_per_actor, max_count_per_actor, median_count_per_actor, " +
	"p75_count_per_actor, p90_count_per_actor, p95_count_per_actor, p99_count_per_actor"

func knownMath(m string) bool {
	_, active := activeMath[m]
	_, prop := propertyMath[m]
	_, actor := perActorMath[m]
	return m == "total" || distinctMath[m] || active || prop || actor
}

// trendsKind answers insights/trend and computes TRENDS insights.
var trendsKind = Kind{Name: "trends", Route: "trend", Insight: "TRENDS", Persons: "trends",
	Parse: func(p Params, env Env) (Query, error) { return ParseTrends(p, env) },
	Node:  "TrendsQuery", translate: trendsNode}

// ParseTrends reads a trends request from its parameters in env. Every
// problem found is returned, joined, as *ValidationError values naming
// their parameter.
func ParseTrends(p Params, env Env) (*TrendsQuery, error) {
	return parseTrendsKind(p, env, false)
}

// parseTrendsKind is ParseTrends; mathIgnored drops every series' math but
// unique_group before validating (stickiness counts actors whatever the
// math says).
func parseTrendsKind(p Params, env Env, mathIgnored bool) (*TrendsQuery, error) {
	pr := &problems{}
	q := &TrendsQuery{Common: newCommon(env, pr), Display: defaultDisplay}
	q.Series = parseEntities(p, q.properties(pr))
	for i, e := range q.Series {
		if mathIgnored && e.Math != "unique_group" {
			q.Series[i].Math, q.Series[i].MathProperty = "total", ""
		}
	}
	q.parse(p, pr)
	q.Breakdown = parseBreakdown(p, breakdownOptions{defaultLimit: trendsBreakdownLimit, multi: true, bins: true, hogql: true, pp: q.properties(pr)}, pr)
	q.Compare = p.boolean("compare", pr)
	q.CompareTo, _ = p.str("compare_to", pr)
	if s, ok := p.str("display", pr); ok && s != "" {
		q.Display = s
	}
	q.Formula, _ = p.str("formula", pr)
	if n, ok := p.integer("aggregation_group_type_index", pr); ok {
		q.AggregationGroupTypeIndex = int(n)
	}
	return q, errors.Join(pr.err(), q.Validate())
}

// Validate checks the request as a whole and resolves what depends on
// several fields: the date range, each series' math, the formula. It
// returns every problem, joined.
func (q *TrendsQuery) Validate() error {
	pr := &problems{}
	if q.clock.loc == nil {
		return &ValidationError{Attr: "timezone", Detail: "the request was not built by ParseTrends"}
	}
	if len(q.Series) == 0 {
		pr.add("events", "one of events or actions is required: a list of entities such as [{\"id\": \"$pageview\"}]")
	}
	for i := range q.Series {
		q.validateMath(&q.Series[i], i, pr)
	}
	if _, ok := displays[q.Display]; !ok {
		pr.add("display", "display must be one of %s; got %q", trendsDisplayExpected, q.Display)
	}
	if q.AggregationGroupTypeIndex < 0 || q.AggregationGroupTypeIndex > maxGroupTypeIndex {
		pr.add("aggregation_group_type_index", "aggregation_group_type_index must be 0 (persons) or a group type 1 to %d, got %d",
			maxGroupTypeIndex, q.AggregationGroupTypeIndex)
	}
	if strings.TrimSpace(q.Formula) != "" && len(q.Series) > 0 {
		f, err := parseFormula(q.Formula, len(q.Series))
		if err != nil {
			pr.add("formula", "%v", err)
		}
		q.formula = f
	} else {
		q.formula = nil
	}
	q.resolveRange(pr)
	if pr.ok() {
		if err := q.budget(); err != nil {
			pr.errs = append(pr.errs, err)
		}
	}
	if q.Compare && strings.TrimSpace(q.CompareTo) != "" {
		m := compareTo.FindStringSubmatch(strings.TrimSpace(q.CompareTo))
		n := 0
		if m != nil {
			n, _ = strconv.Atoi(m[1]) // at most four digits
		}
		if n == 0 {
			pr.add("compare_to", "compare_to must be a relative date -N followed by h, d, w, m, q or y (such as -1w or -1y), N at least 1; got %q", q.CompareTo)
		} else {
			q.Range.compareUnit, q.Range.compareN = m[2][0], n
		}
	}
	if q.Compare && pr.ok() && q.Range.previous().From.Before(minDate) {
		attr := "compare"
		if strings.TrimSpace(q.CompareTo) != "" {
			attr = "compare_to"
		}
		pr.add(attr, "the compared period would start on %s, before 1970-01-01, the earliest date an analysis can cover",
			q.Range.previous().From.Format(time.DateOnly))
	}
	return pr.err()
}

func (q *TrendsQuery) validateMath(e *Entity, i int, pr *problems) {
	path := fmt.Sprintf("events[%d]", i)
	if !knownMath(e.Math) {
		pr.add("events", "%s.math: unknown math %q; use one of %s", path, e.Math, mathExpected)
		return
	}
	if _, ok := propertyMath[e.Math]; ok && e.MathProperty == "" {
		pr.add("events", "%s.math_property is required with math %s: the numeric event property to aggregate", path, e.Math)
	}
	if e.Math == "unique_group" {
		if e.MathGroupTypeIndex < 0 || e.MathGroupTypeIndex > maxGroupTypeIndex {
			pr.add("events", "%s.math_group_type_index must be a group type 0 to %d with math unique_group", path, maxGroupTypeIndex)
		}
	} else if e.MathGroupTypeIndex > maxGroupTypeIndex {
		pr.add("events", "%s.math_group_type_index must be 0 to %d", path, maxGroupTypeIndex)
	}
}

// Needs implements Query: date_from=all needs the first event, and a
// series that reads persons the overrides of merged persons.
func (q *TrendsQuery) Needs() Needs {
	n := Needs{FirstEvent: q.FromAll()}
	for _, e := range q.Series {
		n.PersonOverrides = n.PersonOverrides || q.plan(e).read.overrides
	}
	return n
}

// Build implements Query.
func (q *TrendsQuery) Build(f Facts) (Statement, error) { return BuildTrends(q, f) }

// Shape implements Query.
func (q *TrendsQuery) Shape(rows [][]any) (Result, error) { return ShapeTrends(q, rows) }

// Decode implements Query.
func (q *TrendsQuery) Decode(raw json.RawMessage) (Result, error) {
	var r TrendsResult
	return r, json.Unmarshal(raw, &r)
}

// budget refuses a result past MaxResultCells: buckets (one number for
// aggregated displays) x series x breakdown values x periods.
func (q *TrendsQuery) budget() error {
	points, periods := 1, 1
	if q.timeSeries() {
		points = q.Range.count()
	}
	if q.Compare {
		periods = 2
	}
	narrow := []string{"interval", "date_from", "date_to", "events"}
	if q.Breakdown != nil {
		narrow = append([]string{"breakdown_limit"}, narrow...)
	}
	return budget(points*len(q.Series)*q.Breakdown.values()*periods, "trend", narrow...)
}

// timeSeries reports whether the display draws buckets (else it answers
// one aggregated value per series).
func (q *TrendsQuery) timeSeries() bool { return displays[q.Display] }

// cumulative reports the running-sum display.
func (q *TrendsQuery) cumulative() bool { return q.Display == displayCumulative }
