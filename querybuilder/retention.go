package querybuilder

import (
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// RetentionQuery is a validated retention request (insights/retention):
// cohorts of actors by the period of their target event, and how many of
// each cohort did the returning event in each later period.
type RetentionQuery struct {
	Common

	// Target puts actors in cohorts; Returning counts them back.
	Target, Returning Entity
	// Period is the cohorts' and returns' unit (Interval: hour, day, week,
	// month); Intervals the number of periods, 1 to maxRetentionIntervals.
	Period    Interval
	Intervals int
	// FirstTime puts each actor in the one cohort of their first target
	// event ever (retention_first_time); otherwise an actor is in the
	// cohort of every period with a target event (retention_recurring).
	FirstTime bool

	Breakdown                 *Breakdown
	AggregationGroupTypeIndex int

	// starts are the periods' first instants and, last, the end of the
	// last period (exclusive): Intervals + 1 of them.
	starts []time.Time
}

// Retention parameters and their defaults, from PostHog's legacy API.
const (
	defaultRetentionIntervals = 11
	maxRetentionIntervals     = 100
	retentionBreakdownLimit   = 25
	retentionRecurring        = "retention_recurring"
	retentionFirstTime        = "retention_first_time"
)

// retentionKind answers insights/retention and computes RETENTION insights.
var retentionKind = Kind{Name: "retention", Route: "retention", Insight: "RETENTION", Persons: "retention",
	Parse: func(p Params, env Env) (Query, error) { return ParseRetention(p, env) },
	Node:  "RetentionQuery", translate: retentionNode}

// retentionPeriods are the period parameter's values (any case).
var retentionPeriods = map[string]Interval{"hour": IntervalHour, "day": IntervalDay, "week": IntervalWeek, "month": IntervalMonth}

// ParseRetention reads a retention request from its parameters in env.
func ParseRetention(p Params, env Env) (*RetentionQuery, error) {
	pr := &problems{}
	q := &RetentionQuery{Common: newCommon(env, pr), Period: IntervalDay, Intervals: defaultRetentionIntervals}
	pp := q.properties(pr)
	q.Target = retentionEntity(p, "target_entity", Entity{ID: "$pageview", Type: "events", Math: "total", MathGroupTypeIndex: -1}, pp)
	q.Returning = retentionEntity(p, "returning_entity", q.Target, pp)
	q.parse(p, pr)
	if s, ok := p.str("period", pr); ok && s != "" {
		iv, known := retentionPeriods[strings.ToLower(s)]
		if !known {
			pr.add("period", "period must be one of Hour, Day, Week, Month; got %q", s)
		} else {
			q.Period = iv
		}
	}
	if n, ok := p.integer("total_intervals", pr); ok {
		if n < 1 || n > maxRetentionIntervals {
			pr.add("total_intervals", "total_intervals must be between 1 and %d, got %d", maxRetentionIntervals, n)
		} else {
			q.Intervals = int(n)
		}
	}
	if s, ok := p.str("retention_type", pr); ok && s != "" {
		switch s {
		case retentionRecurring:
		case retentionFirstTime:
			q.FirstTime = true
		default:
			pr.add("retention_type", "retention_type must be retention_recurring or retention_first_time; got %q", s)
		}
	}
	q.DateFrom = "" // ignored: the periods end at date_to
	q.Breakdown = parseBreakdown(p, breakdownOptions{defaultLimit: retentionBreakdownLimit}, pr)
	if n, ok := p.integer("aggregation_group_type_index", pr); ok {
		q.AggregationGroupTypeIndex = int(n)
	}
	return q, errors.Join(pr.err(), q.Validate())
}

// retentionEntity reads target_entity or returning_entity (an object, or
// one as JSON text), def when absent.
func retentionEntity(p Params, name string, def Entity, pp *propertyParser) Entity {
	raw, ok := p.document(name)
	if !ok {
		return def
	}
	e, ok := parseEntity(raw, name, name, 0, pp)
	if !ok {
		return def
	}
	return e
}

// Validate checks the request as a whole and resolves its periods: the
// last is the one holding date_to (default now), the first Intervals-1
// periods before it. date_from is ignored, as analytics.md says.
func (q *RetentionQuery) Validate() error {
	pr := &problems{}
	if q.clock.loc == nil {
		return &ValidationError{Attr: "timezone", Detail: "the request was not built by ParseRetention"}
	}
	if q.AggregationGroupTypeIndex < 0 || q.AggregationGroupTypeIndex > maxGroupTypeIndex {
		pr.add("aggregation_group_type_index", "aggregation_group_type_index must be 0 (persons) or a group type 1 to %d, got %d",
			maxGroupTypeIndex, q.AggregationGroupTypeIndex)
	}
	end := q.clock.now
	if strings.TrimSpace(q.DateTo) != "" {
		if strings.EqualFold(strings.TrimSpace(q.DateTo), "all") {
			pr.add("date_to", "date_to cannot be all: %s", dateGrammar)
		} else if t, _, err := q.clock.parse(q.DateTo, true); err != nil {
			pr.add("date_to", "date_to: %v", err)
		} else {
			end = t
		}
	}
	if !pr.ok() {
		return pr.err()
	}
	unit := q.Period.unit()
	last := q.clock.startOf(unit, end)
	q.starts = make([]time.Time, q.Intervals+1)
	for k := 0; k < q.Intervals; k++ {
		q.starts[k] = q.periodStart(last, k-(q.Intervals-1))
	}
	q.starts[q.Intervals] = q.clock.next(unit, last)
	if q.starts[0].Before(minDate) {
		pr.add("date_to", "the first period would start before 1970")
		return pr.err()
	}
	if err := budget(q.Intervals*(q.Intervals+1)/2*q.Breakdown.values(), "retention", "breakdown_limit", "total_intervals"); err != nil {
		return err
	}
	// The window as a range: what the cache keys and ages by.
	q.Interval = q.Period
	q.Range = DateRange{From: q.starts[0], To: q.starts[q.Intervals].Add(-time.Microsecond), Interval: q.Period, clock: q.clock}
	return nil
}

// periodStart is the start of the period n periods from the one starting
// at start (n <= 0). Hours are elapsed hours; the others calendar units.
func (q *RetentionQuery) periodStart(start time.Time, n int) time.Time {
	if q.Period == IntervalHour {
		return start.Add(time.Duration(n) * time.Hour)
	}
	return q.clock.startOf(q.Period.unit(), q.clock.shift(start, q.Period.unit(), n))
}

// Needs implements Query: persons read through merged persons.
func (q *RetentionQuery) Needs() Needs {
	return Needs{PersonOverrides: q.AggregationGroupTypeIndex == 0 || q.read().persons}
}

// Build implements Query.
func (q *RetentionQuery) Build(f Facts) (Statement, error) { return BuildRetention(q, f) }

// Shape implements Query.
func (q *RetentionQuery) Shape(rows [][]any) (Result, error) { return ShapeRetention(q, rows) }

// Decode implements Query.
func (q *RetentionQuery) Decode(raw json.RawMessage) (Result, error) {
	var r RetentionResult
	return r, json.Unmarshal(raw, &r)
}

// read is what the statement's read of events joins.
func (q *RetentionQuery) read() joins {
	persons := andFilters(q.Properties, q.TestAccounts, q.Target.Properties, q.Returning.Properties).usesPersons() ||
		q.Breakdown.uses("person")
	sessions := andFilters(q.Properties, q.TestAccounts, q.Target.Properties, q.Returning.Properties).usesSessions() ||
		q.Breakdown.uses("session")
	return joins{overrides: q.AggregationGroupTypeIndex == 0 || persons, persons: persons, sessions: sessions}
}
