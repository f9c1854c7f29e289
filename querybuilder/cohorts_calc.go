package querybuilder

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// CheckAction validates an action's steps as analyses will read them (the
// property conditions, regexes and selectors), naming the field at fault.
func CheckAction(env Env, steps json.RawMessage) error {
	var list []json.RawMessage
	if json.Unmarshal(steps, &list) == nil && len(list) == 0 {
		return nil // stored; an analysis naming it is refused until it has steps
	}
	pr := &problems{}
	c := newCommon(env, pr)
	pp := c.properties(pr)
	pp.actionFilter(Action{ID: 0, Name: "new", Steps: steps}, "steps", "steps")
	return pr.err()
}

// CheckCohort validates a cohort's definition as its calculation will
// read it: conditions, behaviours, cohorts it names (which must exist).
func CheckCohort(env Env, co Cohort) error {
	pr := &problems{}
	c := newCommon(env, pr)
	pp := c.properties(pr)
	attr := "groups"
	if len(co.Filters) > 0 && !isNull(co.Filters) {
		attr = "filters"
	}
	pp.cohortDefinition(co, attr, attr, true)
	return pr.err()
}

// CohortMembers writes a dynamic cohort's members under version into the
// membership table: every person (current properties, not deleted)
// meeting the definition, with the behavioural conditions counted over
// their events up to Env.Now.
func CohortMembers(env Env, co Cohort, version int64) (Statement, error) {
	pr := &problems{}
	c := newCommon(env, pr)
	pp := c.properties(pr)
	attr := "groups"
	if len(co.Filters) > 0 && !isNull(co.Filters) {
		attr = "filters"
	}
	f, _ := pp.cohortDefinition(co, attr, attr, true)
	if !pr.ok() {
		return Statement{}, pr.err()
	}
	s := newEventSource(&c, Facts{})
	var behaviors []*behavior
	s.scope.person = func(expr string) string { return "(" + expr + ")" } // over the persons row's properties
	s.scope.personID = func() string { return "p.id" }
	s.scope.behavior = func(b *behavior) string {
		behaviors = append(behaviors, b)
		return fmt.Sprintf("b.c_%d", len(behaviors)-1)
	}
	cond := f.sql(&s.scope)
	if cond == "" {
		cond = "1"
	}
	persons := "SELECT id, argMax(properties, version) AS properties\nFROM " + s.schema.Persons +
		"\nWHERE team_id = {team:Int64}\nGROUP BY id\nHAVING argMax(is_deleted, version) = 0"
	from := "(\n" + indent(persons) + "\n) AS p"
	if len(behaviors) > 0 {
		var cols, names []string
		oldest := behaviors[0].Within
		for i, b := range behaviors {
			cols = append(cols, fmt.Sprintf("countIf(e.event = %s AND e.timestamp >= %s) AS c_%d",
				s.str(b.Event), s.time(c.Now.Add(-b.Within)), i))
			names = append(names, b.Event)
			oldest = max(oldest, b.Within)
		}
		counts := "SELECT " + s.personID() + " AS person_id,\n    " + strings.Join(cols, ",\n    ") + "\nFROM " +
			s.from(joins{overrides: true}) + "\nWHERE e.team_id = {team:Int64} AND e.timestamp >= " + s.time(c.Now.Add(-oldest)) +
			" AND e.timestamp <= " + s.time(c.Now) + "\n  AND e.event IN " + s.bind("Array(String)", names) + "\nGROUP BY person_id"
		from += "\nLEFT JOIN (\n" + indent(counts) + "\n) AS b ON b.person_id = p.id"
	}
	return s.statement("INSERT INTO " + s.schema.CohortPeople + " (team_id, cohort_id, version, person_id)\n" +
		"SELECT {team:Int64}, " + s.bind("Int64", co.ID) + ", " + s.bind("UInt64", uint64(version)) + ", p.id\nFROM " + from +
		"\nWHERE " + cond), nil
}

// CohortStaticMembers writes the persons of a static cohort's distinct
// ids (one chunk of them) under version: each distinct id's current
// person, through merges.
func CohortStaticMembers(env Env, co Cohort, version int64, distinctIDs []string) (Statement, error) {
	if len(distinctIDs) == 0 {
		return Statement{}, errors.New("querybuilder: no distinct ids")
	}
	pr := &problems{}
	c := newCommon(env, pr)
	s := newEventSource(&c, Facts{})
	ids := "SELECT distinct_id, argMax(person_id, version) AS person_id\nFROM " + s.schema.DistinctIDs +
		"\nWHERE team_id = {team:Int64} AND distinct_id IN " + s.bind("Array(String)", distinctIDs) +
		"\nGROUP BY distinct_id\nHAVING argMax(is_deleted, version) = 0"
	return s.statement("INSERT INTO " + s.schema.CohortPeople + " (team_id, cohort_id, version, person_id)\n" +
		"SELECT DISTINCT {team:Int64}, " + s.bind("Int64", co.ID) + ", " + s.bind("UInt64", uint64(version)) +
		", if(empty(po.override_person_id), d.person_id, po.override_person_id)\nFROM (\n" + indent(ids) + "\n) AS d\n" +
		s.schema.OverridesJoin("d")), nil
}

// CohortCount counts a cohort's members of one version, as
// cohortMembers names them.
func CohortCount(env Env, co Cohort, version int64) Statement {
	s := newEventSource(&Common{Project: env.Project, clock: clock{loc: time.UTC}, Schema: env.Schema.OrDefault()}, Facts{})
	return s.statement("SELECT count() FROM (\n" + indent(cohortMembers(s, co.ID, version)) + "\n)")
}

// cohortMembers is a cohort version's members as they are now: one merged
// into another since the calculation stands for the person it became,
// once (as cohortSQL reads membership in analyses).
func cohortMembers(s *eventSource, cohortID, version int64) string {
	return "SELECT DISTINCT if(empty(po.override_person_id), cp.person_id, po.override_person_id) AS actor\nFROM " +
		s.schema.CohortPeople + " AS cp\n" + s.schema.OverridesJoin("cp") + "\n" +
		"WHERE cp.team_id = {team:Int64} AND cp.cohort_id = " + s.bind("Int64", cohortID) + " AND cp.version = " + s.bind("UInt64", uint64(version))
}

// CohortPrune deletes a cohort's member versions older than version.
func CohortPrune(env Env, co Cohort, version int64) Statement {
	s := newEventSource(&Common{Project: env.Project, clock: clock{loc: time.UTC}, Schema: env.Schema.OrDefault()}, Facts{})
	return s.statement("DELETE FROM " + s.schema.CohortPeople + " WHERE team_id = {team:Int64} AND cohort_id = " +
		s.bind("Int64", co.ID) + " AND version < " + s.bind("UInt64", uint64(version)))
}

// CohortMembersPage lists one page of a cohort's members (actorsPage's
// rows: id as text and the total).
func CohortMembersPage(env Env, co Cohort, page Page) Statement {
	s := newEventSource(&Common{Project: env.Project, clock: clock{loc: time.UTC}, Schema: env.Schema.OrDefault()}, Facts{})
	return actorsPage(s, cohortMembers(s, co.ID, co.Version), page)
}
