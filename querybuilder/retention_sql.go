package querybuilder

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Retention statements answer one row per cell: the breakdown value
// ("" without one), the cohort's period k, the interval j after it and
// the actors of cohort k who returned in period k + j (j = 0: the
// cohort's size).
var retentionColumns = []string{"breakdown", "cohort", "interval", "actors"}

// BuildRetention compiles a request from ParseRetention to one statement
// that reads the events once, grouped by actor:
//
//  1. each event read: its actor, its period index p (0 is the first
//     period), whether it is a target and a returning event;
//  2. per actor, a bit per period: tb, the cohorts the actor is in
//     (recurring: every period with a target event; first time: the
//     period of the first target event ever, if in the window), and rb,
//     the periods with a returning event;
//  3. each cohort of each actor with the actor's returns after it,
//     grouped (far fewer rows than actors), each group expanded into the
//     cells it counts in.
//
// An event breakdown of recurring retention takes each cohort's value
// from the actor's first target event of that period, so step 2 first
// groups by actor and period.
func BuildRetention(q *RetentionQuery, f Facts) (Statement, error) {
	if q == nil || q.clock.loc == nil || len(q.starts) != q.Intervals+1 {
		return Statement{}, errors.New("querybuilder: BuildRetention needs a request that ParseRetention validated")
	}
	rb := q.builder(f)
	return rb.s.statement(rb.cells(rb.actors(rb.events()))), nil
}

func (q *RetentionQuery) builder(f Facts) *retentionBuilder {
	rb := &retentionBuilder{q: q, s: newEventSource(&q.Common, f)}
	if q.FirstTime {
		rb.s.readsBack(time.Time{}) // target events of all history
	} else {
		rb.s.readsBack(q.starts[0])
	}
	rb.n = rb.s.named("intervals", "UInt32", q.Intervals)
	rb.bits = "UInt64"
	if q.Intervals > 64 {
		rb.bits = "UInt128" // total_intervals is at most 100
	}
	return rb
}

// ActorType implements ActorsLister.
func (q *RetentionQuery) ActorType(Params) ActorType { return aggregated(q.AggregationGroupTypeIndex) }

// Actors implements ActorsLister: the actors of cohort selected_interval
// (with returning_interval, those of its cell) and, broken down, of
// breakdown_value, each with its appearances (a third column: 0 or 1 per
// interval of the row).
func (q *RetentionQuery) Actors(sel Params, f Facts, page Page) (Statement, error) {
	if q == nil || q.clock.loc == nil || len(q.starts) != q.Intervals+1 {
		return Statement{}, errors.New("querybuilder: retention actors need a request that ParseRetention validated")
	}
	pr := &problems{}
	k := selInt(sel, "selected_interval", pr)
	j := -1
	if n, ok := sel.integer("returning_interval", pr); ok {
		if n < 0 {
			pr.add("returning_interval", "returning_interval must be 0 or more: a period after selected_interval")
		}
		j = int(max(n, -1))
	}
	value, _ := sel.str("breakdown_value", pr)
	if k < 0 || k >= q.Intervals || j >= q.Intervals-k {
		pr.add("selected_interval", "selected_interval and returning_interval must name a cell: 0 <= selected_interval < %d, "+
			"returning_interval below total_intervals - selected_interval", q.Intervals)
	}
	if q.Breakdown != nil && !sel.present("breakdown_value") {
		pr.add("breakdown_value", "breakdown_value is required with a breakdown")
	}
	if !pr.ok() {
		return Statement{}, pr.err()
	}
	rb := q.builder(f)
	bit := func(x, i string) string { return "bitAnd(bitShiftRight(" + x + ", " + i + "), 1) = 1" }
	kk := rb.s.bind("UInt32", uint32(k))
	cond := bit("tb", kk)
	if j > 0 {
		cond += " AND " + bit("rb", kk+" + "+rb.s.bind("UInt32", uint32(j)))
	}
	rows := rb.actors(rb.events())
	if q.Breakdown != nil {
		// The value as the cells fold it: ranked by cohort memberships.
		named := "SELECT *, " + nullBreakdown("bd", rb.s.binder) + " AS value\nFROM (\n" + indent(rows) + "\n)"
		volume := "SELECT *, sum(bitCount(tb)) OVER (PARTITION BY value) AS volume\nFROM (\n" + indent(named) + "\n)"
		rows = "SELECT *, dense_rank() OVER (ORDER BY volume DESC, value) AS value_rank\nFROM (\n" + indent(volume) + "\n)"
		limit := rb.s.named("breakdown_limit", "UInt32", q.Breakdown.Limit)
		if value == BreakdownOther {
			cond += " AND value_rank > " + limit
		} else {
			cond += " AND value_rank <= " + limit + " AND value = " + rb.s.str(value)
		}
	}
	// Each actor's appearances along the row: 1 where they count in the
	// cell (k, j), that is j = 0 (the cohort) or a return in period k + j,
	// as PostHog's retention actors list them.
	appearances := "arrayMap(j -> toUInt8(j = 0 OR " + bit("rb", kk+" + j") + "), range(toUInt64(" + rb.n + " - " + kk + "))) AS appearances"
	return actorsPage(rb.s, "SELECT a AS actor, "+appearances+"\nFROM (\n"+indent(rows)+"\n)\nWHERE "+cond, page, "appearances"), nil
}

type retentionBuilder struct {
	q *RetentionQuery
	s *eventSource
	// n is the number of periods as a parameter; bits the bitmaps' type.
	n, bits string
	// t and r are whether an event read is a target or a returning
	// event; from is the window's start.
	t, r, from string
}

// eventBreakdown reports a breakdown whose value comes from events.
func (rb *retentionBuilder) eventBreakdown() bool {
	return rb.q.Breakdown != nil && rb.q.Breakdown.Type != "person"
}

// events is step 1. t and r are "1" when the read already keeps only
// events of that entity (both entities the same), which saves comparing
// the event name again per event.
func (rb *retentionBuilder) events() string {
	q, s := rb.q, rb.s
	actor, actorCond := s.actor(q.AggregationGroupTypeIndex)
	target, returning := s.entityCond(q.Target), s.entityCond(q.Returning)
	cols := []string{actor + " AS a", s.periodIndex(q.Period, "e.timestamp", q.starts[0]) + " AS p"}
	rb.t, rb.r = "1", "1"
	if target != returning {
		rb.t, rb.r = "t", "r"
		cols = append(cols, target+" AS t", returning+" AS r")
	}
	if q.FirstTime {
		cols = append(cols, "e.timestamp AS ts")
	}
	if q.Breakdown != nil {
		// The raw value: the null value replaces an empty one only after
		// grouping (memberships), not per event.
		x := q.Breakdown.rawSQL(&s.scope)
		if !q.Breakdown.plain() {
			x = q.Breakdown.valueSQL(&s.scope) // a normalized URL
		}
		cols = append(cols, x+" AS bd")
	}
	if rb.eventBreakdown() {
		// An event's order as one number: its time, then its uuid. A
		// tuple column measured slower (benchmarks/results/retention.md).
		cols = append(cols, "bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(e.timestamp)), 128), toUInt256(toUInt128(e.uuid))) AS at")
	}
	rb.from = s.time(q.starts[0])
	end := s.time(q.starts[q.Intervals])
	where := []string{"e.team_id = {team:Int64}", "e.timestamp < " + end}
	if q.FirstTime {
		// Target events of all history (the first one decides the
		// cohort), returning events of the window.
		where = append(where, "(e.timestamp >= "+rb.from+" OR ("+target+"))")
	} else {
		where = append(where, "e.timestamp >= "+rb.from)
	}
	switch {
	case target == "1" || returning == "1":
		// An entity of all events reads every event.
	case target == returning:
		where = append(where, target)
	default:
		where = append(where, "(("+target+") OR ("+returning+"))")
	}
	if actorCond != "" {
		where = append(where, actorCond)
	}
	if c := s.cond(andFilters(q.Properties, q.TestAccounts)); c != "" {
		where = append(where, c)
	}
	return s.selectFrom(cols, q.read(), where)
}

// bit is the bitmap of period p. The engine computes it for rows that
// the condition beside it leaves out too, where p may be negative and a
// negative shift would fail.
func (rb *retentionBuilder) bit(p string) string {
	return "bitShiftLeft(to" + rb.bits + "(1), toUInt64(greatest(" + p + ", 0)))"
}

// orIf is groupBitOrIf, or groupBitOr when the condition always holds.
func orIf(x, cond string) string {
	if cond == "1" {
		return "groupBitOr(" + x + ")"
	}
	return "groupBitOrIf(" + x + ", " + cond + ")"
}

// and joins conditions, leaving out those that always hold.
func and(conds ...string) string {
	var out []string
	for _, c := range conds {
		if c != "1" {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return "1"
	}
	return strings.Join(out, " AND ")
}

// actors is step 2: one row per actor (and cohort value) with a, bd, tb,
// rb.
func (rb *retentionBuilder) actors(events string) string {
	q := rb.q
	switch {
	case rb.eventBreakdown() && !q.FirstTime:
		// Per actor and period first: each cohort's value is the value of
		// the period's first target event.
		entry, flags, hasR, cohorts := "argMin(bd, at)", "", "1", "groupArray((p, entry_bd))"
		if rb.t != "1" {
			entry, flags, hasR = "argMinIf(bd, at, t)", "max(t) AS has_t, max(r) AS has_r, ", "has_r"
			cohorts = "groupArrayIf((p, entry_bd), has_t)"
		}
		periods := "SELECT a, p, " + flags + entry + " AS entry_bd\nFROM (\n" + indent(events) + "\n)\nGROUP BY a, p"
		perActor := "SELECT a, " + orIf(rb.bit("p"), hasR) + " AS rb, " + cohorts + " AS cohorts\nFROM (\n" +
			indent(periods) + "\n)\nGROUP BY a"
		return "SELECT a, cohort.2 AS bd, " + rb.bit("cohort.1") + " AS tb, rb\nFROM (\n" + indent(perActor) + "\n)\nARRAY JOIN cohorts AS cohort"
	case q.FirstTime:
		// The first target event ever decides the cohort: its period,
		// when it is in the window. Returning events count in the window
		// only.
		value := "''"
		if q.Breakdown != nil {
			value = "any(bd)"
			if rb.eventBreakdown() {
				value = "argMinIf(bd, at, " + rb.t + ")"
			}
		}
		first := "min(ts)"
		if rb.t != "1" {
			first = "minIf(ts, t)" // 1970 for none: no cohort
		}
		perActor := "SELECT a, " + value + " AS bd, " + first + " AS first, " + orIf(rb.bit("p"), and(rb.r, "ts >= "+rb.from)) + " AS rb\nFROM (\n" +
			indent(events) + "\n)\nGROUP BY a"
		return "SELECT a, bd, if(first >= " + rb.from + ", " + rb.bit(rb.s.periodIndex(q.Period, "first", q.starts[0])) + ", 0) AS tb, rb\nFROM (\n" +
			indent(perActor) + "\n)"
	}
	value := "''"
	if q.Breakdown != nil {
		value = "any(bd)" // a person property: the actor's one value
	}
	return "SELECT a, " + value + " AS bd, " + orIf(rb.bit("p"), rb.t) + " AS tb, " + orIf(rb.bit("p"), rb.r) + " AS rb\nFROM (\n" +
		indent(events) + "\n)\nGROUP BY a"
}

// cells is step 3: each actor's cohorts, each with the actor's returns
// from that cohort on (rb shifted by the cohort), grouped: cohorts of
// many actors share those, so few rows are expanded into the cells they
// count in. With a breakdown, values are ranked by cohort memberships and
// folded past the limit before the expansion.
func (rb *retentionBuilder) cells(actors string) string {
	q := rb.q
	bitSet := func(x, i string) string { return fmt.Sprintf("bitTest(%s, %s)", x, i) }
	if rb.bits != "UInt64" {
		// bitTest does not take 128-bit numbers.
		bitSet = func(x, i string) string { return fmt.Sprintf("bitAnd(bitShiftRight(%s, %s), 1) = 1", x, i) }
	}
	// Only what varies is grouped by: a constant '' beside the cohort and
	// bitmap would cost the engine its fixed-width hashing.
	keys := "cohort, r"
	if q.Breakdown != nil {
		keys = "bd, cohort, r"
	}
	bd := "bd"
	if q.Breakdown != nil {
		bd = nullBreakdown("bd", rb.s.binder) + " AS bd"
	}
	memberships := "SELECT " + bd + ", arrayJoin(arrayFilter(k -> " + bitSet("tb", "k") + ", range(" + rb.n + "))) AS cohort, bitShiftRight(rb, cohort) AS r\nFROM (\n" +
		indent(actors) + "\n)"
	groups := "SELECT " + keys + ", count() AS c\nFROM (\n" + indent(memberships) + "\n)\nGROUP BY " + keys
	value := "''"
	if q.Breakdown != nil {
		groups = "SELECT *, dense_rank() OVER (ORDER BY volume DESC, bd) AS value_rank\nFROM (\n" +
			indent("SELECT *, sum(c) OVER (PARTITION BY bd) AS volume\nFROM (\n"+indent(groups)+"\n)") + "\n)"
		value = "if(value_rank <= " + rb.s.named("breakdown_limit", "UInt32", q.Breakdown.Limit) + ", bd, " +
			rb.s.named("breakdown_other", "String", BreakdownOther) + ")"
	}
	expanded := "SELECT " + value + " AS breakdown, cohort, c,\n    arrayJoin(arrayFilter(j -> j = 0 OR " + bitSet("r", "j") + ", range(toUInt64(" + rb.n +
		" - cohort)))) AS interval\nFROM (\n" + indent(groups) + "\n)"
	return "SELECT " + strings.Join(retentionColumns[:3], ", ") + ", sum(c) AS actors\nFROM (\n" + indent(expanded) + "\n)\nGROUP BY breakdown, cohort, interval"
}
