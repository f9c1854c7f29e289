package querybuilder

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// StickinessQuery is a stickiness request (insights/trend with insight
// STICKINESS or shown_as Stickiness): per entity, the actors by the number
// of the range's buckets they did its event in.
type StickinessQuery struct {
	*TrendsQuery
}

// stickinessKind answers insights/trend for stickiness requests and
// computes STICKINESS insights.
var stickinessKind = Kind{Name: "stickiness", Route: "trend", Insight: "STICKINESS",
	Claims: func(p Params) bool { return claims(p, "STICKINESS") },
	Parse:  func(p Params, env Env) (Query, error) { return ParseStickiness(p, env) }}

// ParseStickiness reads a stickiness request: a trends request whose
// maths are ignored but unique_group (which counts groups), without
// breakdowns or formulas.
func ParseStickiness(p Params, env Env) (*StickinessQuery, error) {
	t, err := ParseTrends(p, env)
	pr := &problems{}
	for _, name := range []string{"breakdown", "formula"} {
		if refused(p, name) {
			pr.add(name, "%s does not apply to stickiness", name)
		}
	}
	return &StickinessQuery{TrendsQuery: t}, errors.Join(err, pr.err())
}

// groupIndex is the group type an entity's actors are, 0 for persons.
func (q *StickinessQuery) groupIndex(e Entity) int {
	if e.Math == "unique_group" {
		return e.MathGroupTypeIndex
	}
	return q.AggregationGroupTypeIndex
}

func (q *StickinessQuery) read(e Entity) joins {
	persons := andFilters(q.Properties, q.TestAccounts, e.Properties).usesPersons()
	return joins{overrides: q.groupIndex(e) == 0 || persons, persons: persons}
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
	if q.TrendsQuery == nil || q.clock.loc == nil || len(q.Series) == 0 {
		return Statement{}, errors.New("querybuilder: stickiness needs a request that ParseStickiness validated")
	}
	if err := q.applyFacts(f); err != nil {
		return Statement{}, err
	}
	s := newEventSource(&q.Common, f)
	periods := []DateRange{q.Range}
	if q.Compare {
		periods = append(periods, q.Range.previous())
	}
	var spans []span
	var index []string
	for i, r := range periods {
		name := [2]string{"date", "prev_date"}[i]
		spans = append(spans, span{s.named(name+"_from", typeTime, r.From.UTC()), s.named(name+"_to", typeTime, r.To.UTC())})
		index = append(index, s.periodIndex(q.Interval, "e.timestamp", r.Buckets()[0].Start))
	}
	n := len(q.Range.Buckets())
	active := "bitCount(groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(p))))"
	if n > 64 {
		active = "uniqExact(p)"
	}
	parts := make([]string, len(q.Series))
	for i, e := range q.Series {
		actor, actorCond := s.actor(q.groupIndex(e))
		where := []string{"e.team_id = {team:Int64}"}
		for _, c := range []string{s.eventIs(e), s.cond(andFilters(q.Properties, q.TestAccounts, e.Properties)), actorCond} {
			if c != "" {
				where = append(where, c)
			}
		}
		cols := []string{actor + " AS a", "0 AS period", index[0] + " AS p"}
		if len(spans) == 1 {
			where = append(where, spans[0].sql())
		} else {
			where = append(where, "(("+spans[1].sql()+") OR ("+spans[0].sql()+"))")
			cols[1] = "if(e.timestamp >= " + spans[0].from + ", 0, 1) AS period"
			cols[2] = "if(period = 0, " + index[0] + ", " + index[1] + ") AS p"
		}
		// Only what varies is grouped by: a constant period beside the
		// actor would cost the engine its fixed-width hashing of actors.
		group, period := "a", "0"
		if len(spans) == 1 {
			cols = []string{cols[0], cols[2]}
		} else {
			group, period = "a, period", "period"
		}
		events := s.selectFrom(cols, q.read(e), where)
		perActor := "SELECT " + period + " AS period, " + active + " AS buckets\nFROM (\n" + indent(events) + "\n)\nGROUP BY " + group
		parts[i] = "SELECT " + strconv.Itoa(i) + " AS series, period, buckets, count() AS actors\nFROM (\n" + indent(perActor) +
			"\n)\nGROUP BY period, buckets"
	}
	return s.statement(strings.Join(parts, "\nUNION ALL\n")), nil
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
				s.PersonsURLs = append(s.PersonsURLs, q.personsURL(e, r, k))
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// personsURL is where clients fetch the actors active in exactly k
// buckets of r.
func (q *StickinessQuery) personsURL(e Entity, r DateRange, k int) map[string]string {
	v := url.Values{}
	v.Set("insight", "STICKINESS")
	if !e.AllEvents {
		v.Set("entity_id", e.ID)
	}
	v.Set("entity_type", e.Type)
	v.Set("entity_math", e.Math)
	v.Set("stickiness_days", strconv.Itoa(k))
	v.Set("interval", q.Interval.String())
	v.Set("date_from", r.From.In(q.clock.loc).Format(time.RFC3339Nano))
	v.Set("date_to", r.To.In(q.clock.loc).Format(time.RFC3339Nano))
	if q.Properties != nil {
		b, _ := json.Marshal(q.Properties.JSON())
		v.Set("properties", string(b))
	}
	if q.FilterTestAccounts {
		v.Set("filter_test_accounts", "true")
	}
	return map[string]string{"url": fmt.Sprintf("api/projects/%d/persons/stickiness/?%s", q.Project.ID, v.Encode())}
}

// Decode implements Query.
func (q *StickinessQuery) Decode(raw json.RawMessage) (Result, error) {
	var r StickinessResult
	return r, json.Unmarshal(raw, &r)
}
