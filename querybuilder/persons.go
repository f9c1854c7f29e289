package querybuilder

import (
	"errors"
	"strings"
)

// Persons read back: the list (GET /api/projects/:id/persons/), one
// person, the persons behind an analysis' numbers, and the values a
// property takes. A person is their latest version (deleted ones left
// out) with every distinct id that maps to them now.

// PersonsColumns are the columns of a persons statement.
var PersonsColumns = []string{"id", "properties", "created_at", "is_identified", "distinct_ids", "total"}

// Persons list bounds: PostHog's page of 100.
const (
	PersonsDefaultLimit = 100
	PersonsMaxLimit     = 1000
)

// PersonsQuery is a checked persons-list request.
type PersonsQuery struct {
	c Common
	// DistinctID keeps the person with that distinct id; Search persons
	// whose distinct ids, email or name contain it (any case).
	DistinctID *string
	Search     string
	// Properties are conditions on the persons' properties (every
	// condition reads person properties, whatever its type says).
	Properties    *PropertyFilter
	Limit, Offset int
}

// ParsePersons reads a persons-list request: distinct_id, search,
// properties, limit and offset.
func ParsePersons(p Params, env Env) (*PersonsQuery, error) {
	pr := &problems{}
	q := &PersonsQuery{c: newCommon(env, pr), Limit: PersonsDefaultLimit}
	if s, ok := p.str("distinct_id", pr); ok {
		q.DistinctID = &s
	}
	q.Search, _ = p.str("search", pr)
	if raw, ok := p.document("properties"); ok {
		q.Properties = q.c.properties(pr).parse(raw, "properties", "properties")
		if q.Properties.usesSessions() {
			pr.add("properties", "persons have no session properties: filter them by person properties")
		}
		if q.Properties.usesGroups() {
			pr.add("properties", "persons have no group properties: filter them by person properties")
		}
		q.Properties.asPerson()
	}
	if n, ok := p.integer("limit", pr); ok {
		if n < 1 {
			pr.add("limit", "limit must be a positive integer")
		}
		q.Limit = int(min(max(n, 1), PersonsMaxLimit))
	}
	if n, ok := p.integer("offset", pr); ok {
		if n < 0 {
			pr.add("offset", "offset must not be negative")
		}
		q.Offset = int(max(n, 0))
	}
	return q, pr.err()
}

// asPerson makes every condition read person properties: the list's
// conditions are on persons.
func (f *PropertyFilter) asPerson() {
	if f == nil {
		return
	}
	if f.Group == "" {
		if f.Type == "event" {
			f.Type = "person"
		}
		return
	}
	for _, v := range f.Values {
		v.asPerson()
	}
}

// Build is the list's statement, newest persons first.
func (q *PersonsQuery) Build() Statement {
	s := newEventSource(&q.c, Facts{})
	var where []string
	if q.DistinctID != nil {
		where = append(where, "has(d.distinct_ids, "+s.str(*q.DistinctID)+")")
	}
	if q.Search != "" {
		v := s.str(q.Search)
		where = append(where, "(arrayExists(x -> positionCaseInsensitiveUTF8(x, "+v+") > 0, d.distinct_ids)"+
			" OR positionCaseInsensitiveUTF8(JSONExtractString(p.properties, 'email'), "+v+") > 0"+
			" OR positionCaseInsensitiveUTF8(JSONExtractString(p.properties, 'name'), "+v+") > 0)")
	}
	// Person expressions read the properties column, which only p has;
	// a computed cohort's membership is of the person's own id (a listed
	// person is live: never one merged into another).
	rowScope := &scope{binder: s.binder, person: func(expr string) string { return "(" + expr + ")" },
		personID: func() string { return "p.id" }, schema: s.schema}
	if c := q.Properties.sql(rowScope); c != "" {
		where = append(where, c)
	}
	sql := personsRead(s, "", where) + "\nORDER BY p.created_at DESC, p.id\nLIMIT " + s.bind("UInt64", uint64(q.Limit)) +
		" OFFSET " + s.bind("UInt64", uint64(q.Offset))
	return s.statement(sql)
}

// personsRead reads live persons with their distinct ids (the columns of
// PersonsColumns) under the conditions where, over aliases p and d.
func personsRead(s *eventSource, ids string, where []string) string {
	sql := `SELECT toString(p.id) AS id, p.properties, p.created_at, p.is_identified, d.distinct_ids, count() OVER () AS total
FROM ` + personsLatest(s, ids)
	if len(where) > 0 {
		sql += "\nWHERE " + strings.Join(where, "\n  AND ")
	}
	return sql
}

// personsLatest is the FROM clause of live persons (alias p: id,
// properties, created_at, is_identified) joined to their distinct ids
// (alias d: distinct_ids). ids, when not empty, is a bound Array(UUID)
// the persons are among (a page, one person): both tables are then read
// through their sorting keys instead of every person of the project.
func personsLatest(s *eventSource, ids string) string {
	pWhere, dWhere := "team_id = {team:Int64}", "team_id = {team:Int64}"
	if ids != "" {
		pWhere += " AND id IN " + ids
		// A distinct id now the person's had a version naming them.
		dWhere += " AND distinct_id IN (\n            SELECT distinct_id FROM " + s.schema.DistinctIDs +
			" WHERE team_id = {team:Int64} AND person_id IN " + ids + ")"
	}
	return `(
    SELECT id, argMax(properties, version) AS properties, argMax(created_at, version) AS created_at,
        argMax(is_identified, version) AS is_identified
    FROM ` + s.schema.Persons + ` WHERE ` + pWhere + `
    GROUP BY id HAVING argMax(is_deleted, version) = 0
) AS p
INNER JOIN (
    SELECT person_id, arraySort(groupArray(distinct_id)) AS distinct_ids
    FROM (
        SELECT distinct_id, argMax(person_id, version) AS person_id
        FROM ` + s.schema.DistinctIDs + ` WHERE ` + dWhere + `
        GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0
    )
    GROUP BY person_id
) AS d ON d.person_id = p.id`
}

// PersonsByID reads the live persons among ids (uuids in their usual
// form), in no particular order: one person, or a page of actors.
func PersonsByID(env Env, ids []string) Statement {
	c := newCommon(env, &problems{})
	s := newEventSource(&c, Facts{})
	in := s.bind("Array(UUID)", ids)
	return s.statement(personsRead(s, in, []string{"p.id IN " + in}))
}

// PropertyValuesStatement lists the values a person property (typ
// "person") or an event property (of event, if not empty, over the week
// before env.Now) takes, the most frequent first: what a filter picker
// offers. Columns: value, count.
func PropertyValuesStatement(env Env, typ, key, event string) (Statement, error) {
	if strings.TrimSpace(key) == "" {
		return Statement{}, &ValidationError{Attr: "key", Detail: "key is required: the property whose values to list"}
	}
	c := newCommon(env, &problems{})
	s := newEventSource(&c, Facts{})
	if typ == "person" {
		sql := `SELECT value, count() AS count
FROM (
    SELECT JSONExtractString(argMax(properties, version), ` + s.str(key) + `) AS value
    FROM ` + s.schema.Persons + ` WHERE team_id = {team:Int64}
    GROUP BY id HAVING argMax(is_deleted, version) = 0
)
WHERE value != ''
GROUP BY value
ORDER BY count DESC, value
LIMIT 100`
		return s.statement(sql), nil
	}
	if typ != "event" {
		return Statement{}, errors.New("querybuilder: property values of person or event properties only")
	}
	x := propertyText(&s.scope, "event", key)
	where := []string{"e.team_id = {team:Int64}", "e.timestamp >= " + s.time(c.clock.shift(c.Now, 'd', -7)), x + " != ''"}
	if event != "" {
		where = append(where, "e.event = "+s.str(event))
	}
	sql := s.selectFrom([]string{x + " AS value", "count() AS count"}, joins{}, where) + "\nGROUP BY value\nORDER BY count DESC, value\nLIMIT 100"
	return s.statement(sql), nil
}

// PersonMergedStatement lists the persons merged into person id (their
// rows deleted, their events counted as id through person_overrides):
// column old_person_id. Deleting a person deletes them with it.
func PersonMergedStatement(env Env, id string) Statement {
	c := newCommon(env, &problems{})
	s := newEventSource(&c, Facts{})
	return s.statement(`SELECT toString(old_person_id)
FROM ` + s.schema.Overrides + ` WHERE team_id = {team:Int64}
GROUP BY old_person_id
HAVING argMax(override_person_id, version) = ` + s.bind("UUID", id))
}

// PersonStateStatement tells whether person id exists, deleted or not:
// no row if it never did, else one row whose column state is 'live' or
// 'deleted'. A deletion that failed part way is retried on
// a person already marked deleted (PersonDeleteStatements).
func PersonStateStatement(env Env, id string) Statement {
	c := newCommon(env, &problems{})
	s := newEventSource(&c, Facts{})
	return s.statement(`SELECT if(argMax(is_deleted, version) = 0, 'live', 'deleted') AS state
FROM ` + s.schema.Persons + ` WHERE team_id = {team:Int64} AND id = ` + s.bind("UUID", id) + `
GROUP BY id`)
}

// PersonDeleteStatements delete person id with the persons merged into
// it (merged, from PersonMergedStatement), at version (above every
// version written before): every distinct id that maps to one of them is
// unmapped (written again marked deleted), so that the next event of one
// of them makes a new person, and then the person's row is written again
// marked deleted. The row goes last so that a deletion failing part way
// leaves the person live and a retry finds it; every statement can run
// again on what it already did (a deleted person's row is written deleted
// again, distinct ids already unmapped are not read).
func PersonDeleteStatements(env Env, id string, merged []string, version uint64) []Statement {
	c := newCommon(env, &problems{})
	ids := append([]string{id}, merged...)
	s := newEventSource(&c, Facts{})
	unmap := s.statement(`INSERT INTO ` + s.schema.DistinctIDs + ` (team_id, distinct_id, person_id, is_deleted, version)
SELECT team_id, distinct_id, argMax(person_id, version) AS person, 1, ` + s.bind("UInt64", version) + `
FROM ` + s.schema.DistinctIDs + ` WHERE team_id = {team:Int64}
GROUP BY team_id, distinct_id
HAVING argMax(is_deleted, version) = 0 AND person IN ` + s.bind("Array(UUID)", ids))
	s = newEventSource(&c, Facts{})
	row := s.statement(`INSERT INTO ` + s.schema.Persons + ` (id, team_id, properties, property_times, created_at, is_identified, is_deleted, version)
SELECT id, team_id, argMax(properties, version), argMax(property_times, version), argMax(created_at, version),
    argMax(is_identified, version), 1, ` + s.bind("UInt64", version) + `
FROM ` + s.schema.Persons + ` WHERE team_id = {team:Int64} AND id = ` + s.bind("UUID", id) + `
GROUP BY id, team_id`)
	return []Statement{unmap, row}
}

// PersonEventsDeleteStatement deletes the events of person id and of the
// persons merged into it (merged): those stored under a merged person's
// id count as the person through the overrides, so deleting by the
// person's id alone would leave them counted. A lightweight DELETE masks
// the rows at once for every later read and leaves their removal to
// merges, where ALTER TABLE ... DELETE would rewrite every part holding
// one, in the background. Deleting again deletes nothing more.
func PersonEventsDeleteStatement(env Env, id string, merged []string) Statement {
	c := newCommon(env, &problems{})
	s := newEventSource(&c, Facts{})
	return s.statement(`DELETE FROM ` + s.schema.MutationTarget(s.schema.Events) + ` WHERE team_id = {team:Int64} AND person_id IN ` + s.bind("Array(UUID)", append([]string{id}, merged...)))
}
