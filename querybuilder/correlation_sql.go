package querybuilder

import (
	"errors"
	"strconv"
	"strings"
)

// Correlation statements answer (item, s, f) rows: first the totals, item
// NULL (S and F, the funnel's successful and failed actors), then each
// item with enough actors to be kept (analytics.md's threshold).
var correlationColumns = []string{"item", "s", "f"}

// BuildCorrelation writes the correlation statement, one statement:
//
//  1. the funnel's actors (its per-actor attempts, funnelOn), each with
//     success (reached the last step) and the bounds of their window:
//     after the first step's event, before the last step's (success) or
//     the end of the conversion window (failure);
//  2. per actor, the items: the events read (events; the steps' and the
//     excluded names left out) or their properties (event_with_properties,
//     only the named events' properties exploded) strictly inside the
//     bounds, or the person's properties. The events stream into a RIGHT
//     JOIN whose hash side is the actor set, so every actor has a row,
//     those without items too (they count in S and F);
//  3. items counted by success, with the totals as a NULL item, and
//     those below the threshold dropped. Odds ratios and ordering are
//     done when shaping, on the few rows left.
func BuildCorrelation(q *CorrelationQuery, f Facts) (Statement, error) {
	s, perActor, err := q.perActor(f)
	if err != nil {
		return Statement{}, err
	}
	counted := "SELECT item, countIf(success) AS s, countIf(NOT success) AS f\nFROM (\n" + indent(perActor) +
		"\n)\nARRAY JOIN arrayPushFront(CAST(items AS Array(Nullable(String))), NULL) AS item\nGROUP BY item"
	keep := "item IS NULL OR s + f >= least(25, 0.02 * total)"
	if q.Type == CorrelationEventWithProperties {
		keep = "item IS NULL OR (s + f >= least(25, 0.02 * total) AND s + f > 2)"
	}
	sql := "SELECT item, s, f\nFROM (\n" +
		indent("SELECT item, s, f, max(if(item IS NULL, s + f, 0)) OVER () AS total\nFROM (\n"+indent(counted)+"\n)") +
		"\n)\nWHERE " + keep + "\nORDER BY item IS NOT NULL, item"
	return s.statement(sql), nil
}

// perActor is steps 1 and 2: columns actor, success and items.
func (q *CorrelationQuery) perActor(f Facts) (*eventSource, string, error) {
	if q.FunnelQuery == nil || q.clock.loc == nil {
		return nil, "", errors.New("querybuilder: correlation needs a request that ParseCorrelation validated")
	}
	if err := q.applyFacts(f); err != nil {
		return nil, "", err
	}
	s := newEventSource(&q.Common, f)
	fb := funnelOn(q.FunnelQuery, s)
	n := len(q.Steps)
	actors := "SELECT actor, level = " + s.bind("UInt8", uint8(n)) + " AS success, t_1 - 1 AS lo,\n" +
		"    if(success, t_" + strconv.Itoa(n) + " - 1, t_1 - 1 + " + fb.window + ") AS hi\nFROM (\n" + indent(fb.actorRows()) + "\n)"
	if q.Type == CorrelationProperties {
		return s, q.personItems(s, actors), nil
	}
	actor, actorCond := s.actor(q.AggregationGroupTypeIndex)
	where := []string{"e.team_id = {team:Int64}", fb.cur.sql()}
	var cols []string
	// Action steps' conditions may read person or session properties.
	j := joins{overrides: q.AggregationGroupTypeIndex == 0}
	items := "groupUniqArrayIf(ev.name, ev.t > fa.lo AND ev.t < fa.hi)"
	if q.Type == CorrelationEventWithProperties {
		where = append(where, "e.event IN "+s.bind("Array(String)", q.EventNames))
		pairs := "JSONExtractKeysAndValuesRaw(e.properties)"
		if len(q.ExcludeEventProperties) > 0 {
			pairs = "arrayFilter(kv -> kv.1 NOT IN " + s.bind("Array(String)", q.ExcludeEventProperties) + ", " + pairs + ")"
		}
		cols = []string{actor + " AS a", "toUnixTimestamp64Micro(e.timestamp) AS t",
			"arrayMap(kv -> concat(toString(length(e.event)), ':', toString(length(kv.1)), ':', e.event, '::', kv.1, '::', " + jsonText("kv.2") + "), " + pairs + ") AS names"}
		items = "groupUniqArrayArrayIf(ev.names, ev.t > fa.lo AND ev.t < fa.hi)"
	} else {
		excluded := append(append([]string{}, q.stepEvents...), q.ExcludeEvents...)
		if len(excluded) > 0 {
			where = append(where, "e.event NOT IN "+s.bind("Array(String)", excluded))
		}
		if len(q.stepConds) > 0 {
			step := &PropertyFilter{Group: "OR", Values: q.stepConds}
			where = append(where, "NOT ("+s.cond(step)+")")
			j.persons, j.sessions = step.usesPersons(), step.usesSessions()
		}
		cols = []string{actor + " AS a", "toUnixTimestamp64Micro(e.timestamp) AS t", "e.event AS name"}
	}
	if actorCond != "" {
		where = append(where, actorCond)
	}
	events := s.selectFrom(cols, j, where)
	return s, "SELECT fa.actor AS actor, fa.success AS success, " + items + " AS items\nFROM (\n" + indent(events) +
		"\n) AS ev\nRIGHT JOIN (\n" + indent(actors) + "\n) AS fa ON ev.a = fa.actor\nGROUP BY fa.actor, fa.success", nil
}

// personItems are the actors' person properties as key::value items
// (itemText: the key's length first): the
// named keys (” for a person without one), or with $all every key the
// person has; excluded names left out.
func (q *CorrelationQuery) personItems(s *eventSource, actors string) string {
	persons := "SELECT id, argMax(properties, version) AS props\nFROM " + s.schema.Persons +
		"\nWHERE team_id = {team:Int64}\nGROUP BY id\nHAVING argMax(is_deleted, version) = 0"
	var parts []string
	if len(q.Names) > 0 {
		names := q.Names
		if len(q.ExcludeNames) > 0 {
			names = nil
			for _, n := range q.Names {
				if !contains(q.ExcludeNames, n) {
					names = append(names, n)
				}
			}
		}
		if len(names) > 0 {
			parts = append(parts, "arrayMap(k -> concat(toString(length(k)), ':', k, '::', "+jsonText("JSONExtractRaw(p.props, k)")+"), "+s.bind("Array(String)", names)+")")
		}
	}
	if q.AllNames {
		pairs := "JSONExtractKeysAndValuesRaw(p.props)"
		if len(q.ExcludeNames) > 0 {
			pairs = "arrayFilter(kv -> kv.1 NOT IN " + s.bind("Array(String)", q.ExcludeNames) + ", " + pairs + ")"
		}
		parts = append(parts, "arrayMap(kv -> concat(toString(length(kv.1)), ':', kv.1, '::', "+jsonText("kv.2")+"), "+pairs+")")
	}
	items := "CAST([] AS Array(String))"
	if len(parts) > 0 {
		items = "arrayDistinct(arrayConcat(" + strings.Join(parts, ", ") + "))"
	}
	return "SELECT fa.actor AS actor, fa.success AS success, " + items + " AS items\nFROM (\n" + indent(persons) +
		"\n) AS p\nRIGHT JOIN (\n" + indent(actors) + "\n) AS fa ON p.id = fa.actor"
}

// jsonText is a raw JSON value as items hold it: a string's content, ”
// for null or nothing, other values as their JSON text.
func jsonText(raw string) string {
	return "multiIf(startsWith(" + raw + ", '\"'), JSONExtractString(" + raw + "), " + raw + " = 'null', '', " + raw + ")"
}

// Actors implements ActorsLister: the successful or failed actors
// (funnel_correlation_person_converted) who have the item named by
// funnel_correlation_person_entity or funnel_correlation_property_values.
func (q *CorrelationQuery) Actors(sel Params, f Facts, page Page) (Statement, error) {
	pr := &problems{}
	item := q.itemOf(sel, pr)
	if !sel.present("funnel_correlation_person_converted") {
		pr.add("funnel_correlation_person_converted", "funnel_correlation_person_converted (true or false) is required")
	}
	converted := sel.boolean("funnel_correlation_person_converted", pr)
	if !pr.ok() {
		return Statement{}, pr.err()
	}
	s, perActor, err := q.perActor(f)
	if err != nil {
		return Statement{}, err
	}
	sub := "SELECT actor\nFROM (\n" + indent(perActor) + "\n)\nWHERE success = " + s.bind("Bool", converted) + " AND has(items, " + s.str(item) + ")"
	return actorsPage(s, sub, page), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
