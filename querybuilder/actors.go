package querybuilder

import (
	"bytes"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The actors behind a number. Every people URL a result emits is
// /api/projects/:id/persons/<kind's persons route>/ with the request as
// it was parsed (relative dates resolved, so that the URL names the same
// range whenever it is followed) and the selection: which series, bucket,
// step, cohort or status. The persons endpoint parses the request with the
// same kind, and the kind lists the actors of the selection from the
// same per-actor statement its numbers come from, so the counts agree by
// construction.

// Page is a page of a selection's actors; Limit 0 means all of them.
// Details, when set, makes the statement an export's: each actor's
// details (persons' latest version, or groups' properties, by the actors'
// type) joined to its row, every column the text of one cell of the
// export (ExportColumns); an export reads the details once, where a page
// looks up its hundred actors by key (PersonsByID, GroupsByKey).
// DisplayNames are the person properties that name a person, in order
// (the project's person_display_name_properties).
// Order, when set, orders the actors (then by actor); EventCounts adds
// each actor's matching events as a column event_count, where the kind
// counts them (trends: ActorsEventCounts).
type Page struct {
	Limit, Offset int
	Details       *ActorType
	DisplayNames  []string
	Order         []ActorsOrder
	EventCounts   bool
}

// ActorsOrder is one way to order a page of actors (an allow-list: the
// orderBy terms PostHog's tools send for actors queries).
type ActorsOrder string

// The orders of actors.
const (
	OrderActor           ActorsOrder = "actor"
	OrderActorDesc       ActorsOrder = "actor DESC"
	OrderEventCountDesc  ActorsOrder = "event_count DESC"
	OrderAppearancesDesc ActorsOrder = "arraySum(appearances) DESC"
)

// orderBy is the page's ORDER BY terms: its orders, then the actor, each
// term only when the statement has its column.
func (p Page) orderBy(cols map[string]bool) string {
	var terms []string
	for _, o := range p.Order {
		switch o {
		case OrderEventCountDesc:
			if cols["event_count"] {
				terms = append(terms, string(o))
			}
		case OrderAppearancesDesc:
			if cols["appearances"] {
				terms = append(terms, string(o))
			}
		case OrderActor, OrderActorDesc:
			terms = append(terms, string(o))
		}
	}
	return strings.Join(append(terms, "actor"), ", ")
}

// ActorType is what the actors of a number are: persons, groups of one
// type, or sessions (trends' unique_session). The query knows it; an
// actor's id does not say it (a session id is a uuid too).
type ActorType struct {
	Kind           ActorKind
	GroupTypeIndex int
}

// ActorKind names a type of actor.
type ActorKind string

// The types of actors.
const (
	ActorPerson  ActorKind = "person"
	ActorGroup   ActorKind = "group"
	ActorSession ActorKind = "session"
)

// PersonActors are persons.
var PersonActors = ActorType{Kind: ActorPerson}

// GroupActors are the groups of a type.
func GroupActors(index int) ActorType { return ActorType{Kind: ActorGroup, GroupTypeIndex: index} }

// ExportColumns are the leading columns of an export's statement (a
// Details page), named as the export's header: the JSON answer's fields,
// as text. The kind's further columns follow (retention's appearances),
// as JSON text.
func ExportColumns(t ActorType) []string {
	switch t.Kind {
	case ActorGroup:
		return []string{"id", "group_key", "group_type_index", "group_properties", "created_at", "type"}
	case ActorSession:
		return []string{"id", "session_id", "type"}
	}
	return []string{"id", "uuid", "name", "distinct_ids", "properties", "created_at", "is_identified"}
}

// ActorsLister is a query whose numbers count actors.
type ActorsLister interface {
	Query
	// Actors builds the statement listing the actors of the selection in
	// sel (series, bucket, step...): rows of (actor as text, total), the
	// total being the selection's size, ordered by actor; a kind may add
	// columns after them (retention: each actor's appearances).
	Actors(sel Params, f Facts, page Page) (Statement, error)
	// ActorType is the type of the actors Actors lists for sel.
	ActorType(sel Params) ActorType
}

// ActorEventCounter is an ActorsLister whose pages can carry each
// actor's matching events (Page.EventCounts: a column event_count).
type ActorEventCounter interface {
	ActorsLister
	CountsActorEvents()
}

// ActorsColumns are the columns of an actors statement.
var ActorsColumns = []string{"actor", "total"}

// peopleIgnored are request parameters a people URL leaves out.
var peopleIgnored = map[string]bool{"client_query_id": true, "debug": true, "refresh": true, "format": true,
	"date_from": true, "date_to": true, "limit": true, "offset": true}

// peopleBase is the people URL of route for this request without a
// selection: every parameter as sent (JSON text), the range resolved.
func (c *Common) peopleBase(route string) string {
	v := url.Values{}
	for k, raw := range c.raw {
		if !peopleIgnored[k] && !isNull(raw) {
			v.Set(k, string(bytes.TrimSpace(raw)))
		}
	}
	if !c.Range.From.IsZero() {
		from, to := c.Range.bounds() // with explicit_date (kept above), the dates as sent
		v.Set("date_from", from.In(c.clock.loc).Format(time.RFC3339Nano))
		v.Set("date_to", to.In(c.clock.loc).Format(time.RFC3339Nano))
	}
	return "/api/projects/" + strconv.FormatInt(c.Project.ID, 10) + "/persons/" + route + "/?" + v.Encode()
}

// withSelection appends selection parameters, in name order, to a base.
func withSelection(base string, sel map[string]string) string {
	names := make([]string, 0, len(sel))
	for k := range sel {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		base += "&" + url.QueryEscape(k) + "=" + url.QueryEscape(selectionText(sel[k]))
	}
	return base
}

// selectionText is a selection value as the persons endpoint reads it
// back as sent: ParseQuery takes text that is valid JSON as JSON, so such
// text, other than a whole number or a boolean, travels as a JSON string
// (a multiple breakdown's value ["Chrome","Mac"], a histogram bin's
// "[1,5.5]", a value "null" or "\"quoted\"" would otherwise come back as
// a list, nothing or other text).
func selectionText(v string) string {
	if !json.Valid([]byte(v)) || v == "true" || v == "false" {
		return v
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && strconv.FormatInt(n, 10) == v {
		return v
	}
	b, _ := json.Marshal(v) // a Go string always encodes
	return string(b)
}

// actorsPage is the statement of one page of the actors a subquery lists
// (its column actor, one row per actor).
// extra names further columns of sub to list after the total.
func actorsPage(s *eventSource, sub string, page Page, extra ...string) Statement {
	if page.Details != nil {
		return actorsDetails(s, sub, page, extra)
	}
	cols := "toString(actor) AS actor, count() OVER () AS total"
	has := map[string]bool{}
	for _, c := range extra {
		cols += ", " + c
		has[c] = true
	}
	sql := "SELECT " + cols + "\nFROM (\n" + indent(sub) + "\n)\nORDER BY " + page.orderBy(has)
	if page.Limit > 0 {
		sql += "\nLIMIT " + s.bind("UInt64", uint64(page.Limit)) + " OFFSET " + s.bind("UInt64", uint64(page.Offset))
	}
	return s.statement(sql)
}

// actorsDetails is actorsPage for an export: each actor's details
// joined, every column a cell's text (ExportColumns; a person's name by
// the display properties, as the persons list names them; a time in
// RFC 3339, empty for an actor without a row), and no total (a count over
// every row would hold the first row back until the last). The engine
// writes the cells, which the export only copies out: decoding typed
// columns and formatting them in Go took most of an export's time. The
// details are read once (every live person of the project with their
// distinct ids, or every group of the type) and the actors are the join's
// right side, the side the engine holds in memory, so that the persons
// stream past it and an actor without a row (a person deleted since) is
// still listed, with empty details.
func actorsDetails(s *eventSource, sub string, page Page, extra []string) Statement {
	const at = "'%Y-%m-%dT%H:%i:%S.%fZ', 'UTC'"
	id := "toString(a.actor)"
	var cells []string
	var details, on string
	switch page.Details.Kind {
	case ActorPerson:
		name := "multiIf("
		for _, n := range page.DisplayNames {
			v := "JSONExtractString(x.properties, " + s.str(n) + ")"
			name += v + " != '', " + v + ", "
		}
		name += "notEmpty(x.distinct_ids), x.distinct_ids[1], " + id + ")"
		cells = []string{id, id, name, "toJSONString(x.distinct_ids)", "if(x.properties = '', '{}', x.properties)",
			"if(empty(x.distinct_ids), '', formatDateTime(x.created_at, " + at + "))", "if(x.is_identified = 1, 'true', 'false')"}
		details = "SELECT p.id AS id, p.properties AS properties, p.created_at AS created_at, p.is_identified AS is_identified, d.distinct_ids AS distinct_ids\n" +
			"FROM " + personsLatest(s, "")
		on = "x.id = a.actor"
	case ActorGroup:
		cells = []string{id, id, "toString(" + s.bind("UInt8", uint8(page.Details.GroupTypeIndex)) + ")",
			"if(x.group_properties = '', '{}', x.group_properties)",
			"if(x.group_key = '', '', formatDateTime(x.created_at, " + at + "))", "'group'"}
		details = `SELECT group_key, argMax(group_properties, version) AS group_properties, argMax(created_at, version) AS created_at
FROM ` + s.schema.Groups + ` WHERE team_id = {team:Int64} AND group_type_index = ` + s.bind("UInt8", uint8(page.Details.GroupTypeIndex)) + `
GROUP BY group_key`
		on = "x.group_key = a.actor"
	default:
		cells = []string{id, id, "'session'"}
	}
	names := ExportColumns(*page.Details)
	cols := make([]string, 0, len(cells)+len(extra))
	for i, c := range cells {
		cols = append(cols, c+" AS "+names[i])
	}
	for _, c := range extra {
		cols = append(cols, "toJSONString(a."+c+") AS "+c)
	}
	sql := "SELECT " + strings.Join(cols, ",\n    ") + "\nFROM "
	if details == "" {
		sql += "(\n" + indent(sub) + "\n) AS a"
	} else {
		sql += "(\n" + indent(details) + "\n) AS x\nRIGHT JOIN (\n" + indent(sub) + "\n) AS a ON " + on
	}
	sql += "\nORDER BY id"
	if page.Limit > 0 {
		sql += "\nLIMIT " + s.bind("UInt64", uint64(page.Limit)) + " OFFSET " + s.bind("UInt64", uint64(page.Offset))
	}
	return s.statement(sql)
}

// GroupsByKey reads the groups of a type among keys: columns group_key,
// group_properties, created_at (a page of group actors).
func GroupsByKey(env Env, index int, keys []string) Statement {
	c := newCommon(env, &problems{})
	s := newEventSource(&c, Facts{})
	return s.statement(`SELECT group_key, argMax(group_properties, version) AS group_properties, argMax(created_at, version) AS created_at
FROM ` + s.schema.Groups + `
WHERE team_id = {team:Int64} AND group_type_index = ` + s.bind("UInt8", uint8(index)) + ` AND group_key IN ` + s.bind("Array(String)", keys) + `
GROUP BY group_key`)
}

// selInt reads a whole-number selection parameter that must be present.
func selInt(sel Params, name string, pr *problems) int {
	n, ok := sel.integer(name, pr)
	if !ok && !sel.present(name) {
		pr.add(name, "%s is required to list the actors of a number", name)
	}
	return int(n)
}

// aggregated is the actor type of a group type index as analyses take
// it: above 0 that type's groups, else persons (eventSource.actor).
func aggregated(index int) ActorType {
	if index > 0 {
		return GroupActors(index)
	}
	return PersonActors
}

// bucketOf is the bucket a selection names: by its key, else by the day
// a result showed for it (days: YYYY-MM-DD, or YYYY-MM-DD HH:MM:SS for
// hours, in the project's time zone), else by an instant inside it (RFC
// 3339), as actors queries name a point (InsightActorsQuery.day).
func bucketOf(buckets []Bucket, key string, loc *time.Location) (Bucket, bool) {
	for _, b := range buckets {
		if b.Key == key || b.Day == key {
			return b, true
		}
	}
	t, err := time.Parse(time.RFC3339Nano, key)
	if err != nil {
		for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02"} {
			if t, err = time.ParseInLocation(layout, key, loc); err == nil {
				break
			}
		}
	}
	if err != nil {
		return Bucket{}, false
	}
	for _, b := range buckets {
		if !t.Before(b.Start) && t.Before(b.End) {
			return b, true
		}
	}
	return Bucket{}, false
}
