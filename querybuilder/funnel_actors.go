package querybuilder

import (
	"errors"
	"strings"
)

// ActorType implements ActorsLister (and, promoted, for correlation).
func (q *FunnelQuery) ActorType(Params) ActorType { return aggregated(q.AggregationGroupTypeIndex) }

// Actors implements ActorsLister: the actors who reached step funnel_step
// (1-based), or with a negative one who reached the step before and not
// that one (-2: entered and dropped off before step 2), and with a
// breakdown those of funnel_step_breakdown, the values folded as the
// funnel folds them (ranked by actors at step 1). The rows are the
// funnel's own per-actor counted attempts (funnelOn).
func (q *FunnelQuery) Actors(sel Params, f Facts, page Page) (Statement, error) {
	if q == nil || q.clock.loc == nil || len(q.Steps) < 1 {
		return Statement{}, errors.New("querybuilder: funnel actors need a request that ParseFunnel validated")
	}
	if q.Viz == VizTrends {
		return q.trendsActors(sel, f, page)
	}
	pr := &problems{}
	step := selInt(sel, "funnel_step", pr)
	value, _ := sel.str("funnel_step_breakdown", pr)
	switch {
	case len(q.Steps) == 1 && step != 1:
		pr.add("funnel_step", "a one-step funnel's actors are funnel_step 1: no one drops off before its only step")
	case step == 0 || step > len(q.Steps) || step < -len(q.Steps):
		pr.add("funnel_step", "funnel_step must be a step (1 to %d), or a negative one (-2 to -%d) for those who dropped off before it", len(q.Steps), len(q.Steps))
	case step == -1:
		pr.add("funnel_step", "no one drops off before step 1: funnel_step -1 names no actors")
	}
	broken := q.Breakdown != nil && q.Viz != VizTimeToConvert && q.Viz != VizTiming
	if broken && !sel.present("funnel_step_breakdown") {
		pr.add("funnel_step_breakdown", "funnel_step_breakdown is required with a breakdown")
	}
	if !pr.ok() {
		return Statement{}, pr.err()
	}
	if err := q.applyFacts(f); err != nil {
		return Statement{}, err
	}
	s := newEventSource(&q.Common, f)
	fb := funnelOn(q, s)
	rows := fb.actorRows()
	cond := "level >= " + s.bind("UInt8", uint8(step))
	if step < 0 {
		cond = "level = " + s.bind("UInt8", uint8(-step-1))
	}
	if q.hasOptional() {
		// Reached the step; dropped off: reached the required step
		// before it, not the step (funnel_optional.go).
		if step > 0 {
			cond = q.reachedCol(step)
		} else {
			cond = q.reachedCol(q.prevRequired(-step)) + " AND NOT (" + q.reachedCol(-step) + ")"
		}
	}
	if broken && q.Breakdown.Cohorts != nil {
		// Every listed cohort is a series: no ranking, no other.
		cond += " AND has(JSONExtract(breakdown_value, 'Array(String)'), " + s.str(value) + ")"
		broken = false
	}
	if broken {
		ranked := "SELECT *, dense_rank() OVER (ORDER BY volume DESC, breakdown_value) AS value_rank\nFROM (\n" +
			indent("SELECT *, count() OVER (PARTITION BY breakdown_value) AS volume\nFROM (\n"+indent(rows)+"\n)") + "\n)"
		rows = ranked
		limit := s.named("breakdown_limit", "UInt32", q.Breakdown.Limit)
		if value == BreakdownOther {
			cond += " AND value_rank > " + limit
		} else {
			cond += " AND value_rank <= " + limit + " AND breakdown_value = " + s.str(value)
		}
	}
	return actorsPage(s, "SELECT DISTINCT actor\nFROM (\n"+indent(rows)+"\n)\nWHERE "+cond, page), nil
}

// trendsActors lists the actors of one point of funnel trends: those who
// entered in the bucket entrance_period_start (a date, or a date-time for
// hours) and converted from funnel_from_step to funnel_to_step there, or
// with drop_off those who reached the first and not the second.
func (q *FunnelQuery) trendsActors(sel Params, f Facts, page Page) (Statement, error) {
	// The buckets are the range's as the facts resolve it (date_from=all
	// starts at the project's first event).
	if err := q.applyFacts(f); err != nil {
		return Statement{}, err
	}
	pr := &problems{}
	start, _ := sel.str("entrance_period_start", pr)
	dropOff := sel.boolean("drop_off", pr)
	value, _ := sel.str("funnel_step_breakdown", pr)
	key := ""
	for _, b := range q.Range.Buckets() {
		if b.Day == start || b.Key == start || strings.HasPrefix(start, b.Key+"T") {
			key = b.Key
		}
	}
	if key == "" {
		pr.add("entrance_period_start", "entrance_period_start must be the start of one of the range's buckets, got %q", start)
	}
	if q.Breakdown != nil && !sel.present("funnel_step_breakdown") {
		pr.add("funnel_step_breakdown", "funnel_step_breakdown is required with a breakdown")
	}
	if !pr.ok() {
		return Statement{}, pr.err()
	}
	if err := q.applyFacts(f); err != nil {
		return Statement{}, err
	}
	s := newEventSource(&q.Common, f)
	rows := funnelOn(q, s).actorRows()
	cond := "bucket = " + s.str(key) + " AND level >= " + s.bind("UInt8", uint8(q.ToStep+1))
	if dropOff {
		cond = "bucket = " + s.str(key) + " AND level >= " + s.bind("UInt8", uint8(q.FromStep+1)) + " AND level < " + s.bind("UInt8", uint8(q.ToStep+1))
	}
	if q.Breakdown != nil {
		rows = "SELECT *, dense_rank() OVER (ORDER BY volume DESC, breakdown_value) AS value_rank\nFROM (\n" +
			indent("SELECT *, uniqExact(actor) OVER (PARTITION BY breakdown_value) AS volume\nFROM (\n"+indent(rows)+"\n)") + "\n)"
		limit := s.named("breakdown_limit", "UInt32", q.Breakdown.Limit)
		if value == BreakdownOther {
			cond += " AND value_rank > " + limit
		} else {
			cond += " AND value_rank <= " + limit + " AND breakdown_value = " + s.str(value)
		}
	}
	return actorsPage(s, "SELECT DISTINCT actor\nFROM (\n"+indent(rows)+"\n)\nWHERE "+cond, page), nil
}
