package querybuilder

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Cohort is a saved set of persons as analyses use it (analytics.md,
// Entities), handed in by the caller in Env. Dynamic cohorts are defined
// by Groups (the legacy form: OR of groups of person conditions) or
// Filters ({properties: AND/OR groups of person and behavioural
// conditions}); static ones list their persons. Version is the computed
// membership analyses read (cohort_people); 0 when none is computed yet.
type Cohort struct {
	ID       int64
	Name     string
	IsStatic bool
	Groups   json.RawMessage
	Filters  json.RawMessage
	Version  int64
	Deleted  bool
}

// Condition types of cohorts: membership in a computed cohort, and a
// behavioural condition of a cohort's definition.
const (
	condCohort     = "cohort"
	condBehavioral = "behavioral"
)

// cohortDepth bounds cohorts naming cohorts.
const cohortDepth = 4

// behavior is a behavioural condition: the person did Event at least
// (gte), at most (lte) or exactly Count times in the last Within.
type behavior struct {
	Event  string
	Op     string
	Count  int64
	Within time.Duration
}

// cohortCondition reads {type: cohort, value: id}: a property-only
// dynamic cohort becomes its person conditions, inline (current as the
// persons are); any other (static, behavioural, naming a computed
// cohort, or nested too deep) reads its computed members.
func (pp *propertyParser) cohortCondition(c *PropertyFilter, x map[string]any, attr, path string) *PropertyFilter {
	id, ok := refID(x["value"])
	if !ok {
		if n, isNum := x["value"].(json.Number); isNum {
			id, ok = refID(n)
		}
	}
	if !ok {
		pp.pr.add(attr, "%s.value must be a cohort id", path)
		return nil
	}
	co, known := pp.saved().cohorts[id]
	if !known || co.Deleted {
		pp.pr.add(attr, "%s: cohort %d does not exist", path, id)
		return nil
	}
	c.Key, c.Value, c.Type = "id", id, condCohort
	if !co.IsStatic && pp.depth < cohortDepth {
		// Read with behavioural conditions allowed: they decide between
		// inlining and the computed members, never refuse the request.
		f, sub := pp.parseCohortDefinition(co, attr, path)
		if !f.usesBehavior() {
			// Inline: the definition is the condition, so its problems
			// are the request's.
			pp.pr.errs = append(pp.pr.errs, sub.errs...)
			if f == nil {
				return nil
			}
			def, _ := json.Marshal([]any{co.Groups, co.Filters})
			pp.saved().useSetting(fmt.Sprintf("cohort %d definition", id), def)
			return &PropertyFilter{Group: "AND", Values: []*PropertyFilter{f}, Negation: c.Negation, echo: c}
		}
		// Computed: its definition was checked when stored and is read by
		// the calculation, not by this request.
	}
	if co.Version == 0 {
		pp.pr.add(attr, "%s: cohort %d is still being calculated; try again shortly", path, id)
		return nil
	}
	pp.saved().useSetting(fmt.Sprintf("cohort %d version", id), json.RawMessage(strconv.FormatInt(co.Version, 10)))
	c.cohort = &co
	return c
}

// saved is the request whose saved definitions conditions may name; a
// parser of a bare document (tests, tools) has none.
func (pp *propertyParser) saved() *Common {
	if pp.common == nil {
		pp.common = &Common{}
	}
	return pp.common
}

// cohortDefinition parses a dynamic cohort's definition with person
// conditions as the default type, adding its problems to the request's.
// inline reports that it has only person conditions (and inline
// cohorts), so that analyses can apply it as a person filter. behavioural
// is kept for callers; definitions are always read with behavioural
// conditions allowed (a cohort's calculation counts them).
func (pp *propertyParser) cohortDefinition(co Cohort, attr, path string, behavioural bool) (f *PropertyFilter, inline bool) {
	f, sub := pp.parseCohortDefinition(co, attr, path)
	pp.pr.errs = append(pp.pr.errs, sub.errs...)
	return f, !f.usesBehavior()
}

// parseCohortDefinition reads a dynamic cohort's definition, its problems
// apart. A definition holds person, cohort and behavioural conditions
// only (the calculation reads persons, not events or sessions) and at
// least one condition: an empty one would silently mean every person.
func (pp *propertyParser) parseCohortDefinition(co Cohort, attr, path string) (*PropertyFilter, *problems) {
	if pp.expanded == nil {
		pp.expanded = new(int)
		*pp.expanded = pp.count
	}
	sub := &propertyParser{common: pp.common, clock: pp.clock, pr: &problems{}, relative: pp.relative, defaultType: "person",
		depth: pp.depth + 1, behavioural: true, expanded: pp.expanded}
	where := fmt.Sprintf("%s (cohort %d)", path, co.ID)
	var f *PropertyFilter
	if len(co.Filters) > 0 && !isNull(co.Filters) {
		var fl struct {
			Properties json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(co.Filters, &fl) == nil && len(fl.Properties) > 0 {
			f = sub.parse(fl.Properties, attr, where)
		}
	} else {
		var groups []struct {
			Properties json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(co.Groups, &groups); err != nil {
			sub.pr.add(attr, "%s has groups that cannot be read", where)
		}
		or := &PropertyFilter{Group: "OR"}
		for i, g := range groups {
			gf := sub.parse(g.Properties, attr, fmt.Sprintf("%s (cohort %d group %d)", path, co.ID, i))
			if gf.conditions() == 0 {
				// Legacy groups by action or event (action_id, days) land
				// here too: refused rather than read as every person.
				sub.pr.add(attr, "%s: group %d has no person conditions (groups by action or event are not supported; use filters with behavioral conditions)", where, i)
				continue
			}
			or.Values = append(or.Values, gf)
		}
		if len(or.Values) > 0 {
			f = or
		}
	}
	if f.conditions() == 0 && len(sub.pr.errs) == 0 {
		sub.pr.add(attr, "%s has no conditions: a dynamic cohort needs at least one (an empty one would hold every person)", where)
	}
	if t := f.foreignType(); t != "" {
		sub.pr.add(attr, "%s: cohorts are defined by person, cohort and behavioral conditions, not %s properties", where, t)
	}
	return f, sub.pr
}

// conditions counts the conditions of f.
func (f *PropertyFilter) conditions() int {
	if f == nil {
		return 0
	}
	if f.Group == "" {
		return 1
	}
	n := 0
	for _, v := range f.Values {
		n += v.conditions()
	}
	return n
}

// foreignType is the first condition type of f a cohort cannot hold
// (event, session), or "".
func (f *PropertyFilter) foreignType() string {
	if f == nil {
		return ""
	}
	if f.Group == "" {
		switch f.Type {
		case "person", condCohort, condBehavioral:
			return ""
		}
		return f.Type
	}
	for _, v := range f.Values {
		if t := v.foreignType(); t != "" {
			return t
		}
	}
	return ""
}

// usesBehavior reports a behavioural condition or a computed cohort.
func (f *PropertyFilter) usesBehavior() bool {
	if f == nil {
		return false
	}
	if f.Group == "" {
		return f.Type == condBehavioral || f.Type == condCohort
	}
	for _, v := range f.Values {
		if v.usesBehavior() {
			return true
		}
	}
	return false
}

// behaviorCondition reads a behavioural condition of a cohort definition
// (performed_event, performed_event_multiple).
func (pp *propertyParser) behaviorCondition(c *PropertyFilter, x map[string]any, attr, path string) *PropertyFilter {
	if !pp.behavioural {
		pp.pr.add(attr, "%s.type: behavioral conditions belong in cohorts; use a cohort condition naming one", path)
		return nil
	}
	// PostHog's conditions say what key names: an event ("events", the
	// default) or an action's id ("actions", its key a number), which
	// insightd does not count here; counting events named after the id
	// would be empty.
	if et, sent := x["event_type"]; sent && et != nil && et != "events" {
		pp.pr.add(attr, "%s.event_type: only events (\"events\") are counted in behavioural conditions; actions are not supported here", path)
		return nil
	}
	b := &behavior{Op: "gte", Count: 1}
	kind, _ := x["value"].(string)
	name, _ := x["key"].(string)
	if name == "" {
		pp.pr.add(attr, "%s.key must be the event's name", path)
		return nil
	}
	b.Event = name
	switch kind {
	case "performed_event":
	case "performed_event_multiple":
		if op, _ := x["operator"].(string); op != "" {
			if op != "gte" && op != "lte" && op != "exact" {
				pp.pr.add(attr, "%s.operator must be gte, lte or exact", path)
				return nil
			}
			b.Op = op
		}
		n, ok := refID(x["operator_value"])
		if v, isNum := x["operator_value"].(json.Number); isNum {
			if k, err := v.Int64(); err == nil && k >= 0 {
				n, ok = k, true
			}
		}
		if !ok {
			pp.pr.add(attr, "%s.operator_value must be a count", path)
			return nil
		}
		b.Count = n
	default:
		pp.pr.add(attr, "%s.value must be performed_event or performed_event_multiple, got %v", path, x["value"])
		return nil
	}
	n, _ := refID(x["time_value"])
	if v, isNum := x["time_value"].(json.Number); isNum {
		n, _ = refID(v)
	}
	unit := map[string]time.Duration{"hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
		"month": 30 * 24 * time.Hour, "year": 365 * 24 * time.Hour}[fmt.Sprint(x["time_interval"])]
	if n <= 0 || unit == 0 || n > 10000 {
		pp.pr.add(attr, "%s: time_value (a count) and time_interval (hour, day, week, month, year) are required", path)
		return nil
	}
	b.Within = time.Duration(n) * unit
	c.Type, c.Key, c.Value, c.behavior = condBehavioral, name, kind, b
	return c
}

// cohortSQL is membership of the event's person in a computed cohort.
// Members are persons as they were when computed; one merged into
// another since ($identify after the calculation) stands for the person
// it became, so membership follows merges at once, as the events do,
// without waiting for a recalculation.
func (f *PropertyFilter) cohortSQL(sc *scope) string {
	return sc.personID() + " IN (\n    SELECT if(empty(cpo.override_person_id), cp.person_id, cpo.override_person_id)\n    FROM " +
		sc.schema.CohortPeople + " AS cp\n    LEFT JOIN (\n        SELECT old_person_id, argMax(override_person_id, version) AS override_person_id\n        FROM " +
		sc.schema.Overrides + " WHERE team_id = {team:Int64} GROUP BY old_person_id\n    ) AS cpo ON cp.person_id = cpo.old_person_id\n" +
		"    WHERE cp.team_id = {team:Int64} AND cp.cohort_id = " + sc.bind("Int64", f.cohort.ID) +
		" AND cp.version = " + sc.bind("UInt64", uint64(f.cohort.Version)) + "\n)"
}

// behaviorSQL is a behavioural condition in a cohort's calculation: the
// count column the calculation registered for it, compared.
func (f *PropertyFilter) behaviorSQL(sc *scope) string {
	col := sc.behavior(f.behavior)
	n := sc.bind("UInt64", uint64(f.behavior.Count))
	switch f.behavior.Op {
	case "lte":
		return col + " <= " + n
	case "exact":
		return col + " = " + n
	}
	return col + " >= " + n
}

// echoJSON is what a condition compiled from a request's condition shows
// in results: the condition as sent.
func (f *PropertyFilter) echoJSON() (any, bool) {
	if f.echo == nil {
		return nil, false
	}
	e := f.echo
	m := map[string]any{"key": e.Key, "value": e.Value, "type": "cohort"}
	if e.Negation {
		m["negation"] = true
	}
	return m, true
}

// CohortLabel names a cohort breakdown value.
func cohortLabel(co Cohort) string {
	if strings.TrimSpace(co.Name) == "" {
		return fmt.Sprintf("Cohort %d", co.ID)
	}
	return co.Name
}
