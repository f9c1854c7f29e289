package querybuilder

import (
	"errors"
	"fmt"
	"strings"
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
//  2. actors: GROUP BY actor, a hot actor's events as arrays of their
//     times (+1, microseconds), masks and uuids, sorted by (time, uuid)
//     in step 3 (sortedEvents).
//  3. attempts: the level each actor (per entry bucket for funnel trends)
//     reaches, with the time and position of each step of the counted
//     attempt, computed with vectorised array functions (arrayFill,
//     arrayCumSum), never arrayFold, which runs its lambda once per
//     element and is far slower here (benchmarks/results/funnels.md).
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
func BuildFunnel(q *FunnelQuery, f Facts) (Statement, error) {
	fb, err := newFunnelBuilder(q, f)
	if err != nil {
		return Statement{}, err
	}
	return fb.s.statement(fb.final(fb.attempts())), nil
}

// newFunnelBuilder starts the statement of a validated request.
func newFunnelBuilder(q *FunnelQuery, f Facts) (*funnelBuilder, error) {
	if q == nil || q.clock.loc == nil || q.Range.From.IsZero() || len(q.Steps) < 1 || len(q.Steps) > MaxFunnelSteps {
		return nil, errors.New("querybuilder: BuildFunnel needs a request that ParseFunnel validated")
	}
	if err := q.applyFacts(f); err != nil {
		return nil, err
	}
	if err := q.budget(); err != nil {
		return nil, err
	}
	fb := &funnelBuilder{q: q, s: newEventSource(&q.Common, f), n: len(q.Steps)}
	fb.cur = fb.s.rangeSpan()
	fb.window = fb.s.named("window_us", "Int64", q.Window.Microseconds())
	fb.definitions()
	return fb, nil
}

type funnelBuilder struct {
	q *FunnelQuery
	s *eventSource
	n int
	// perActor keeps one row per actor (funnelOn): other kinds read who
	// the actors are, not only how many.
	perActor bool
	cur      span
	window   string
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
	return fb.s.actor(fb.q.AggregationGroupTypeIndex)
}

// read is what the funnel's event reads join: merged persons when it
// counts persons or reads their properties.
func (fb *funnelBuilder) read() joins {
	persons := fb.q.usesPersons()
	return joins{overrides: fb.q.AggregationGroupTypeIndex == 0 || persons, persons: persons, sessions: fb.q.usesSessions()}
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
	if c := fb.s.cond(andFilters(fb.q.Properties, fb.q.TestAccounts)); c != "" {
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
	for _, e := range steps {
		add(fb.s.entityCond(e))
	}
	if withExclusions {
		for _, x := range fb.q.Exclusions {
			add(fb.s.entityCond(x.Entity))
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
// step can be any event, or is step 1 again; "0", no one, in a one-step
// funnel.
func (fb *funnelBuilder) hot() string {
	if fb.n == 1 {
		// A one-step funnel has no step 2 to reach (and no exclusion,
		// which needs two steps): every actor who entered is at step 1.
		return "0"
	}
	first := fb.q.Steps[0]
	var needed []Entity
	for i, s := range fb.q.Steps[1:] {
		// Ordered and strict: step 2's event, or, when step 2 is
		// optional, any step's up to the first required one after it.
		if fb.q.Order != orderUnordered && i > 0 && !fb.q.Steps[i].Optional {
			break
		}
		if s.AllEvents || sameDefinition(s, first) {
			return "1"
		}
		needed = append(needed, s)
	}
	actor, _ := fb.actor()
	sub := fb.s.selectFrom([]string{actor}, fb.read(), fb.where(needed, true))
	return actor + " " + globalIn(fb.s.schema) + " (\n" + indent(sub) + "\n)"
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
		terms = append(terms, fmt.Sprintf("bitShiftLeft(toUInt64(%s), %d)", fb.s.entityCond(s), fb.bit[i]))
	}
	for x, e := range fb.q.Exclusions {
		terms = append(terms, fmt.Sprintf("bitShiftLeft(toUInt64(%s), %d)", fb.s.entityCond(e.Entity), exclusionBit+x))
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
	if fb.q.Breakdown.Cohorts != nil {
		// The person's cohorts, the same on each of their events: the
		// attributed list is joined into one row per cohort in final.
		return "toJSONString(" + fb.q.Breakdown.cohortValues(&fb.s.scope) + ")"
	}
	return fb.q.Breakdown.valueSQL(&fb.s.scope)
}

// trends reports the funnel-trends visualisation: one funnel per bucket
// of entry.
func (fb *funnelBuilder) trends() bool { return fb.q.Viz == VizTrends }

// bucketKey is the entry bucket of a DateTime64 expression as
// Bucket.Key.
func (fb *funnelBuilder) bucketKey(t string) string {
	return bucketKey(fb.q.Interval, fb.s.bucket(fb.q.Interval, t))
}

// final is step 4: the visualisation's aggregate over the attempts.
func (fb *funnelBuilder) final(attempts string) string {
	base := "SELECT *\nFROM (\n" + indent(attempts) + "\n)\nWHERE level > 0 AND NOT excluded"
	if fb.breakdownValue() != "" && fb.q.Breakdown.Cohorts != nil {
		base = "SELECT * REPLACE (arrayJoin(JSONExtract(breakdown_value, 'Array(String)')) AS breakdown_value)\nFROM (\n" + indent(base) + "\n)"
	}
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
	return "SELECT *, if(value_rank <= " + fb.s.named("breakdown_limit", "UInt32", fb.q.Breakdown.Limit) + ", breakdown_value, " +
		fb.s.named("breakdown_other", "String", BreakdownOther) + ") AS breakdown\nFROM (\n" + indent(ranked) + "\n)"
}

// conversion is step j's conversion time in seconds from step i.
func conversion(j, i int) string {
	return fmt.Sprintf("(t_%d - t_%d) / 1e6", j, i)
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
		reached := fb.q.reachedCol(j)
		states = append(states, fmt.Sprintf("sumIf(weight, %s) AS c_%d", reached, j))
		counts = append(counts, fmt.Sprintf("sum(c_%d)", j))
		if j == 1 {
			avgs, medians = append(avgs, "NULL"), append(medians, "NULL")
			continue
		}
		// From the required step before: an optional one may be skipped.
		from := fb.q.prevRequired(j)
		states = append(states,
			fmt.Sprintf("avgIfState(%s, %s) AS a_%d", conversion(j, from), reached, j),
			fmt.Sprintf("quantileExactInclusiveIfState(0.5)(%s, %s) AS q_%d", conversion(j, from), reached, j))
		avgs = append(avgs, fmt.Sprintf("if(sum(c_%d) = 0, NULL, avgIfMerge(a_%d))", j, j))
		medians = append(medians, fmt.Sprintf("if(sum(c_%d) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_%d))", j, j))
	}
	byValue := "SELECT " + strings.Join(states, ",\n    ") + "\nFROM (\n" + indent(base) + "\n)\nGROUP BY raw_value"
	breakdown := "raw_value"
	if fb.breakdownValue() != "" {
		byValue = "SELECT *, dense_rank() OVER (ORDER BY c_1 DESC, raw_value) AS value_rank\nFROM (\n" + indent(byValue) + "\n)"
		breakdown = "if(value_rank <= " + fb.s.named("breakdown_limit", "UInt32", fb.q.Breakdown.Limit) + ", raw_value, " +
			fb.s.named("breakdown_other", "String", BreakdownOther) + ")"
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
		bins = fb.s.named("bin_count", "UInt32", fb.q.BinCount)
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
