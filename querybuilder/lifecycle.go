package querybuilder

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
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
var lifecycleKind = Kind{Name: "lifecycle", Route: "trend", Insight: "LIFECYCLE",
	Claims: func(p Params) bool { return claims(p, "LIFECYCLE") },
	Parse:  func(p Params, env Env) (Query, error) { return ParseLifecycle(p, env) }}

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
		for _, name := range []string{"breakdown", "compare", "formula"} {
			if refused(p, name) {
				pr.add(name, "%s does not apply to a lifecycle", name)
			}
		}
	}
	return &LifecycleQuery{TrendsQuery: t}, errors.Join(err, pr.err())
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
	persons := andFilters(q.Properties, q.TestAccounts, q.Series[0].Properties).usesPersons()
	return joins{overrides: q.AggregationGroupTypeIndex == 0 || persons, persons: persons}
}

// Lifecycle statements answer rows of bucket (1 is the range's first),
// status and the number of actors.
var lifecycleColumns = []string{"bucket", "status", "actors"}

// Build implements Query. The statement reads the entity's events of
// the range and of the bucket before it, per actor the sorted indexes of
// the buckets they were active in (0: the bucket before), and compares
// each with its neighbours: one pass over the events grouped by actor.
// An actor's creation is the person's created_at (their first event as
// ingestion saw it; merges keep the earlier), or for groups the group's
// first event.
func (q *LifecycleQuery) Build(f Facts) (Statement, error) {
	if q.TrendsQuery == nil || q.clock.loc == nil || len(q.Series) != 1 {
		return Statement{}, errors.New("querybuilder: a lifecycle needs a request that ParseLifecycle validated")
	}
	if err := q.applyFacts(f); err != nil {
		return Statement{}, err
	}
	s := newEventSource(&q.Common, f)
	e := q.Series[0]
	bs := q.Range.Buckets()
	first := q.bucketBefore(bs[0].Start)
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
	n := s.named("buckets", "Int64", len(bs))
	created = "\n) AS x\nLEFT JOIN (\n    " + created + "\n) AS pc ON x.a = pc.id"
	cp := "if(pc.c >= " + from + ", " + s.periodIndex(q.Interval, "pc.c", first) + ", -1) AS cp"
	if len(bs) < 64 {
		return s.statement(lifecycleBits(events, created, cp, n)), nil
	}
	active := "SELECT a, arraySort(groupUniqArray(p)) AS ps\nFROM (\n" + indent(events) + "\n)\nGROUP BY a"
	withCreated := "SELECT ps, " + cp + "\nFROM (\n" + indent(active) + created
	statuses := "arrayConcat(\n" +
		"    arrayFilter(x -> x.1 >= 1, arrayMap((b, i) -> (b, multiIf(b = cp, 'new', i > 1 AND ps[i - 1] = b - 1, 'returning', 'resurrecting')), ps, arrayEnumerate(ps))),\n" +
		"    arrayMap(b -> (b + 1, 'dormant'), arrayFilter((b, i) -> b < " + n + " AND (i = length(ps) OR ps[i + 1] != b + 1), ps, arrayEnumerate(ps))))"
	sql := "SELECT st.1 AS bucket, st.2 AS status, count() AS actors\nFROM (\n" + indent(withCreated) + "\n)\nARRAY JOIN " + statuses +
		" AS st\nGROUP BY bucket, status"
	return s.statement(sql), nil
}

// lifecycleBits is the statement for ranges of up to 63 buckets: each
// actor's active buckets as the bits of one number (bit 0: the bucket
// before the range), actors grouped by (bits, creation bucket), and each
// group's buckets where it was active or active the bucket before given a
// status. One filter and one multiIf per group measured faster than a
// bit mask per status (0.49 against 0.63 s on the 30-day benchmark).
func lifecycleBits(events, created, cp, n string) string {
	active := "SELECT a, groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(p))) AS act\nFROM (\n" + indent(events) + "\n)\nGROUP BY a"
	groups := "SELECT act, cp, count() AS c\nFROM (\n" + indent("SELECT act, "+cp+"\nFROM (\n"+indent(active)+created) + "\n)\nGROUP BY act, cp"
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
	for _, st := range lifecycleStatuses {
		s := TrendSeries{Action: e.JSON(), Label: e.Label() + " - " + st, Status: st, Filter: q.filterJSON(q.Range),
			Data: counts[st], Days: []string{}, Labels: []string{}, PersonsURLs: []map[string]string{}}
		s.Filter["insight"] = "LIFECYCLE"
		for k, b := range bs {
			s.Count += s.Data[k]
			s.Days = append(s.Days, b.Day)
			s.Labels = append(s.Labels, b.Label)
			s.PersonsURLs = append(s.PersonsURLs, q.personsURL(st, b))
		}
		out = append(out, s)
	}
	return out, nil
}

// personsURL is where clients fetch the actors of one status in one
// bucket.
func (q *LifecycleQuery) personsURL(status string, b Bucket) map[string]string {
	v := url.Values{}
	v.Set("insight", "LIFECYCLE")
	e := q.Series[0]
	if !e.AllEvents {
		v.Set("entity_id", e.ID)
	}
	v.Set("entity_type", e.Type)
	v.Set("lifecycle_type", status)
	v.Set("target_date", b.Start.In(q.clock.loc).Format(time.RFC3339))
	v.Set("interval", q.Interval.String())
	v.Set("date_from", q.Range.From.In(q.clock.loc).Format(time.RFC3339Nano))
	v.Set("date_to", q.Range.To.In(q.clock.loc).Format(time.RFC3339Nano))
	if q.Properties != nil {
		b, _ := json.Marshal(q.Properties.JSON())
		v.Set("properties", string(b))
	}
	if q.FilterTestAccounts {
		v.Set("filter_test_accounts", "true")
	}
	return map[string]string{"url": fmt.Sprintf("api/projects/%d/persons/lifecycle/?%s", q.Project.ID, v.Encode())}
}

// Decode implements Query.
func (q *LifecycleQuery) Decode(raw json.RawMessage) (Result, error) {
	var r TrendsResult
	return r, json.Unmarshal(raw, &r)
}
