package querybuilder

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Trends statements answer rows of these columns, in this order: the
// series (entity index), the period (0 current, 1 previous with compare),
// the breakdown value (empty without a breakdown), the bucket key
// (Bucket.Key; empty for aggregated displays) and the value.
var trendsColumns = []string{"series", "period", "breakdown", "bucket", "value"}

// BuildTrends compiles a request from ParseTrends to one statement: every
// series is a subquery of one UNION ALL (a breakdown ranks its values in
// the same subquery, after grouping, or as an IN subquery for maths that
// do not fold), so a request is one round trip however many series it
// has.
func BuildTrends(q *TrendsQuery, f Facts) (Statement, error) {
	if q == nil || q.clock.loc == nil || q.Range.From.IsZero() || len(q.Series) == 0 {
		return Statement{}, errors.New("querybuilder: BuildTrends needs a request that ParseTrends validated")
	}
	if err := q.applyFacts(f); err != nil {
		return Statement{}, err
	}
	if err := q.budget(); err != nil {
		return Statement{}, err
	}
	tb := &trendsBuilder{q: q, s: newEventSource(&q.Common, f)}
	tb.cur = tb.s.rangeSpan()
	if q.Compare {
		p := q.Range.previous()
		tb.prev = &span{tb.s.named("prev_date_from", typeTime, p.From.UTC()), tb.s.named("prev_date_to", typeTime, p.To.UTC())}
		tb.s.readsBack(p.From)
	}
	for _, e := range q.Series {
		if days := activeMath[e.Math]; days > 0 {
			tb.s.readsBack(q.activeFrom(days))
		}
	}
	parts := make([]string, len(q.Series))
	for i, e := range q.Series {
		parts[i] = tb.series(i, e)
	}
	return tb.s.statement("SELECT " + strings.Join(trendsColumns, ", ") + "\nFROM (\n" + indent(strings.Join(parts, "\nUNION ALL\n")) + "\n)"), nil
}

type trendsBuilder struct {
	q    *TrendsQuery
	s    *eventSource
	cur  span
	prev *span
}

// timeCond is the WHERE condition of the current period, or of both.
func (tb *trendsBuilder) timeCond(withPrevious bool) string {
	if tb.prev == nil || !withPrevious {
		return tb.cur.sql()
	}
	return "((" + tb.prev.sql() + ") OR (" + tb.cur.sql() + "))"
}

// period tells the two periods of compare apart by the event's time.
func (tb *trendsBuilder) period(currentFrom string) string {
	if tb.prev == nil {
		return "0"
	}
	return "if(e.timestamp >= " + currentFrom + ", 0, 1)"
}

// actorColumn is what distinct counts count for a series when it is not
// the event's person: sessions, or a group type's groups; "" for persons.
func (q *TrendsQuery) actorColumn(e Entity) string {
	switch {
	case e.Math == "unique_session":
		return "e.mat_session_id"
	case e.Math == "unique_group":
		return groupColumns[e.MathGroupTypeIndex]
	case q.AggregationGroupTypeIndex > 0:
		return groupColumns[q.AggregationGroupTypeIndex]
	}
	return ""
}

// actor is what distinct counts count for a series: the actor column
// (kept only where an event has one), else the event's person.
func (tb *trendsBuilder) actor(e Entity) string {
	if c := tb.q.actorColumn(e); c != "" {
		return c
	}
	return tb.s.personID()
}

func needsActor(math string) bool {
	_, active := activeMath[math]
	_, perActor := perActorMath[math]
	return distinctMath[math] || active || perActor
}

// source is how a series reads its events: the joins, the joins of its
// breakdown's top values (filterRead: without the override join when
// only the actor needed it, as the top values count events), and the
// conditions besides time.
type source struct {
	read, filterRead joins
	where            []string
}

// seriesPlan is what a series' read of events is decided by, before any
// SQL is written.
type seriesPlan struct {
	filters, personSet *PropertyFilter
	read, filterRead   joins
	actorCond          string
}

func (q *TrendsQuery) plan(e Entity) seriesPlan {
	filters := andFilters(q.Properties, q.TestAccounts, e.Properties)
	personBreakdown := q.Breakdown.uses("person")
	// Person-only conditions become a set of persons (personSetCond)
	// unless the series joins persons anyway.
	var personSet *PropertyFilter
	if only, rest := splitPersonConjuncts(filters); only != nil && !rest.usesPersons() && !personBreakdown && canBePersonSet(only) {
		filters, personSet = rest, only
	}
	persons := filters.usesPersons() || personBreakdown
	overrides := persons || personSet != nil
	var actorCond string
	if needsActor(e.Math) {
		if c := q.actorColumn(e); c != "" {
			actorCond = c + " != ''"
		} else {
			overrides = true
		}
	}
	// The person joins are there only when a series reads persons: a
	// total count of events does not depend on who did them, and the
	// joins would cost it a hash lookup per event.
	sessions := filters.usesSessions() || q.Breakdown.uses("session")
	p := seriesPlan{filters: filters, personSet: personSet, read: joins{overrides: overrides, persons: persons, sessions: sessions},
		actorCond: actorCond}
	if persons || personSet != nil {
		p.filterRead = p.read
	}
	p.filterRead.sessions = sessions
	return p
}

func (tb *trendsBuilder) source(e Entity) source {
	p := tb.q.plan(e)
	src := source{read: p.read, filterRead: p.filterRead, where: []string{"e.team_id = {team:Int64}"}}
	if c := tb.s.eventIs(e); c != "" {
		src.where = append(src.where, c)
	}
	if c := tb.s.cond(p.filters); c != "" {
		src.where = append(src.where, c)
	}
	if p.personSet != nil {
		src.where = append(src.where, tb.s.personSetCond(p.personSet))
	}
	if p.actorCond != "" {
		src.where = append(src.where, p.actorCond)
	}
	return src
}

// selectFrom is SELECT cols FROM the source WHERE its conditions and t.
func (tb *trendsBuilder) selectFrom(src source, cols []string, t string) string {
	return tb.s.selectFrom(cols, src.read, append(append([]string{}, src.where...), t))
}

// breakdown is the series' breakdown column: the value when it is among
// the series' top values by event count over the current period, else
// BreakdownOther. Ties go to the smaller value, so results are stable.
func (tb *trendsBuilder) breakdown(src source) string {
	bd := tb.q.Breakdown
	if bd == nil {
		return "''"
	}
	x := bd.valueSQL(&tb.s.scope)
	src.read = src.filterRead
	if n := bd.bins(); n > 0 {
		x = tb.binned(src, n)
		if n+1 <= bd.Limit {
			// Every bin and the null value are among the top values:
			// no second read to rank them (with a session or person
			// join, a second join held in memory at once).
			return x
		}
	}
	top := tb.selectFrom(src, []string{x + " AS breakdown_value"}, tb.timeCond(false)) +
		"\nGROUP BY breakdown_value\nORDER BY count() DESC, breakdown_value\nLIMIT " +
		tb.s.named("breakdown_limit", "UInt32", bd.Limit)
	return "if(" + x + " " + globalIn(tb.s.schema) + " (\n" + indent(top) + "\n), " + x + ", " + tb.s.named("breakdown_other", "String", BreakdownOther) + ")"
}

// binned is a numeric breakdown's value as its histogram bin, "[lo,hi]":
// n bins between the quantiles of the series' values over the current
// period, so each holds about as many events; the null value for events
// without a number. The edges are one scalar subquery over the same read
// (not correlated: the engine computes it once).
func (tb *trendsBuilder) binned(src source, n int) string {
	x := "toFloat64OrNull(" + tb.q.Breakdown.rawSQL(&tb.s.scope) + ")"
	levels := make([]string, n+1)
	for i := range levels {
		levels[i] = strconv.FormatFloat(float64(i)/float64(n), 'f', -1, 64)
	}
	edges := "(\n" + indent(tb.selectFrom(src, []string{"quantilesExactInclusive(" + strings.Join(levels, ", ") + ")(" + x + ")"}, tb.timeCond(false))) + "\n)"
	k := "greatest(1, arrayFirstIndex(q -> " + x + " <= q, arrayPopFront(" + edges + ")))"
	label := "concat('[', toString(round(" + edges + "[" + k + "], 2)), ',', toString(round(" + edges + "[" + k + " + 1], 2)), ']')"
	return "if(" + x + " IS NULL, " + tb.s.named("breakdown_null", "String", BreakdownNull) + ", " + label + ")"
}

// bucket is an event's bucket (eventSource.bucket).
func (tb *trendsBuilder) bucket() string { return tb.s.bucket(tb.q.Interval, "e.timestamp") }

// bucketKey renders a typed bucket column as Bucket.Key.
func (tb *trendsBuilder) bucketKey(col string) string { return bucketKey(tb.q.Interval, col) }

// aggregate applies a property or per-actor math's function to arg; an
// empty bucket or one without numbers is 0.
func aggregate(math, arg string) string {
	base := strings.TrimSuffix(math, "_count_per_actor")
	fn := base
	if level := propertyMath[base]; level > 0 {
		// Exact and interpolated (numpy's default), so results are
		// reproducible: quantile() samples.
		fn = "quantileExactInclusive(" + strconv.FormatFloat(level, 'f', -1, 64) + ")"
	}
	return "ifNotFinite(toFloat64(ifNull(" + fn + "(" + arg + "), 0)), 0)"
}

// series is one entity's subquery.
func (tb *trendsBuilder) series(i int, e Entity) string {
	q := tb.q
	src := tb.source(e)
	idx := strconv.Itoa(i)
	if days, ok := activeMath[e.Math]; ok {
		if q.timeSeries() {
			return tb.activeSeries(idx, e, src, days)
		}
		return tb.activeAggregate(idx, e, src, days)
	}
	if q.Breakdown.groupable() && (e.Math == "total" || e.Math == "sum" || distinctMath[e.Math] && !q.cumulative() && q.Breakdown.fewValues()) {
		return tb.foldedBreakdown(idx, e, src)
	}
	// Only what varies is grouped by: a constant period or breakdown as
	// a grouping key would cost the engine its fast fixed-width hashing.
	var cols, group []string
	period, breakdown, bucketOut := "0", "''", "''"
	if q.timeSeries() {
		cols = append(cols, tb.bucket()+" AS ts_bucket")
		group = append(group, "ts_bucket")
		bucketOut = tb.bucketKey("ts_bucket")
	}
	if tb.prev != nil {
		cols = append(cols, tb.period(tb.cur.from)+" AS period")
		group = append(group, "period")
		period = "period"
	}
	if q.Breakdown != nil {
		cols = append(cols, tb.breakdown(src)+" AS breakdown")
		group = append(group, "breakdown")
		breakdown = "breakdown"
	}
	if needsActor(e.Math) {
		cols = append(cols, tb.actor(e)+" AS actor")
	}
	if _, ok := propertyMath[e.Math]; ok {
		cols = append(cols, "toFloat64OrNull("+propertyText(&tb.s.scope, "event", e.MathProperty)+") AS v")
	}
	if len(cols) == 0 {
		cols = append(cols, "1 AS one") // a total over the whole range reads no column
	}
	inner := tb.selectFrom(src, cols, tb.timeCond(true))
	head := "SELECT " + idx + " AS series, " + period + " AS period, " + breakdown + " AS breakdown, "
	switch _, perActor := perActorMath[e.Math]; {
	case perActor:
		// Each actor's event count in the bucket, then the math over actors.
		counts := "SELECT " + strings.Join(append(group, "actor"), ", ") + ", count() AS c\nFROM (\n" + indent(inner) + "\n)" + groupBy(append(group, "actor"))
		return head + bucketOut + " AS bucket, " + aggregate(e.Math, "c") + " AS value\nFROM (\n" + indent(counts) + "\n)" + groupBy(group)
	case distinctMath[e.Math] && q.cumulative():
		// Cumulative distinct counts count each actor once, in the bucket
		// of their first event, so the running sum is the number of
		// distinct actors so far, not a sum of daily uniques.
		keys := append(group[1:], "actor") // all but ts_bucket, which comes first
		first := "SELECT " + strings.Join(keys, ", ") + ", min(ts_bucket) AS first_bucket\nFROM (\n" + indent(inner) + "\n)" + groupBy(keys)
		return head + tb.bucketKey("first_bucket") + " AS bucket, toFloat64(count()) AS value\nFROM (\n" + indent(first) + "\n)" +
			groupBy(append([]string{"first_bucket"}, group[1:]...))
	}
	value := "toFloat64(count())"
	switch {
	case distinctMath[e.Math]:
		value = "toFloat64(uniqExact(actor))"
	case e.Math != "total":
		value = aggregate(e.Math, "v")
	}
	return head + bucketOut + " AS bucket, " + value + " AS value\nFROM (\n" + indent(inner) + "\n)" + groupBy(group)
}

// foldedBreakdown is a total, sum or distinct count broken down in one
// pass over the events: the numbers are grouped by the raw columns the
// breakdown reads first (groupedBreakdown), the breakdown value is
// computed per grouped row, then the values are ranked by event count in
// the current period (a window over the small grouped result) and all but
// the top ones fold into "other". Counts and sums add up; a distinct
// count keeps each grouped row's set of actors (uniqExactState) and
// merges the sets of the rows that fold together, so an actor seen under
// two values that both fold into "other" counts once there. Ranking first
// and counting after (breakdown) read the events twice and computed the
// value per event, which cost more (benchmarks/results/breakdowns.md). A
// distinct count folds only when the breakdown reads columns of few
// values (Breakdown.fewValues): its sets are kept per bucket and raw
// value, not per top value, and a set costs kilobytes even when nearly
// empty, so a URL or a group's name would keep millions of them in
// memory. Quantiles and per-actor maths do not fold; cumulative distinct
// counts count first buckets.
func (tb *trendsBuilder) foldedBreakdown(idx string, e Entity, src source) string {
	q := tb.q
	var cols, group []string
	bucketOut, period := "''", "0"
	if q.timeSeries() {
		cols = append(cols, tb.bucket()+" AS ts_bucket")
		group = append(group, "ts_bucket")
		bucketOut = tb.bucketKey("ts_bucket")
	}
	volume := "sum(c)"
	if tb.prev != nil {
		cols = append(cols, tb.period(tb.cur.from)+" AS period")
		group = append(group, "period")
		period = "period"
		volume = "sumIf(c, period = 0)"
	}
	// Events group by the property's raw value, which null replaces only
	// afterwards, in the small grouped result: a materialized column keeps
	// its LowCardinality type as the key, so grouping hashes dictionary
	// indexes, and the replacement is not computed per event
	// (benchmarks/results/trends.md).
	g := q.Breakdown.grouped(&tb.s.scope)
	keys, keyAggregates := g.groupKeys()
	cols = append(cols, g.eventColumns()...)
	sums, value := []string{"count() AS c"}, "toFloat64(sum(c))"
	switch {
	case e.Math == "sum":
		cols = append(cols, "toFloat64OrNull("+propertyText(&tb.s.scope, "event", e.MathProperty)+") AS v")
		sums, value = append(sums, "sum(v) AS s"), aggregate("sum", "s")
	case distinctMath[e.Math]:
		cols = append(cols, tb.actor(e)+" AS actor")
		sums, value = append(sums, "uniqExactState(actor) AS u"), "toFloat64(uniqExactMerge(u))"
	}
	if len(cols) == 0 {
		cols = append(cols, "1 AS one") // an expression of no field, over the whole range
	}
	outer := append([]string{}, group...)
	group = append(group, keys...)
	grouped := "SELECT " + strings.Join(append(append(append([]string{}, group...), keyAggregates...), sums...), ", ") + "\nFROM (\n" +
		indent(tb.selectFrom(src, cols, tb.timeCond(true))) + "\n)" + groupBy(group)
	named := "SELECT *, " + g.value + " AS breakdown_value\nFROM (\n" + indent(grouped) + "\n)" + g.collisionCheck()
	withVolume := "SELECT *, " + volume + " OVER (PARTITION BY breakdown_value) AS volume\nFROM (\n" + indent(named) + "\n)"
	ranked := "SELECT *, dense_rank() OVER (ORDER BY volume DESC, breakdown_value) AS value_rank\nFROM (\n" + indent(withVolume) + "\n)"
	fold := "if(volume > 0 AND value_rank <= " + tb.s.named("breakdown_limit", "UInt32", q.Breakdown.Limit) + ", breakdown_value, " +
		tb.s.named("breakdown_other", "String", BreakdownOther) + ")"
	outer = append(outer, "breakdown")
	return g.withClause() + "SELECT " + idx + " AS series, " + period + " AS period, " + fold + " AS breakdown, " + bucketOut + " AS bucket, " + value +
		" AS value\nFROM (\n" + indent(ranked) + "\n)" + groupBy(outer)
}

// activeSeries answers weekly/monthly active actors per bucket: those
// with an event in the `days` days (hourly: 24*days hours) ending at the
// bucket's end. Spreading each active (actor, day) over the days whose
// window holds it costs days-fold rows (720-fold for hours; see
// benchmarks/results/trends.md); instead each actor's active units merge
// into islands (units closer than the window), each island covers [first,
// last + window), and the statement returns only the +1/-1 changes at
// island edges, summed per unit: a few rows per unit of the range.
// ShapeTrends adds them up to each bucket's last unit (activeDeltas).
// Both periods of compare read the same changes.
func (tb *trendsBuilder) activeSeries(idx string, e Entity, src source, days int) string {
	q, c := tb.q, tb.q.clock
	first := q.Range
	if q.Compare {
		first = q.Range.previous()
	}
	firstStart := first.Buckets()[0].Start
	unit, width := "toDate(e.timestamp, {tz:String})", strconv.Itoa(days) // Date arithmetic is in days
	from := c.shift(firstStart, 'd', -days)
	if q.Interval == IntervalHour {
		unit, width = "toStartOfHour(e.timestamp, {tz:String})", strconv.Itoa(days*24*3600) // DateTime's in seconds
		from = firstStart.Add(-time.Duration(24*days) * time.Hour)
	}
	window := span{tb.s.named("active_from", typeTime, from.UTC()), tb.cur.to}
	cols, keys, breakdown, edgeCols := []string{"DISTINCT " + unit + " AS u", tb.actor(e) + " AS actor"}, []string{"actor"}, "''", ""
	if q.Breakdown != nil {
		cols = append(cols, tb.breakdown(src)+" AS breakdown")
		keys, breakdown, edgeCols = append(keys, "breakdown"), "breakdown", "breakdown, "
	}
	pairs := tb.selectFrom(src, cols, window.sql())
	islands := "SELECT " + strings.Join(keys, ", ") + ", arraySort(groupArray(u)) AS us,\n" +
		"    arrayFilter((x, i) -> i = 1 OR x - us[i - 1] >= " + width + ", us, arrayEnumerate(us)) AS starts,\n" +
		"    arrayFilter((x, i) -> i = length(us) OR us[i + 1] - x >= " + width + ", us, arrayEnumerate(us)) AS lasts\n" +
		"FROM (\n" + indent(pairs) + "\n)" + groupBy(keys)
	edges := "SELECT " + edgeCols + "arrayJoin(arrayConcat(arrayMap(x -> (x, toInt8(1)), starts), " +
		"arrayMap(x -> (x + " + width + ", toInt8(-1)), lasts))) AS edge, edge.1 AS t, edge.2 AS delta\nFROM (\n" + indent(islands) + "\n)"
	group := []string{"t"}
	if q.Breakdown != nil {
		group = append(group, "breakdown")
	}
	return "SELECT " + idx + " AS series, 0 AS period, " + breakdown + " AS breakdown, " + tb.bucketKey("t") + " AS bucket, toFloat64(sum(delta)) AS value\nFROM (\n" +
		indent(edges) + "\n)" + groupBy(group)
}

// activeFrom is no later than the earliest event weekly or monthly
// active users of `days` read (activeSeries, activeAggregate): a day
// before the look-back of the first period's start, DST changes included.
func (q *TrendsQuery) activeFrom(days int) time.Time {
	first := q.Range
	if q.Compare {
		first = q.Range.previous()
	}
	return first.From.AddDate(0, 0, -(days + 1))
}

// activeAggregate is weekly/monthly active users as one number: the
// actors active in the `days` days ending at the range's end (and at the
// previous period's end with compare).
func (tb *trendsBuilder) activeAggregate(idx string, e Entity, src source, days int) string {
	q, c := tb.q, tb.q.clock
	windowStart := func(end time.Time) time.Time { return c.shift(c.startOf('d', end), 'd', -(days - 1)) }
	cur := span{tb.s.named("active_from", typeTime, windowStart(q.Range.To).UTC()), tb.cur.to}
	t := cur.sql()
	if q.Compare {
		p := q.Range.previous()
		prev := span{tb.s.named("prev_active_from", typeTime, windowStart(p.To).UTC()), tb.prev.to}
		t = "((" + prev.sql() + ") OR (" + t + "))"
	}
	inner := tb.selectFrom(src, []string{tb.period(cur.from) + " AS period", tb.breakdown(src) + " AS breakdown", tb.actor(e) + " AS actor"}, t)
	return "SELECT " + idx + " AS series, period, breakdown, '' AS bucket, toFloat64(uniqExact(actor)) AS value\nFROM (\n" +
		indent(inner) + "\n)\nGROUP BY period, breakdown"
}
