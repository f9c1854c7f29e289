package querybuilder

import (
	"errors"
	"time"
)

// ActorType implements ActorsLister: a series' actor column (sessions
// for unique_session, groups for unique_group or a group aggregation),
// else persons.
func (q *TrendsQuery) ActorType(sel Params) ActorType {
	e := Entity{}
	if n, ok := sel.integer("series", &problems{}); ok && n >= 0 && int(n) < len(q.Series) {
		e = q.Series[n]
	}
	switch {
	case e.Math == "unique_session":
		return ActorType{Kind: ActorSession}
	case e.Math == "unique_group":
		return GroupActors(e.MathGroupTypeIndex)
	case q.AggregationGroupTypeIndex > 0:
		return GroupActors(q.AggregationGroupTypeIndex)
	}
	return PersonActors
}

// Actors implements ActorsLister: the actors behind one point of a
// series (series, period, bucket key, breakdown_value), read as the
// series reads its events: those in the bucket (the whole period for
// aggregated displays), in the window ending with it for weekly and
// monthly active actors, or up to its end for cumulative counts.
func (q *TrendsQuery) Actors(sel Params, f Facts, page Page) (Statement, error) {
	if q == nil || q.clock.loc == nil || q.Range.From.IsZero() || len(q.Series) == 0 {
		return Statement{}, errors.New("querybuilder: trends actors need a request that ParseTrends validated")
	}
	pr := &problems{}
	series := selInt(sel, "series", pr)
	period, _ := sel.integer("period", pr)
	key, _ := sel.str("bucket", pr)
	value, _ := sel.str("breakdown_value", pr)
	if q.formula != nil {
		pr.add("series", "the series of a formula have no actors of their own: list those of each entity")
	}
	if series < 0 || series >= len(q.Series) {
		pr.add("series", "series must be an entity of the request (0 to %d)", len(q.Series)-1)
	}
	if period < 0 || period > 1 || (period == 1 && !q.Compare) {
		pr.add("period", "period must be 0, or 1 with compare")
	}
	if q.Breakdown != nil && !sel.present("breakdown_value") {
		pr.add("breakdown_value", "breakdown_value is required with a breakdown")
	}
	if !pr.ok() {
		return Statement{}, pr.err()
	}
	if err := q.applyFacts(f); err != nil {
		return Statement{}, err
	}
	r := q.Range
	if period == 1 {
		r = q.Range.previous()
	}
	from, to, ok := q.actorsWindow(q.Series[series], r, key)
	if !ok {
		pr.add("bucket", "bucket must be the key of one of the period's buckets, got %q", key)
		return Statement{}, pr.err()
	}
	tb := &trendsBuilder{q: q, s: newEventSource(&q.Common, f)}
	tb.cur = tb.s.rangeSpan()
	tb.s.readsSpan(from, to) // the previous period's, a look-back's
	e := q.Series[series]
	src := tb.source(e)
	// The actor read joins persons for its actor even when the series
	// counted events.
	src.read.overrides = src.read.overrides || q.actorColumn(e) == ""
	where := []string{"e.timestamp >= " + tb.s.time(from), "e.timestamp <= " + tb.s.time(to)}
	if q.Breakdown != nil {
		where = append(where, tb.breakdown(src)+" = "+tb.s.str(value))
	}
	where = append(append([]string{}, src.where...), where...)
	if page.EventCounts && page.Details == nil {
		// Each actor's events in the window: the point's matching events.
		sub := tb.s.selectFrom([]string{tb.actor(e) + " AS actor"}, src.read, where)
		sub = "SELECT actor, count() AS event_count\nFROM (\n" + indent(sub) + "\n)\nGROUP BY actor"
		return actorsPage(tb.s, sub, page, "event_count"), nil
	}
	sub := tb.s.selectFrom([]string{"DISTINCT " + tb.actor(e) + " AS actor"}, src.read, where)
	return actorsPage(tb.s, sub, page), nil
}

// actorsWindow is the closed time window a point's actors did events in.
func (q *TrendsQuery) actorsWindow(e Entity, r DateRange, key string) (from, to time.Time, ok bool) {
	c := q.clock
	days, active := activeMath[e.Math]
	if key == "" {
		if q.timeSeries() {
			return from, to, false
		}
		if active {
			return c.shift(c.startOf('d', r.To), 'd', -(days - 1)), r.To, true
		}
		return r.From, r.To, true
	}
	if b, found := bucketOf(r.Buckets(), key, c.loc); found && q.timeSeries() {
		from, to = b.Start, b.End.Add(-time.Microsecond)
		switch {
		case active && q.Interval == IntervalHour:
			from = b.End.Add(-time.Duration(24*days) * time.Hour)
		case active:
			lastDay := c.startOf('d', b.End.Add(-time.Microsecond))
			from = c.shift(lastDay, 'd', -(days - 1))
		case distinctMath[e.Math] && q.cumulative():
			from = r.From
		}
		if !active {
			from, to = later(from, r.From), earlier(to, r.To)
		}
		return from, to, true
	}
	return from, to, false
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// CountsActorEvents implements ActorEventCounter: a trend's actors carry
// their matching events (Page.EventCounts).
func (q *TrendsQuery) CountsActorEvents() {}
