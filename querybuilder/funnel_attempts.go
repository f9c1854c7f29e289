package querybuilder

import (
	"fmt"
	"strings"
)

// The per-actor attempts of a funnel (steps 1 to 3 of funnel_sql.go):
// every event read, grouped by actor, and the level each actor reaches
// with the times and positions of the counted attempt's steps. Funnels
// aggregate them; correlation, funnel paths and the persons behind a
// step read them as they are.

// funnelOn reads q's funnel inside another statement written by s (a
// correlation, funnel paths, the persons of a step): one row per actor,
// never collapsed. Its range and window are bound as values of their own,
// since the other statement may bind a different range; q's facts must
// have been applied.
func funnelOn(q *FunnelQuery, s *eventSource) *funnelBuilder {
	fb := &funnelBuilder{q: q, s: s, n: len(q.Steps), perActor: true}
	from, to := q.Range.bounds()
	s.readsSpan(from, to) // a paths statement's source: the funnel's range is its own
	fb.cur = span{s.time(from), s.time(to)}
	fb.window = s.bind("Int64", q.Window.Microseconds())
	fb.definitions()
	return fb
}

// actorRows is the funnel's actors: one row per actor who entered and was
// not excluded, with level (the furthest step reached) and t_1..t_n, the
// times of the counted attempt's steps (microseconds since the epoch plus
// one; 0 for a step not reached), and breakdown_value with a breakdown.
// An actor who reached step 1 only counts their latest entry.
func (fb *funnelBuilder) actorRows() string {
	cols := []string{"actor", "level"}
	for j := 1; j <= fb.n; j++ {
		cols = append(cols, fmt.Sprintf("t_%d", j))
	}
	if fb.breakdownValue() != "" {
		cols = append(cols, "breakdown_value")
	}
	if fb.trends() {
		cols = append(cols, "bucket") // one row per actor and entry bucket
	}
	return "SELECT " + strings.Join(cols, ", ") + "\nFROM (\n" + indent(fb.attempts()) + "\n)\nWHERE level > 0 AND NOT excluded"
}

// events is step 1: one row per event read.
func (fb *funnelBuilder) events() string {
	actor, _ := fb.actor()
	steps := fb.q.Steps
	if fb.q.Order == orderStrict {
		steps = nil // every event: a step must be the very next one
	}
	cols := []string{
		actor + " AS a",
		fb.mask() + " AS m",
		fb.hot() + " AS hot",
		"toUnixTimestamp64Micro(e.timestamp) + 1 AS tk",
		"toUInt128(e.uuid) AS uk",
	}
	if bd := fb.breakdownValue(); bd != "" {
		// The entry's order as one UInt256, not a (time, uuid) tuple:
		// argMax compares it per event, and tuples compare slowly.
		cols = append(cols, bd+" AS bd",
			"bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(e.timestamp) + 1), 128), toUInt256(toUInt128(e.uuid))) AS at")
	}
	if fb.trends() {
		cols = append(cols, fb.bucketKey("e.timestamp")+" AS bucket")
	}
	if fb.perActor {
		cols = append(cols, "toUnixTimestamp64Micro(e.timestamp) + 1 AS tt0")
	}
	return fb.s.selectFrom(cols, fb.read(), fb.where(steps, true))
}

// collapsed reports whether actors who can only reach step 1 (cold) are
// counted together rather than one by one: when nothing about them but
// their number matters, which is without a breakdown (with one, each
// cold actor's value comes from their own latest entry).
func (fb *funnelBuilder) collapsed() bool { return fb.breakdownValue() == "" && !fb.perActor }

// actors is step 2: one row per hot actor, their events sorted; cold
// actors get a row each too, or (collapsed) one row (per entry bucket
// for funnel trends) holding their number as weight.
func (fb *funnelBuilder) actors(events string) string {
	entry := fmt.Sprintf("bitAnd(m, %d) != 0", fb.entryBits())
	key, weight := "a", "toUInt64(1)"
	group := []string{"actor"}
	if fb.collapsed() {
		zero := "toUUID('00000000-0000-0000-0000-000000000000')"
		if fb.q.AggregationGroupTypeIndex > 0 {
			zero = "''"
		}
		key = "if(hot, a, " + zero + ")"
		weight = "if(max(hot), toUInt64(1), uniqExactIf(a, " + entry + "))"
	}
	if fb.trends() {
		// Each bucket's funnel starts at its own entries: a cold actor's
		// row per entry bucket (one per actor and bucket, or per bucket
		// when collapsed), whose entry value is that bucket's.
		group = append(group, "cold_bucket")
	}
	cols := []string{key + " AS actor", "max(hot) AS is_hot", "countIf(" + entry + ") > 0 AS entered", weight + " AS weight"}
	// A hot actor's events in arrival order: times (+1), masks and uuids
	// as three arrays, sorted in attempts (sortedEvents).
	cols = append(cols, "groupArrayIf(tk, hot) AS t_arrival", "groupArrayIf(m, hot) AS m_arrival", "groupArrayIf(uk, hot) AS u_arrival")
	if fb.breakdownValue() != "" {
		// The values stay in arrival order, and the attributed entry is
		// found by its arrival number (valueAt): sorting the values with
		// the events measured slower. Only cold actors need entry_bd; it
		// is the costly part (benchmarks/results/funnels.md).
		cols = append(cols,
			"groupArrayIf(bd, hot) AS bds",
			"argMaxIf(bd, at, "+entry+" AND NOT hot) AS entry_bd")
	}
	if fb.trends() {
		cols = append(cols, "groupUniqArrayIf(bucket, hot AND "+entry+") AS entry_buckets", "if(hot, '', bucket) AS cold_bucket")
	}
	if fb.perActor {
		// A cold actor's counted attempt is their latest entry.
		cols = append(cols, "maxIf(tt0, "+entry+" AND NOT hot) AS entry_t")
	}
	return "SELECT " + strings.Join(cols, ",\n    ") + "\nFROM (\n" + indent(events) + "\n)\nGROUP BY " + strings.Join(group, ", ")
}

// attempt is what the attempts step computes per actor: the expressions
// in order, by nesting level, ending with level, the step times t_1..t_n
// of the counted attempt and excluded. An expression may use the columns
// of lower levels and earlier ones of its own level; a column a later
// one uses many times starts a new level (next), because ClickHouse
// expands an alias at each use, and chains of them outgrow its query
// tree limit with 20 steps.
type attempt struct {
	levels [][]string
}

func (a *attempt) add(format string, args ...any) {
	if len(a.levels) == 0 {
		a.next()
	}
	l := len(a.levels) - 1
	a.levels[l] = append(a.levels[l], fmt.Sprintf(format, args...))
}

// next starts a nesting level.
func (a *attempt) next() { a.levels = append(a.levels, nil) }

// sql nests the levels over from.
func (a *attempt) sql(from string) string {
	for _, cols := range a.levels {
		from = "SELECT *,\n    " + strings.Join(cols, ",\n    ") + "\nFROM (\n" + indent(from) + "\n)"
	}
	return from
}

// attempts is step 3.
func (fb *funnelBuilder) attempts() string {
	actors := fb.actors(fb.events())
	a := &attempt{}
	if fb.trends() {
		a.add("arrayJoin(if(is_hot, entry_buckets, [cold_bucket])) AS bucket")
	}
	fb.sortedEvents(a)
	entry := fmt.Sprintf("bitAnd(mm, %d) != 0", fb.entryBits())
	if fb.trends() {
		entry += " AND " + fb.bucketKey("fromUnixTimestamp64Micro(tt - 1, 'UTC')") + " = bucket"
	}
	switch fb.q.Order {
	case orderStrict:
		fb.strict(a, entry)
	case orderUnordered:
		fb.unordered(a, entry)
	default:
		fb.ordered(a, entry)
	}
	// Times of the counted attempt's steps (time+1, as in ts).
	a.next()
	for j := 1; j <= fb.n; j++ {
		switch {
		case j == 1 && fb.perActor:
			a.add("if(is_hot, if(hot_level >= 1, ts[p_1], 0), entry_t) AS t_1")
		case fb.q.optional(j):
			a.add("if(p_%d > 0, ts[p_%d], 0) AS t_%d", j, j, j)
		default:
			a.add("if(hot_level >= %d, ts[p_%d], 0) AS t_%d", j, j, j)
		}
	}
	var excluded []string
	for x, e := range fb.q.Exclusions {
		from, to := e.FromStep+1, e.ToStep+1
		excluded = append(excluded, fmt.Sprintf("(hot_level >= %d AND arrayExists((mm, tt, i) -> bitTest(mm, %d) AND i > p_%d "+
			"AND if(hot_level >= %d, i < p_%d, tt - t_1 <= %s), ms, ts, arrayEnumerate(ms)))",
			from, exclusionBit+x, from, to, to, fb.window))
	}
	if len(excluded) == 0 {
		excluded = []string{"0"}
	}
	a.next()
	a.add("is_hot AND (%s) AS excluded", strings.Join(excluded, " OR "))
	a.add("if(is_hot, hot_level, toUInt8(entered)) AS level")
	if fb.breakdownValue() != "" {
		a.add("if(is_hot, %s, %s) AS breakdown_value", fb.attributed(), fb.coldAttributed())
	}
	// Only the scalars leave: filtering rows that still carried the
	// arrays would copy them.
	out := []string{"actor", "weight", "level", "excluded"}
	for j := 1; j <= fb.n; j++ {
		out = append(out, fmt.Sprintf("t_%d", j))
	}
	if fb.breakdownValue() != "" {
		out = append(out, "breakdown_value")
	}
	if fb.trends() {
		out = append(out, "bucket")
	}
	return "SELECT " + strings.Join(out, ", ") + "\nFROM (\n" + indent(a.sql(actors)) + "\n)"
}

// attributed is a hot actor's breakdown value: from the counted
// attempt's step the attribution names.
func (fb *funnelBuilder) attributed() string {
	null := fb.s.named("breakdown_null", "String", BreakdownNull)
	switch fb.q.Attribution {
	case attributionLastTouch:
		var parts []string
		for j := fb.n; j >= 1; j-- {
			parts = append(parts, fmt.Sprintf("hot_level = %d, %s", j, valueAt(j)))
		}
		return "multiIf(" + strings.Join(parts, ", ") + ", " + null + ")"
	case attributionStep:
		j := fb.q.AttributionStep + 1
		if fb.q.optional(j) {
			return fmt.Sprintf("if(p_%d > 0, %s, %s)", j, valueAt(j), null)
		}
		return fmt.Sprintf("if(hot_level >= %d, %s, %s)", j, valueAt(j), null)
	}
	return "if(hot_level >= 1, " + valueAt(1) + ", " + null + ")"
}

// valueAt is the breakdown value of the counted attempt's step j event:
// bds is in arrival order, and arrival is each sorted event's number in
// it (sortedEvents).
func valueAt(j int) string {
	return fmt.Sprintf("bds[arrival[p_%d]]", j)
}

// sortedEvents adds ts and ms, a hot actor's event times (+1) and masks
// sorted by (time, uuid), and with a breakdown arrival, each sorted
// event's number in arrival order. Times and masks are sorted together
// (zipped: one sort) by time alone unless two events share a time; only
// an actor with such a tie sorts by (time, uuid). The three arrays and
// the Int64 sort cost less than one array of UInt256 (time, uuid, mask)
// keys sorted whole (benchmarks/results/funnels.md, run G).
func (fb *funnelBuilder) sortedEvents(a *attempt) {
	// by_time zips the times with the carried arrays; a tie sorts the
	// carried arrays alone (one array, or zipped).
	sorted := func(carried, tied, order, name string) {
		a.add("arraySort((x, t) -> t, arrayZip(t_arrival, %s), t_arrival) AS by_time", carried)
		a.next()
		a.add("by_time.1 AS ts")
		a.add("if(arrayExists((x, y) -> x = y, arrayPopBack(ts), arrayPopFront(ts)),\n"+
			"    arraySort((x, t, u) -> (t, u), %s, t_arrival, u_arrival), %s) AS %s", tied, order, name)
	}
	if fb.breakdownValue() == "" {
		sorted("m_arrival", "m_arrival", "by_time.2", "ms")
		return
	}
	sorted("m_arrival, arrayEnumerate(t_arrival)", "arrayZip(m_arrival, arrayEnumerate(t_arrival))", "arrayZip(by_time.2, by_time.3)", "by_order")
	a.next()
	a.add("by_order.1 AS ms")
	a.add("by_order.2 AS arrival")
}

// coldAttributed is the breakdown value of an actor who reached step 1
// only: their latest entry's, unless the attribution names a later step.
func (fb *funnelBuilder) coldAttributed() string {
	if fb.q.Attribution == attributionStep && fb.q.AttributionStep > 0 {
		return fb.s.named("breakdown_null", "String", BreakdownNull)
	}
	return "entry_bd"
}

// shifted is an array expression moved one place right, a 0 first: at
// position i, the value at i-1.
func shifted(arr string) string {
	return "arrayPopBack(arrayPushFront(" + arr + ", 0))"
}

// ordered adds an ordered funnel's levels (see the top of the file).
func (fb *funnelBuilder) ordered(a *attempt, entry string) {
	fb.stepStarts(a, entry, "s", "arrayFill(x -> x != 0, %s)")
	a.next()
	fb.levelAndStart(a, func(j int) string { return fmt.Sprintf("s_%d[-1]", j) })
	a.next()
	for j := 1; j <= fb.n; j++ {
		if !fb.q.optional(j) {
			a.add("if(hot_level >= %d, arrayFirstIndex(x -> x = start, s_%d), 0) AS p_%d", j, j, j)
		}
	}
	if !fb.q.hasOptional() {
		return
	}
	// An optional step's event: the first after the required step
	// before it and before the required step after it, or inside the
	// window when that one was not reached (funnel_optional.go).
	a.next()
	for j := 2; j <= fb.n; j++ {
		if !fb.q.optional(j) {
			continue
		}
		r, q := fb.q.prevRequired(j), fb.q.nextRequired(j)
		bound := fmt.Sprintf("tt - ts[p_1] <= %s", fb.window)
		if q > 0 {
			bound = fmt.Sprintf("if(hot_level >= %d, i < p_%d, %s)", q, q, bound)
		}
		a.add("if(hot_level >= %d, arrayFirstIndex((mm, tt, i) -> bitTest(mm, %d) AND i > p_%d AND %s, ms, ts, arrayEnumerate(ts)), 0) AS p_%d",
			r, j-1, r, bound, j)
	}
}

// stepStarts adds name_1..name_n, one nesting level each: at each event,
// the start (startKey) of the attempt whose step j it is, or 0, passed
// through carry: arrayFill for ordered funnels (the latest start that
// reached step j so far), nothing for strict ones (the step must be
// this very event).
func (fb *funnelBuilder) stepStarts(a *attempt, entry, name, carry string) {
	a.next()
	a.add("%s AS %s_1", fmt.Sprintf(carry, "arrayMap((tt, mm, i) -> if("+entry+", "+startKey+", toUInt128(0)), ts, ms, arrayEnumerate(ts))"), name)
	for j := 2; j <= fb.n; j++ {
		a.next()
		// An optional step before j may be skipped: j follows the
		// required step before it, whose latest start dominates those of
		// the optional steps in between (funnel_optional.go).
		step := fmt.Sprintf("arrayMap((tt, mm, st) -> if(bitTest(mm, %d) AND st != 0 AND %s, st, toUInt128(0)), ts, ms, %s)",
			j-1, fb.inWindow("st"), shifted(fmt.Sprintf("%s_%d", name, fb.q.prevRequired(j))))
		a.add("%s AS %s_%d", fmt.Sprintf(carry, step), name, j)
	}
}

// startKey identifies an attempt by its first event: time+1 (tt) in the
// high bits, the event's position (i) in the low 32, so that of two
// attempts starting at the same time the later one by uuid is the
// greater, as a later start is.
const startKey = "bitOr(bitShiftLeft(toUInt128(tt), 32), toUInt128(i))"

// inWindow is the condition that the event (time tt) is at most the
// window after the start of attempt key.
func (fb *funnelBuilder) inWindow(key string) string {
	return "tt - toInt64(bitShiftRight(" + key + ", 32)) <= " + fb.window
}

// levelAndStart adds hot_level, the furthest step reached, and start, the
// counted attempt's start, from each step's latest start (0: none).
func (fb *funnelBuilder) levelAndStart(a *attempt, latest func(j int) string) {
	var lv, st []string
	for j := fb.n; j >= 1; j-- {
		lv = append(lv, fmt.Sprintf("%s != 0, %d", latest(j), j))
		st = append(st, fmt.Sprintf("%s != 0, %s", latest(j), latest(j)))
	}
	a.add("toUInt8(multiIf(%s, 0)) AS hot_level", strings.Join(lv, ", "))
	a.add("multiIf(%s, 0) AS start", strings.Join(st, ", "))
}

// strict adds a strict funnel's levels: r_j[i] is the start of the
// attempt whose step j is event i, the events before it being its steps
// 1 to j-1 in a row.
func (fb *funnelBuilder) strict(a *attempt, entry string) {
	fb.stepStarts(a, entry, "r", "%s")
	a.next()
	fb.levelAndStart(a, func(j int) string { return fmt.Sprintf("arrayMax(r_%d)", j) })
	a.next()
	var last []string
	for j := fb.n; j >= 1; j-- {
		last = append(last, fmt.Sprintf("hot_level = %d, arrayLastIndex(x -> x = start, r_%d)", j, j))
	}
	a.add("multiIf(%s, 0) AS p_last", strings.Join(last, ", "))
	a.next()
	for j := 1; j <= fb.n; j++ {
		a.add("if(hot_level >= %d, toUInt32(p_last - hot_level + %d), 0) AS p_%d", j, j, j)
	}
}

// unordered adds an unordered funnel's levels. An entry's level is, over
// the step definitions, how many of each definition's steps its window
// (the events from the entry on, at most the window after it) holds. The
// number of a definition's events at most the window after each entry
// comes from one sort of the events and the window ends together.
func (fb *funnelBuilder) unordered(a *attempt, entry string) {
	// Data keys 2*time (with the mask) sort before the query key
	// 2*(time+window)+1 of an entry whose window holds them.
	a.next()
	a.add("arraySort(arrayConcat(arrayMap((tt, mm) -> bitOr(bitShiftLeft(toUInt128(tt * 2), 64), toUInt128(mm)), ts, ms), "+
		"arrayMap(tt -> bitShiftLeft(toUInt128((tt + %s) * 2 + 1), 64), ts))) AS merged", fb.window)
	a.add("arrayMap(x -> toUInt8(bitAnd(bitShiftRight(x, 64), 1)), merged) AS is_query")
	a.next()
	var level []string
	for d, m := range fb.mult {
		a.add("arrayFilter((c, q) -> q = 1, arrayCumSum(arrayMap((x, q) -> toUInt32(q = 0 AND bitAnd(bitShiftRight(x, %d), 1) = 1), merged, is_query)), is_query) AS upto_%d", d, d)
		a.add("arrayMap((c, mm) -> c - bitTest(mm, %d), arrayCumSum(arrayMap(mm -> toUInt32(bitTest(mm, %d)), ms)), ms) AS before_%d", d, d, d)
		level = append(level, fmt.Sprintf("least(%d, u%d - b%d)", m, d, d))
	}
	var args, names []string
	for d := range fb.mult {
		args = append(args, fmt.Sprintf("upto_%d, before_%d", d, d))
		names = append(names, fmt.Sprintf("u%d, b%d", d, d))
	}
	a.next()
	a.add("arrayMap((tt, mm, %s) -> if(%s, %s, 0), ts, ms, %s) AS levels",
		strings.Join(names, ", "), entry, strings.Join(level, " + "), strings.Join(args, ", "))
	a.next()
	a.add("toUInt8(arrayMax(levels)) AS hot_level")
	a.add("if(hot_level > 0, arrayLastIndex(x -> x = hot_level, levels), 0) AS entry_index")
	a.add("ts[entry_index] AS start")
	a.next()
	var picks []string
	for d, m := range fb.mult {
		picks = append(picks, fmt.Sprintf("arraySlice(arrayFilter((i, tt, mm) -> bitTest(mm, %d) AND i >= entry_index AND tt - start <= %s, "+
			"arrayEnumerate(ts), ts, ms), 1, %d)", d, fb.window, m))
	}
	a.add("if(hot_level > 0, arraySort(arrayConcat(%s)), []) AS positions", strings.Join(picks, ", "))
	a.next()
	for j := 1; j <= fb.n; j++ {
		a.add("if(hot_level >= %d, positions[%d], 0) AS p_%d", j, j, j)
	}
}
