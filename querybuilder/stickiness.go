package querybuilder

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// StickinessQuery is a stickiness request (insights/trend with insight
// STICKINESS or shown_as Stickiness): per entity, the actors by the number
// of the range's buckets they did its event in.
type StickinessQuery struct {
	*TrendsQuery
}

// stickinessKind answers insights/trend for stickiness requests and
// computes STICKINESS insights. A request lifecycle claims too (insight
// LIFECYCLE, shown_as Stickiness) is lifecycle's, as it was when the
// registry's order decided.
var stickinessKind = Kind{Name: "stickiness", Route: "trend", Insight: "STICKINESS", Persons: "stickiness",
	Claims: func(p Params) bool { return claims(p, "STICKINESS") && !lifecycleKind.Claims(p) },
	Parse:  func(p Params, env Env) (Query, error) { return ParseStickiness(p, env) },
	Node:   "StickinessQuery", translate: stickinessNode}

// ParseStickiness reads a stickiness request: a trends request whose
// maths are ignored but unique_group (which counts groups), without
// breakdowns or formulas.
func ParseStickiness(p Params, env Env) (*StickinessQuery, error) {
	t, err := parseTrendsKind(p, env, true)
	pr := &problems{}
	for _, name := range []string{"breakdown", "breakdowns", "formula"} {
		if refused(p, name) {
			pr.add(name, "%s does not apply to stickiness", name)
		}
	}
	return &StickinessQuery{TrendsQuery: t}, errors.Join(err, pr.err())
}

// actorType is what an entity's actors are: groups of its math's type
// with unique_group (type 0 included), else the aggregation's.
func (q *StickinessQuery) actorType(e Entity) ActorType {
	if e.Math == "unique_group" {
		return GroupActors(e.MathGroupTypeIndex)
	}
	return aggregated(q.AggregationGroupTypeIndex)
}

// actor is an entity's actor per event, and the condition that the event
// has one.
func (q *StickinessQuery) actor(s *eventSource, e Entity) (expr, cond string) {
	if t := q.actorType(e); t.Kind == ActorGroup {
		c := groupColumns[t.GroupTypeIndex]
		return c, c + " != ''"
	}
	return s.actor(0)
}

func (q *StickinessQuery) read(e Entity) joins {
	f := andFilters(q.Properties, q.TestAccounts, e.Properties)
	persons := f.usesPersons()
	return joins{overrides: q.actorType(e).Kind != ActorGroup || persons, persons: persons, sessions: f.usesSessions()}
}

// Needs implements Query.
func (q *StickinessQuery) Needs() Needs {
	n := Needs{FirstEvent: q.FromAll()}
	for _, e := range q.Series {
		n.PersonOverrides = n.PersonOverrides || q.read(e).overrides
	}
	return n
}

// Stickiness statements answer rows of series, period (0 current, 1
// previous), the number of buckets and the actors active in that many.
var stickinessColumns = []string{"series", "period", "buckets", "actors"}

// Build implements Query: per entity, the actors' active buckets in one
// pass grouped by actor (a bit per bucket up to 64 buckets, a set
// beyond), then the actors counted by how many.
func (q *StickinessQuery) Build(f Facts) (Statement, error) {
	sb, err := q.builder(f)
	if err != nil {
		return Statement{}, err
	}
	parts := make([]string, len(q.Series))
	for i := range q.Series {
		parts[i] = "SELECT " + strconv.Itoa(i) + " AS series, period, buckets, count() AS actors\nFROM (\n" + indent(sb.perActor(i)) +
			"\n)\nGROUP BY period, buckets"
	}
	return sb.s.statement(strings.Join(parts, "\nUNION ALL\n")), nil
}

// ActorType implements ActorsLister.
func (q *StickinessQuery) ActorType(sel Params) ActorType {
	e := Entity{}
	if n, ok := sel.integer("series", &problems{}); ok && n >= 0 && int(n) < len(q.Series) {
		e = q.Series[n]
	}
	return q.actorType(e)
}

// Actors implements ActorsLister: the actors of series (default 0) and
// period (0, or 1 the compared one) active in exactly stickiness_days
// buckets.
func (q *StickinessQuery) Actors(sel Params, f Facts, page Page) (Statement, error) {
	// The selection is checked against the range as the facts resolve
	// it: date_from=all starts at the project's first event.
	if err := q.applyFacts(f); err != nil {
		return Statement{}, err
	}
	pr := &problems{}
	series := 0
	if n, ok := sel.integer("series", pr); ok {
		series = int(n)
	}
	period, _ := sel.integer("period", pr)
	days := selInt(sel, "stickiness_days", pr)
	if series < 0 || series >= len(q.Series) {
		pr.add("series", "series must be an entity of the request (0 to %d)", len(q.Series)-1)
	}
	if period < 0 || period > 1 || (period == 1 && !q.Compare) {
		pr.add("period", "period must be 0, or 1 with compare")
	}
	if n := q.Range.count(); sel.present("stickiness_days") && (days < 1 || days > n) {
		pr.add("stickiness_days", "stickiness_days must be a number of intervals of the range, 1 to %d; got %d", n, days)
	}
	if !pr.ok() {
		return Statement{}, pr.err()
	}
	sb, err := q.builder(f)
	if err != nil {
		return Statement{}, err
	}
	sub := "SELECT a AS actor\nFROM (\n" + indent(sb.perActor(series)) + "\n)\nWHERE period = " + sb.s.bind("UInt8", uint8(period)) +
		" AND buckets = " + sb.s.bind("UInt64", uint64(days))
	return actorsPage(sb.s, sub, page), nil
}

// stickinessBuilder writes one statement's per-actor reads.
type stickinessBuilder struct {
	q      *StickinessQuery
	s      *eventSource
	spans  []span
	index  []string
	active string
}

func (q *StickinessQuery) builder(f Facts) (*stickinessBuilder, error) {
	if q.TrendsQuery == nil || q.clock.loc == nil || len(q.Series) == 0 {
		return nil, errors.New("querybuilder: stickiness needs a request that ParseStickiness validated")
	}
	if err := q.applyFacts(f); err != nil {
		return nil, err
	}
	compared := 1
	if q.Compare {
		compared = 2
	}
	if err := budget(q.Range.count()*len(q.Series)*compared, "stickiness", "interval", "date_from", "date_to", "events"); err != nil {
		return nil, err
	}
	sb := &stickinessBuilder{q: q, s: newEventSource(&q.Common, f)}
	periods := []DateRange{q.Range}
	if q.Compare {
		periods = append(periods, q.Range.previous())
		sb.s.readsBack(periods[1].From)
	}
	for i, r := range periods {
		name := [2]string{"date", "prev_date"}[i]
		from, to := r.bounds()
		sb.spans = append(sb.spans, span{sb.s.named(name+"_from", typeTime, from.UTC()), sb.s.named(name+"_to", typeTime, to.UTC())})
		sb.index = append(sb.index, sb.s.periodIndex(q.Interval, "e.timestamp", r.Buckets()[0].Start))
	}
	sb.active = "bitCount(groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(p))))"
	if len(q.Range.Buckets()) > 64 {
		sb.active = "uniqExact(p)"
	}
	return sb, nil
}

// perActor is series i's actors with their period and number of active
// buckets: columns a, period, buckets.
func (sb *stickinessBuilder) perActor(i int) string {
	q, s, e := sb.q, sb.s, sb.q.Series[i]
	actor, actorCond := q.actor(s, e)
	where := []string{"e.team_id = {team:Int64}"}
	for _, c := range []string{s.eventIs(e), s.cond(andFilters(q.Properties, q.TestAccounts, e.Properties)), actorCond} {
		if c != "" {
			where = append(where, c)
		}
	}
	// Only what varies is grouped by: a constant period beside the actor
	// would cost the engine its fixed-width hashing of actors.
	cols, group, period := []string{actor + " AS a", sb.index[0] + " AS p"}, "a", "0"
	if len(sb.spans) == 1 {
		where = append(where, sb.spans[0].sql())
	} else {
		where = append(where, "(("+sb.spans[1].sql()+") OR ("+sb.spans[0].sql()+"))")
		cols = []string{actor + " AS a", "if(e.timestamp >= " + sb.spans[0].from + ", 0, 1) AS period",
			"if(period = 0, " + sb.index[0] + ", " + sb.index[1] + ") AS p"}
		group, period = "a, period", "period"
	}
	events := s.selectFrom(cols, q.read(e), where)
	return "SELECT a, " + period + " AS period, " + sb.active + " AS buckets\nFROM (\n" + indent(events) + "\n)\nGROUP BY " + group
}

// StickinessSeries is one entity's stickiness (per period with compare):
// data[k-1] is the actors active in exactly k buckets.
type StickinessSeries struct {
	Action       map[string]any      `json:"action"`
	Label        string              `json:"label"`
	Count        float64             `json:"count"`
	Data         []float64           `json:"data"`
	Days         []int               `json:"days"`
	Labels       []string            `json:"labels"`
	Filter       map[string]any      `json:"filter"`
	Compare      bool                `json:"compare,omitempty"`
	CompareLabel string              `json:"compare_label,omitempty"`
	PersonsURLs  []map[string]string `json:"persons_urls"`
}

// StickinessResult is a stickiness analysis' series.
type StickinessResult []StickinessSeries

// Table implements Result: one row per series, a column per number of
// buckets.
func (r StickinessResult) Table() ([]string, [][]string) {
	header := []string{"series"}
	if len(r) > 0 {
		header = append(header, r[0].Labels...)
	}
	rows := make([][]string, len(r))
	for k, s := range r {
		row := []string{s.Label}
		for _, d := range s.Data {
			row = append(row, numberCell(&d))
		}
		rows[k] = row
	}
	return header, rows
}

// Shape implements Query.
func (q *StickinessQuery) Shape(rows [][]any) (Result, error) {
	n := len(q.Range.Buckets())
	type key struct{ series, period int }
	data := map[key][]float64{}
	for i, r := range rows {
		if len(r) != len(stickinessColumns) {
			return nil, fmt.Errorf("stickiness row %d: %d columns, want %d", i, len(r), len(stickinessColumns))
		}
		s, err1 := asInt(r[0])
		p, err2 := asInt(r[1])
		b, err3 := asInt(r[2])
		c, err4 := asFloat(r[3])
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || s < 0 || s >= len(q.Series) || p < 0 || p > 1 || b < 1 || b > n {
			return nil, fmt.Errorf("stickiness row %d: unexpected values %v", i, r)
		}
		k := key{s, p}
		if data[k] == nil {
			data[k] = make([]float64, n)
		}
		data[k][b-1] += c
	}
	periods := []DateRange{q.Range}
	if q.Compare {
		periods = append(periods, q.Range.previous())
	}
	unit := q.Interval.String()
	base := q.peopleBase("stickiness")
	out := StickinessResult{}
	for i, e := range q.Series {
		for p, r := range periods {
			s := StickinessSeries{Action: e.JSON(), Label: e.Label(), Data: data[key{i, p}], Filter: q.filterJSON(r),
				Days: []int{}, Labels: []string{}, PersonsURLs: []map[string]string{}}
			s.Filter["insight"] = "STICKINESS"
			if s.Data == nil {
				s.Data = make([]float64, n)
			}
			if q.Compare {
				s.Compare, s.CompareLabel = true, [2]string{"current", "previous"}[p]
			}
			for k := 1; k <= n; k++ {
				s.Count += s.Data[k-1]
				s.Days = append(s.Days, k)
				label := strconv.Itoa(k) + " " + unit
				if k != 1 {
					label += "s"
				}
				s.Labels = append(s.Labels, label)
				s.PersonsURLs = append(s.PersonsURLs, map[string]string{"url": withSelection(base, map[string]string{
					"series": strconv.Itoa(i), "period": strconv.Itoa(p), "stickiness_days": strconv.Itoa(k), "entity_id": e.ID})})
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// Decode implements Query.
func (q *StickinessQuery) Decode(raw json.RawMessage) (Result, error) {
	var r StickinessResult
	return r, json.Unmarshal(raw, &r)
}
