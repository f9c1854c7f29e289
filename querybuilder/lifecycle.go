package querybuilder

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// LifecycleQuery is a lifecycle request (insights/trend with insight
// LIFECYCLE or shown_as Lifecycle): per bucket, the actors who did the
// entity's event as new, returning or resurrecting, and the dormant ones
// who did it in the bucket before but not in this one.
type LifecycleQuery struct {
	*TrendsQuery
}

// Lifecycle statuses, in the order of the result's series.
var lifecycleStatuses = []string{"new", "returning", "resurrecting", "dormant"}

// lifecycleKind answers insights/trend for lifecycle requests and
// computes LIFECYCLE insights.
var lifecycleKind = Kind{Name: "lifecycle", Route: "trend", Insight: "LIFECYCLE", Persons: "lifecycle",
	Claims: func(p Params) bool { return claims(p, "LIFECYCLE") },
	Parse:  func(p Params, env Env) (Query, error) { return ParseLifecycle(p, env) },
	Node:   "LifecycleQuery", translate: lifecycleNode}

// claims reports a request of the trends route that asks for another
// analysis: insight (any case) or the legacy shown_as naming it.
func claims(p Params, insight string) bool {
	for _, name := range []string{"insight", "shown_as"} {
		if s, ok := p.str(name, &problems{}); ok && strings.EqualFold(s, insight) {
			return true
		}
	}
	return false
}

// ParseLifecycle reads a lifecycle request: a trends request of one
// entity, without the trends options that lifecycle has no meaning for.
func ParseLifecycle(p Params, env Env) (*LifecycleQuery, error) {
	t, err := ParseTrends(p, env)
	pr := &problems{}
	if t != nil {
		if len(t.Series) > 1 {
			pr.add("events", "a lifecycle has one entity (an event or action), got %d", len(t.Series))
		}
		for _, name := range []string{"breakdown", "breakdowns", "compare", "formula"} {
			if refused(p, name) {
				pr.add(name, "%s does not apply to a lifecycle", name)
			}
		}
	}
	q := &LifecycleQuery{TrendsQuery: t}
	if t != nil && err == nil && pr.ok() {
		if berr := q.budget(); berr != nil {
			pr.errs = append(pr.errs, berr)
		}
	}
	return q, errors.Join(err, pr.err())
}

// refused reports a parameter sent with a value that means something
// (not null, false, empty): one the kind cannot honour.
func refused(p Params, name string) bool {
	raw, ok := p[name]
	if !ok || isNull(raw) {
		return false
	}
	s := strings.TrimSpace(string(raw))
	return s != "false" && s != `""` && s != "[]" && s != `"false"`
}

// Needs implements Query: the bucket before the range and the actors'
// creation need no fact but merged persons.
func (q *LifecycleQuery) Needs() Needs {
	return Needs{FirstEvent: q.FromAll(), PersonOverrides: q.AggregationGroupTypeIndex == 0 || q.read().persons}
}

func (q *LifecycleQuery) read() joins {
	f := andFilters(q.Properties, q.TestAccounts, q.Series[0].Properties)
	persons := f.usesPersons()
	return joins{overrides: q.AggregationGroupTypeIndex == 0 || persons, persons: persons, sessions: f.usesSessions()}
}

// Lifecycle statements answer rows of bucket (1 is the range's first),
// status and the number of actors.
var lifecycleColumns = []string{"bucket", "status", "actors"}

// Build implements Query. The statement reads the entity's events of
// the range and of the bucket before it, per actor the buckets they were
// active in (0: the bucket before) and their creation bucket, and compares
// each bucket with the one before: one pass over the events grouped by
// actor. An actor's creation is the person's created_at (their first
// event as ingestion saw it; merges keep the earlier), or for groups the
// group's first event.
func (q *LifecycleQuery) Build(f Facts) (Statement, error) {
	lb, err := q.builder(f)
	if err != nil {
		return Statement{}, err
	}
	if lb.bits {
		return lb.s.statement(lifecycleBits(lb.perActor, lb.n)), nil
	}
	statuses := "arrayConcat(\n" +
		"    arrayFilter(x -> x.1 >= 1, arrayMap((b, i) -> (b, multiIf(b = cp, 'new', i > 1 AND ps[i - 1] = b - 1, 'returning', 'resurrecting')), ps, arrayEnumerate(ps))),\n" +
		"    arrayMap(b -> (b + 1, 'dormant'), arrayFilter((b, i) -> b < " + lb.n + " AND (i = length(ps) OR ps[i + 1] != b + 1), ps, arrayEnumerate(ps))))"
	sql := "SELECT st.1 AS bucket, st.2 AS status, count() AS actors\nFROM (\n" + indent(lb.perActor) + "\n)\nARRAY JOIN " + statuses +
		" AS st\nGROUP BY bucket, status"
	return lb.s.statement(sql), nil
}

// ActorType implements ActorsLister.
func (q *LifecycleQuery) ActorType(Params) ActorType { return aggregated(q.AggregationGroupTypeIndex) }

// Actors implements ActorsLister: the actors of lifecycle_type (new,
// returning, resurrecting, dormant) in the bucket starting at
// target_date.
func (q *LifecycleQuery) Actors(sel Params, f Facts, page Page) (Statement, error) {
	pr := &problems{}
	status, _ := sel.str("lifecycle_type", pr)
	target, _ := sel.str("target_date", pr)
	lb, err := q.builder(f)
	if err != nil {
		return Statement{}, err
	}
	bucket := 0
	if t, err := time.Parse(time.RFC3339, target); err == nil {
		for i, b := range q.Range.Buckets() {
			if b.Start.Equal(t) {
				bucket = i + 1
			}
		}
	} else if b, ok := bucketOf(q.Range.Buckets(), target, q.clock.loc); ok {
		// A day as the result shows it (an actors query's day).
		for i, x := range q.Range.Buckets() {
			if x.Start.Equal(b.Start) {
				bucket = i + 1
			}
		}
	}
	if bucket == 0 {
		pr.add("target_date", "target_date must be the start of one of the range's buckets (RFC 3339) or its day, got %q", target)
	}
	active := func(b string) string { return "has(ps, " + b + ")" }
	if lb.bits {
		active = func(b string) string { return "bitAnd(bitShiftRight(act, " + b + "), 1) = 1" }
	}
	b := lb.s.bind("Int64", bucket)
	conds := map[string]string{
		"new":          active(b) + " AND cp = " + b,
		"returning":    active(b) + " AND cp != " + b + " AND " + active(b+" - 1"),
		"resurrecting": active(b) + " AND cp != " + b + " AND NOT " + active(b+" - 1"),
		"dormant":      "NOT " + active(b) + " AND " + active(b+" - 1"),
	}
	cond, ok := conds[status]
	if !ok {
		pr.add("lifecycle_type", "lifecycle_type must be one of new, returning, resurrecting, dormant; got %q", status)
	}
	if !pr.ok() {
		return Statement{}, pr.err()
	}
	return actorsPage(lb.s, "SELECT a AS actor\nFROM (\n"+indent(lb.perActor)+"\n)\nWHERE "+cond, page), nil
}

// lifecycleBuilder holds a statement's per-actor read: columns a, cp (the
// creation bucket, -1 before the bucket before the range) and act (a bit
// per active bucket, up to 63 buckets) or ps (their sorted indexes).
type lifecycleBuilder struct {
	s        *eventSource
	perActor string
	bits     bool
	n        string
}

func (q *LifecycleQuery) builder(f Facts) (*lifecycleBuilder, error) {
	if q.TrendsQuery == nil || q.clock.loc == nil || len(q.Series) != 1 {
		return nil, errors.New("querybuilder: a lifecycle needs a request that ParseLifecycle validated")
	}
	if err := q.applyFacts(f); err != nil {
		return nil, err
	}
	s := newEventSource(&q.Common, f)
	e := q.Series[0]
	bs := q.Range.Buckets()
	first := q.bucketBefore(bs[0].Start)
	s.readsBack(first)
	from, end := s.named("active_from", typeTime, first.UTC()), s.named("active_to", typeTime, bs[len(bs)-1].End.UTC())
	actor, actorCond := s.actor(q.AggregationGroupTypeIndex)
	where := []string{"e.team_id = {team:Int64}", "e.timestamp >= " + from, "e.timestamp < " + end}
	for _, c := range []string{s.eventIs(e), s.cond(andFilters(q.Properties, q.TestAccounts, e.Properties)), actorCond} {
		if c != "" {
			where = append(where, c)
		}
	}
	events := s.selectFrom([]string{actor + " AS a", s.periodIndex(q.Interval, "e.timestamp", first) + " AS p"}, q.read(), where)
	// FINAL: each person's latest version, whose created_at is the least
	// (ingestion only ever lowers it); cheaper than grouping by id.
	created := "SELECT id, created_at AS c FROM " + s.schema.Persons + " FINAL WHERE team_id = {team:Int64}"
	if k := q.AggregationGroupTypeIndex; k > 0 {
		col := strings.TrimPrefix(groupColumns[k], "e.")
		created = "SELECT " + col + " AS id, min(timestamp) AS c FROM " + s.schema.Events + " WHERE team_id = {team:Int64} AND " + col +
			" != '' AND timestamp < " + end + " GROUP BY id"
	}
	lb := &lifecycleBuilder{s: s, n: s.named("buckets", "Int64", len(bs)), bits: len(bs) < 64}
	active, col := "SELECT a, arraySort(groupUniqArray(p)) AS ps", "ps"
	if lb.bits {
		active, col = "SELECT a, groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(p))) AS act", "act"
	}
	active += "\nFROM (\n" + indent(events) + "\n)\nGROUP BY a"
	lb.perActor = "SELECT a, " + col + ", if(pc.c >= " + from + ", " + s.periodIndex(q.Interval, "pc.c", first) + ", -1) AS cp\nFROM (\n" +
		indent(active) + "\n) AS x\nLEFT JOIN (\n    " + created + "\n) AS pc ON x.a = pc.id"
	return lb, nil
}

// lifecycleBits is the statement for ranges of up to 63 buckets: each
// actor's active buckets as the bits of one number (bit 0: the bucket
// before the range), actors grouped by (bits, creation bucket), and each
// group's buckets where it was active or active the bucket before given a
// status. One filter and one multiIf per group measured faster than a
// bit mask per status (benchmarks/results/retention.md).
func lifecycleBits(perActor, n string) string {
	groups := "SELECT act, cp, count() AS c\nFROM (\n" + indent(perActor) + "\n)\nGROUP BY act, cp"
	bit := func(b string) string { return "bitAnd(bitShiftRight(act, " + b + "), 1) = 1" }
	statuses := "SELECT c, arrayJoin(arrayFilter(b -> " + bit("b") + " OR " + bit("b - 1") + ", range(1, toUInt64(" + n + " + 1)))) AS bucket,\n" +
		"    multiIf(NOT " + bit("bucket") + ", 'dormant', bucket = cp, 'new', " + bit("bucket - 1") + ", 'returning', 'resurrecting') AS status\n" +
		"FROM (\n" + indent(groups) + "\n)"
	return "SELECT bucket, status, sum(c) AS actors\nFROM (\n" + indent(statuses) + "\n)\nGROUP BY bucket, status"
}

// bucketBefore is the start of the bucket before the one starting at
// start.
func (q *LifecycleQuery) bucketBefore(start time.Time) time.Time {
	if q.Interval == IntervalHour {
		return start.Add(-time.Hour)
	}
	unit := q.Interval.unit()
	return q.clock.startOf(unit, q.clock.shift(start, unit, -1))
}

// Shape implements Query: the four status series, zero-filled, dormant
// actors as negative numbers.
func (q *LifecycleQuery) Shape(rows [][]any) (Result, error) {
	bs := q.Range.Buckets()
	counts := map[string][]float64{}
	for _, st := range lifecycleStatuses {
		counts[st] = make([]float64, len(bs))
	}
	for n, r := range rows {
		if len(r) != len(lifecycleColumns) {
			return nil, fmt.Errorf("lifecycle row %d: %d columns, want %d", n, len(r), len(lifecycleColumns))
		}
		b, err1 := asInt(r[0])
		st, ok := r[1].(string)
		c, err2 := asFloat(r[2])
		if err1 != nil || err2 != nil || !ok || counts[st] == nil || b < 1 || b > len(bs) {
			return nil, fmt.Errorf("lifecycle row %d: unexpected values %v", n, r)
		}
		if st == "dormant" {
			c = -c
		}
		counts[st][b-1] += c
	}
	e := q.Series[0]
	out := TrendsResult{}
	base := q.peopleBase("lifecycle")
	for _, st := range lifecycleStatuses {
		s := TrendSeries{Action: e.JSON(), Label: e.Label() + " - " + st, Status: st, Filter: q.filterJSON(q.Range),
			Data: counts[st], Days: []string{}, Labels: []string{}, PersonsURLs: []map[string]string{}}
		s.Filter["insight"] = "LIFECYCLE"
		for k, b := range bs {
			s.Count += s.Data[k]
			s.Days = append(s.Days, b.Day)
			s.Labels = append(s.Labels, b.Label)
			s.PersonsURLs = append(s.PersonsURLs, map[string]string{"url": withSelection(base, map[string]string{
				"lifecycle_type": st, "target_date": b.Start.In(q.clock.loc).Format(time.RFC3339)})})
		}
		out = append(out, s)
	}
	return out, nil
}

// Decode implements Query.
func (q *LifecycleQuery) Decode(raw json.RawMessage) (Result, error) {
	var r TrendsResult
	return r, json.Unmarshal(raw, &r)
}
