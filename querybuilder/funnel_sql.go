package querybuilder

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// How a funnel statement works (README, "Funnels"):
//
//  1. events: every event the funnel reads, one row each, with its actor,
//     a bit mask of the steps (or, unordered, the step definitions) it
//     matches and of the exclusions it is (bit exclusionBit+x), and
//     whether its actor is hot: has done in the range an exclusion or the
//     event that reaching step 2 needs (see hot). Only a hot actor can
//     get past step 1 or be excluded, so only hot actors' events are
//     kept in arrays; the others (most actors of a typical funnel)
//     reach step 1 if they entered, like the plain count of the floor.
//  2. actors: GROUP BY actor, a hot actor's events as one array of
//     UInt256 keys sorted by (time, uuid): time+1 in microseconds in the
//     top 64 bits, the uuid's 128 bits, the mask in the low 64 bits.
//  3. attempts: the level each actor (per entry bucket for funnel trends)
//     reaches, with the time and position of each step of the counted
//     attempt, computed with vectorised array functions (arrayFill,
//     arrayCumSum), never arrayFold, which runs its lambda once per
//     element and is tens of times slower here.
//  4. the visualisation's aggregate: step counts and conversion times,
//     conversion rates per bucket, or time-to-convert bins.
//
// Ordered: s_j[i] is the latest start (startKey) of an attempt that has
// reached step j by event i, 0 for none. A later start dominates an
// earlier one at the same step (its window ends later), so one value per
// step suffices: event i advances s_{j-1}[i-1] to step j when it matches
// step j and is inside that start's window, and arrayFill carries the
// latest value forward. The counted attempt is the latest start that
// reaches the furthest step; its step j is the first event where s_j
// takes that start.

// exclusionBit is the mask bit of the first exclusion.
const exclusionBit = 32

// funnel statement row columns, per visualisation.
var (
	funnelStepsColumns  = []string{"breakdown", "counts", "average_times", "median_times"}
	funnelTrendsColumns = []string{"breakdown", "bucket", "entered", "converted"}
	funnelTimeColumns   = []string{"bin", "persons", "lo", "width", "bins", "total", "average", "median", "p90", "p99"}
)

// BuildFunnel compiles a request from ParseFunnel or ParseTiming to one
// statement.
func BuildFunnel(q *FunnelQuery) (Statement, error) {
	if q == nil || q.clock.loc == nil || q.Range.From.IsZero() || len(q.Steps) < 2 || len(q.Steps) > MaxFunnelSteps {
		return Statement{}, errors.New("querybuilder: BuildFunnel needs a request that ParseFunnel validated")
	}
	fb := &funnelBuilder{q: q, b: newBinder(), n: len(q.Steps)}
	fb.b.named("team", "Int64", q.Project.ID)
	fb.b.named("tz", "String", q.clock.loc.String())
	fb.cur = span{fb.b.named("date_from", typeTime, q.Range.From.UTC()), fb.b.named("date_to", typeTime, q.Range.To.UTC())}
	fb.window = fb.b.named("window_us", "Int64", q.Window.Microseconds())
	fb.definitions()
	sql := fb.final(fb.attempts(fb.actors(fb.events())))
	sql = insertPersonJoin(sql, fb.b, eventPersonID(q.Project))
	return Statement{SQL: sql, Params: fb.b.params}, nil
}

type funnelBuilder struct {
	q      *FunnelQuery
	b      *binder
	n      int
	cur    span
	window string
	// bit is each step's mask bit: the step's index, or (unordered) its
	// definition's; mult is each definition's number of steps.
	bit  []int
	mult []int
}

// definitions numbers the mask bits. Ordered and strict funnels have a
// bit per step; unordered ones a bit per distinct step definition, which
// a person must do as many times as it appears.
func (fb *funnelBuilder) definitions() {
	fb.bit = make([]int, fb.n)
	for i, s := range fb.q.Steps {
		fb.bit[i] = i
		if fb.q.Order != orderUnordered {
			continue
		}
		fb.bit[i] = len(fb.mult)
		for j := 0; j < i; j++ {
			if sameDefinition(s, fb.q.Steps[j]) {
				fb.bit[i] = fb.bit[j]
				break
			}
		}
		if fb.bit[i] == len(fb.mult) {
			fb.mult = append(fb.mult, 0)
		}
		fb.mult[fb.bit[i]]++
	}
}

// actor is who the funnel counts: the event's person (merged persons
// resolved) or, with aggregation_group_type_index, its group.
func (fb *funnelBuilder) actor() (expr, cond string) {
	if k := fb.q.AggregationGroupTypeIndex; k > 0 {
		return groupColumns[k], groupColumns[k] + " != ''"
	}
	return eventPersonID(fb.q.Project), ""
}

// from is the events and the joins the statement needs: merged persons
// when it counts persons or reads their properties.
func (fb *funnelBuilder) from(persons bool) string {
	s := "events AS e"
	if (fb.q.AggregationGroupTypeIndex == 0 || persons) && !fb.q.Project.NoPersonOverrides {
		s += "\n" + EventPersonJoin
	}
	if persons {
		s += "\n" + personJoinMarker
	}
	return s
}

// entityCond is the condition selecting an entity's events.
func (fb *funnelBuilder) entityCond(e Entity) string {
	var parts []string
	if !e.AllEvents {
		parts = append(parts, "e.event = "+fb.b.str(e.ID))
	}
	if c := e.Properties.sql(fb.b); c != "" {
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		return "1"
	}
	return strings.Join(parts, " AND ")
}

// usesPersons reports whether any filter or the breakdown reads person
// properties.
func (fb *funnelBuilder) usesPersons() bool {
	q := fb.q
	if andFilters(q.Properties, q.TestAccounts).usesPersons() || (q.Breakdown != nil && q.Breakdown.Type == "person") {
		return true
	}
	for _, s := range q.Steps {
		if s.Properties.usesPersons() {
			return true
		}
	}
	for _, x := range q.Exclusions {
		if x.Properties.usesPersons() {
			return true
		}
	}
	return false
}

// where is the conditions on an event the funnel reads: in the range,
// passing the filters, and one of steps or, withExclusions, of the
// exclusions. Nil steps read every event (strict funnels: a step must be
// the very next event, whatever it is).
func (fb *funnelBuilder) where(steps []Entity, withExclusions bool) []string {
	w := []string{"e.team_id = {team:Int64}", fb.cur.sql()}
	if _, cond := fb.actor(); cond != "" {
		w = append(w, cond)
	}
	if c := andFilters(fb.q.Properties, fb.q.TestAccounts).sql(fb.b); c != "" {
		w = append(w, c)
	}
	var relevant []string
	seen := map[string]bool{}
	add := func(c string) {
		if !seen[c] {
			seen[c] = true
			relevant = append(relevant, c)
		}
	}
	for _, s := range steps {
		add(fb.entityCond(s))
	}
	if withExclusions {
		for _, x := range fb.q.Exclusions {
			add(fb.entityCond(x.Entity))
		}
	}
	if len(relevant) > 0 && !seen["1"] && steps != nil {
		w = append(w, "("+strings.Join(relevant, "\n    OR ")+")")
	}
	return w
}

// hot is the condition that an event's actor may get past step 1 or be
// excluded: has done, in the range, an exclusion or the event that
// reaching step 2 needs: step 2's (ordered, strict), any step's but
// step 1's (unordered). "1" when that is everyone who entered: when that
// step can be any event, or is step 1 again.
func (fb *funnelBuilder) hot() string {
	first := fb.q.Steps[0]
	var needed []Entity
	for i, s := range fb.q.Steps[1:] {
		if fb.q.Order != orderUnordered && i > 0 {
			break
		}
		if s.AllEvents || sameDefinition(s, first) {
			return "1"
		}
		needed = append(needed, s)
	}
	actor, _ := fb.actor()
	sub := "SELECT " + actor + "\nFROM " + fb.from(fb.usesPersons()) + "\nWHERE " +
		strings.Join(fb.where(needed, true), "\n  AND ")
	return actor + " IN (\n" + indent(sub) + "\n)"
}

// mask is an event's bit mask of the steps (definitions) and exclusions
// it matches.
func (fb *funnelBuilder) mask() string {
	var terms []string
	done := map[int]bool{}
	for i, s := range fb.q.Steps {
		if done[fb.bit[i]] {
			continue
		}
		done[fb.bit[i]] = true
		terms = append(terms, fmt.Sprintf("bitShiftLeft(toUInt64(%s), %d)", fb.entityCond(s), fb.bit[i]))
	}
	for x, e := range fb.q.Exclusions {
		terms = append(terms, fmt.Sprintf("bitShiftLeft(toUInt64(%s), %d)", fb.entityCond(e.Entity), exclusionBit+x))
	}
	return "(" + strings.Join(terms, "\n    + ") + ")"
}

// entryBits is the mask of the bits an attempt can start with: step 1,
// or any step of an unordered funnel.
func (fb *funnelBuilder) entryBits() uint64 {
	if fb.q.Order != orderUnordered {
		return 1
	}
	return 1<<uint(len(fb.mult)) - 1
}

// breakdownValue is an event's breakdown value, or "" without one.
func (fb *funnelBuilder) breakdownValue() string {
	if fb.q.Breakdown == nil || fb.q.Viz == VizTimeToConvert || fb.q.Viz == VizTiming {
		return ""
	}
	return fb.q.Breakdown.valueSQL(fb.b)
}

// trends reports the funnel-trends visualisation: one funnel per bucket
// of entry.
func (fb *funnelBuilder) trends() bool { return fb.q.Viz == VizTrends }

// bucketKey is the entry bucket of a DateTime64 expression as
// Bucket.Key.
func (fb *funnelBuilder) bucketKey(t string) string {
	tz := "{tz:String}"
	switch fb.q.Interval {
	case IntervalHour:
		return "formatDateTime(toStartOfHour(" + t + ", " + tz + "), '%Y-%m-%d %H:%i:%S', 'UTC')"
	case IntervalWeek:
		mode := 0
		if fb.q.clock.weekStart == time.Monday {
			mode = 1
		}
		return "toString(toStartOfWeek(" + t + ", " + fb.b.named("week_mode", "UInt8", mode) + ", " + tz + "))"
	case IntervalMonth:
		return "toString(toStartOfMonth(" + t + ", " + tz + "))"
	}
	return "toString(toDate(" + t + ", " + tz + "))"
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
		"if(hot, bitOr(bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(e.timestamp) + 1), 192), " +
			"bitShiftLeft(toUInt256(toUInt128(e.uuid)), 64)), toUInt256(m)), toUInt256(0)) AS k",
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
	for i, c := range cols {
		cols[i] = strings.ReplaceAll(c, "\n", "\n    ")
	}
	return "SELECT " + strings.Join(cols, ",\n    ") + "\nFROM " + fb.from(fb.usesPersons()) + "\nWHERE " +
		strings.Join(fb.where(steps, true), "\n  AND ")
}

// collapsed reports whether actors who can only reach step 1 (cold) are
// counted together rather than one by one: when nothing about them but
// their number matters, which is without a breakdown (with one, each
// cold actor's value comes from their own latest entry).
func (fb *funnelBuilder) collapsed() bool { return fb.breakdownValue() == "" }

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
	if fb.breakdownValue() != "" {
		// The values stay in arrival order, and the attributed entry is
		// found by its key in the unsorted keys (valueAt): sorting
		// (key, value) tuples measured 1-4% slower. Only cold actors need
		// entry_bd; it is the costly part (benchmarks/results/funnels.md).
		cols = append(cols,
			"groupArrayIf(k, hot) AS arrival_keys",
			"arraySort(arrival_keys) AS keys",
			"groupArrayIf(bd, hot) AS bds",
			"argMaxIf(bd, at, "+entry+" AND NOT hot) AS entry_bd")
	} else {
		cols = append(cols, "arraySort(groupArrayIf(k, hot)) AS keys")
	}
	if fb.trends() {
		cols = append(cols, "groupUniqArrayIf(bucket, hot AND "+entry+") AS entry_buckets", "if(hot, '', bucket) AS cold_bucket")
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
func (fb *funnelBuilder) attempts(actors string) string {
	a := &attempt{}
	if fb.trends() {
		a.add("arrayJoin(if(is_hot, entry_buckets, [cold_bucket])) AS bucket")
	}
	a.add("arrayMap(x -> toInt64(bitShiftRight(x, 192)), keys) AS ts")
	a.add("arrayMap(x -> toUInt64(bitAnd(x, toUInt256(18446744073709551615))), keys) AS ms")
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
		a.add("if(hot_level >= %d, ts[p_%d], 0) AS t_%d", j, j, j)
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
	null := fb.b.named("breakdown_null", "String", BreakdownNull)
	switch fb.q.Attribution {
	case attributionLastTouch:
		var parts []string
		for j := fb.n; j >= 1; j-- {
			parts = append(parts, fmt.Sprintf("hot_level = %d, %s", j, valueAt(j)))
		}
		return "multiIf(" + strings.Join(parts, ", ") + ", " + null + ")"
	case attributionStep:
		j := fb.q.AttributionStep + 1
		return fmt.Sprintf("if(hot_level >= %d, %s, %s)", j, valueAt(j), null)
	}
	return "if(hot_level >= 1, " + valueAt(1) + ", " + null + ")"
}

// valueAt is the breakdown value of the counted attempt's step j event:
// bds is in arrival order, so the event is found by its key, which is
// unique (it holds the uuid).
func valueAt(j int) string {
	return fmt.Sprintf("bds[indexOf(arrival_keys, keys[p_%d])]", j)
}

// coldAttributed is the breakdown value of an actor who reached step 1
// only: their latest entry's, unless the attribution names a later step.
func (fb *funnelBuilder) coldAttributed() string {
	if fb.q.Attribution == attributionStep && fb.q.AttributionStep > 0 {
		return fb.b.named("breakdown_null", "String", BreakdownNull)
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
		a.add("if(hot_level >= %d, arrayFirstIndex(x -> x = start, s_%d), 0) AS p_%d", j, j, j)
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
		step := fmt.Sprintf("arrayMap((tt, mm, st) -> if(bitTest(mm, %d) AND st != 0 AND %s, st, toUInt128(0)), ts, ms, %s)",
			j-1, fb.inWindow("st"), shifted(fmt.Sprintf("%s_%d", name, j-1)))
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

// final is step 4: the visualisation's aggregate over the attempts.
func (fb *funnelBuilder) final(attempts string) string {
	base := "SELECT *\nFROM (\n" + indent(attempts) + "\n)\nWHERE level > 0 AND NOT excluded"
	switch fb.q.Viz {
	case VizTrends:
		return fb.finalTrends(fb.folded(base))
	case VizTimeToConvert, VizTiming:
		return fb.finalTimes(base)
	}
	return fb.finalSteps(base)
}

// folded ranks breakdown values by the actors who entered and folds the
// ones past the limit into BreakdownOther, as column breakdown.
func (fb *funnelBuilder) folded(base string) string {
	if fb.breakdownValue() == "" {
		return "SELECT *, '' AS breakdown\nFROM (\n" + indent(base) + "\n)"
	}
	vol := "SELECT *, count() OVER (PARTITION BY breakdown_value) AS volume\nFROM (\n" + indent(base) + "\n)"
	if fb.trends() {
		// One row per actor and bucket: volume counts actors.
		vol = "SELECT *, uniqExact(actor) OVER (PARTITION BY breakdown_value) AS volume\nFROM (\n" + indent(base) + "\n)"
	}
	ranked := "SELECT *, dense_rank() OVER (ORDER BY volume DESC, breakdown_value) AS value_rank\nFROM (\n" + indent(vol) + "\n)"
	return "SELECT *, if(value_rank <= " + fb.b.named("breakdown_limit", "UInt32", fb.q.Breakdown.Limit) + ", breakdown_value, " +
		fb.b.named("breakdown_other", "String", BreakdownOther) + ") AS breakdown\nFROM (\n" + indent(ranked) + "\n)"
}

// conversion is step j's conversion time in seconds (from step j-1).
func conversion(j int) string {
	return fmt.Sprintf("(t_%d - t_%d) / 1e6", j, j-1)
}

// finalSteps aggregates the attempts per raw breakdown value first, into
// counts and mergeable states of the conversion times, then ranks the
// few values and folds those past the limit into BreakdownOther by
// merging their states: ranking the actors' rows themselves would sort
// every actor.
func (fb *funnelBuilder) finalSteps(base string) string {
	value := "''"
	if fb.breakdownValue() != "" {
		value = "breakdown_value"
	}
	states := []string{value + " AS raw_value"}
	var counts, avgs, medians []string
	for j := 1; j <= fb.n; j++ {
		states = append(states, fmt.Sprintf("sumIf(weight, level >= %d) AS c_%d", j, j))
		counts = append(counts, fmt.Sprintf("sum(c_%d)", j))
		if j == 1 {
			avgs, medians = append(avgs, "NULL"), append(medians, "NULL")
			continue
		}
		states = append(states,
			fmt.Sprintf("avgIfState(%s, level >= %d) AS a_%d", conversion(j), j, j),
			fmt.Sprintf("quantileExactInclusiveIfState(0.5)(%s, level >= %d) AS q_%d", conversion(j), j, j))
		avgs = append(avgs, fmt.Sprintf("if(sum(c_%d) = 0, NULL, avgIfMerge(a_%d))", j, j))
		medians = append(medians, fmt.Sprintf("if(sum(c_%d) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_%d))", j, j))
	}
	byValue := "SELECT " + strings.Join(states, ",\n    ") + "\nFROM (\n" + indent(base) + "\n)\nGROUP BY raw_value"
	breakdown := "raw_value"
	if fb.breakdownValue() != "" {
		byValue = "SELECT *, dense_rank() OVER (ORDER BY c_1 DESC, raw_value) AS value_rank\nFROM (\n" + indent(byValue) + "\n)"
		breakdown = "if(value_rank <= " + fb.b.named("breakdown_limit", "UInt32", fb.q.Breakdown.Limit) + ", raw_value, " +
			fb.b.named("breakdown_other", "String", BreakdownOther) + ")"
	}
	return "SELECT " + breakdown + " AS breakdown,\n    [" + strings.Join(counts, ", ") + "] AS counts,\n    [" + strings.Join(avgs, ", ") +
		"] AS average_times,\n    [" + strings.Join(medians, ", ") + "] AS median_times\nFROM (\n" + indent(byValue) + "\n)\nGROUP BY breakdown"
}

func (fb *funnelBuilder) finalTrends(rows string) string {
	return fmt.Sprintf("SELECT breakdown, bucket, sumIf(weight, level >= %d) AS entered, sumIf(weight, level >= %d) AS converted\nFROM (\n%s\n)\nGROUP BY breakdown, bucket",
		fb.q.FromStep+1, fb.q.ToStep+1, indent(rows))
}

// finalTimes is the distribution of the time from funnel_from_step to
// funnel_to_step over actors who reached the latter: one row per
// non-empty bin, with the bins' start and width and the statistics over
// every actor on each row.
func (fb *funnelBuilder) finalTimes(base string) string {
	from, to := fb.q.FromStep+1, fb.q.ToStep+1
	times := fmt.Sprintf("SELECT (t_%d - t_%d) / 1e6 AS t\nFROM (\n%s\n)\nWHERE level >= %d", to, from, indent(base), to)
	bins := "least(90, greatest(1, toUInt32(ceil(cbrt(total)))))"
	if fb.q.BinCount > 0 {
		bins = fb.b.named("bin_count", "UInt32", fb.q.BinCount)
	}
	stats := "SELECT t, floor(min(t) OVER ()) AS lo, max(t) OVER () AS hi, count() OVER () AS total,\n" +
		"    avg(t) OVER () AS average, quantileExactInclusive(0.5)(t) OVER () AS median,\n" +
		"    quantileExactInclusive(0.9)(t) OVER () AS p90, quantileExactInclusive(0.99)(t) OVER () AS p99\nFROM (\n" + indent(times) + "\n)"
	binned := "SELECT *, " + bins + " AS bins, greatest(1, ceil((hi - lo) / bins)) AS width,\n" +
		"    toUInt32(least(toFloat64(bins) - 1, floor((t - lo) / width))) AS bin\nFROM (\n" + indent(stats) + "\n)"
	return "SELECT bin, count() AS persons, any(lo) AS lo, any(width) AS width, any(bins) AS bins, any(total) AS total,\n" +
		"    any(average) AS average, any(median) AS median, any(p90) AS p90, any(p99) AS p99\nFROM (\n" + indent(binned) +
		"\n)\nGROUP BY bin\nORDER BY bin"
}
