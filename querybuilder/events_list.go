package querybuilder

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// The events list (GET /api/projects/:id/events/): a page of a project's
// raw events, newest first, filtered like PostHog's legacy list. Pages
// follow a cursor, the (timestamp, uuid) of the last event shown, rather
// than an offset: events arriving meanwhile neither shift a page nor
// repeat one, and events sharing a timestamp are never skipped.

// EventsListMaxLimit is the largest page; EventsListDefaultLimit the
// page without a limit.
const (
	EventsListMaxLimit     = 1000
	EventsListDefaultLimit = 100
)

// EventsListQuery is a checked events-list request.
type EventsListQuery struct {
	c Common
	// Event, DistinctID and PersonID keep events with that name, distinct
	// id or person (the person the event belongs to now, merges included).
	Event, DistinctID *string
	PersonID          *string
	// Properties applies to every event (event and person conditions).
	Properties *PropertyFilter
	// After and Before bound the timestamp, both exclusive. With a uuid
	// (AfterUUID, BeforeUUID) the bound is the cursor (timestamp, uuid):
	// events at the same instant are told apart by uuid.
	After, Before         *time.Time
	AfterUUID, BeforeUUID *string
	// Ascending lists oldest first (orderBy ["timestamp"]).
	Ascending bool
	Limit     int
}

// ParseEventsList reads the list's query parameters (each one's first
// value) for project at now; every problem is a *ValidationError naming
// its parameter, all of them joined.
func ParseEventsList(params map[string]string, env Env) (EventsListQuery, error) {
	pr := &problems{}
	c := newCommon(env, pr)
	q := EventsListQuery{c: c, Limit: EventsListDefaultLimit}
	text := func(name string) *string {
		if v, ok := params[name]; ok {
			return &v
		}
		return nil
	}
	q.Event, q.DistinctID = text("event"), text("distinct_id")
	if v, ok := params["person_id"]; ok {
		if id, ok := CanonicalUUID(v); ok {
			q.PersonID = &id
		} else {
			pr.add("person_id", "person_id must be a person's uuid")
		}
	}
	if v, ok := params["properties"]; ok && strings.TrimSpace(v) != "" {
		pp := propertyParser{common: &q.c, clock: c.clock, pr: pr} // the cohorts env names
		q.Properties = pp.parse(json.RawMessage(v), "properties", "properties")
	}
	q.After = eventsListTime(params, "after", c.clock, pr)
	q.Before = eventsListTime(params, "before", c.clock, pr)
	q.AfterUUID = eventsListUUID(params, "after_uuid", q.After, "after", pr)
	q.BeforeUUID = eventsListUUID(params, "before_uuid", q.Before, "before", pr)
	if v, ok := params["orderBy"]; ok {
		var order []string
		if json.Unmarshal([]byte(v), &order) != nil || len(order) != 1 || (order[0] != "timestamp" && order[0] != "-timestamp") {
			pr.add("orderBy", `orderBy must be ["-timestamp"] (newest first, the default) or ["timestamp"]`)
		} else {
			q.Ascending = order[0] == "timestamp"
		}
	}
	if q.Ascending && q.BeforeUUID != nil || !q.Ascending && q.AfterUUID != nil {
		pr.add("orderBy", "a cursor follows the order: before_uuid goes with newest first, after_uuid with oldest first")
	}
	if v, ok := params["limit"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			pr.add("limit", "limit must be a positive integer (at most %d)", EventsListMaxLimit)
		} else {
			// Clamped as every list's limit is (Django REST framework's max_limit).
			q.Limit = min(n, EventsListMaxLimit)
		}
	}
	return q, pr.err()
}

// eventsListTime reads a bound: an exact instant (RFC 3339, the form of
// the cursors the list hands out, any year an event may have), or any
// date expression analyses take (ISO dates and date-times in the
// project's timezone, relative dates such as -1d).
func eventsListTime(params map[string]string, name string, c clock, pr *problems) *time.Time {
	v, ok := params[name]
	if !ok || strings.TrimSpace(v) == "" {
		return nil
	}
	v = strings.TrimSpace(v)
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil && t.Year() >= 1900 && t.Year() <= 2299 {
		t = t.UTC()
		return &t
	}
	t, _, err := c.parse(v, false)
	if err != nil {
		pr.add(name, "%s: %v; %s", name, err, dateGrammar)
		return nil
	}
	t = t.UTC()
	return &t
}

// eventsListUUID reads the uuid half of a cursor, which needs its time.
func eventsListUUID(params map[string]string, name string, bound *time.Time, boundName string, pr *problems) *string {
	v, ok := params[name]
	if !ok {
		return nil
	}
	id, valid := CanonicalUUID(v)
	switch {
	case !valid:
		pr.add(name, "%s must be an event's uuid", name)
		return nil
	case bound == nil:
		pr.add(name, "%s needs %s, the time of the same event", name, boundName)
		return nil
	}
	return &id
}

// eventsListColumns are what the list and the retrieve read of an event:
// uuid, event, distinct_id, properties, timestamp and the person the
// event belongs to now.
func eventsListColumns(s *eventSource) []string {
	return []string{"e.uuid", "e.event", "e.distinct_id", "e.properties", "e.timestamp", s.personID() + " AS person_id"}
}

// EventStatement reads one event of the project by uuid (given in its
// usual form, checked by the caller): the columns of BuildEventsList.
func EventStatement(env Env, id string, f Facts) Statement {
	c := newCommon(env, &problems{})
	s := newEventSource(&c, f)
	sql := s.selectFrom(eventsListColumns(s), joins{overrides: true}, []string{"e.team_id = {team:Int64}", "e.uuid = " + s.bind("UUID", id)})
	return s.statement(sql + "\nLIMIT 1")
}

// Needs is what of the engine's facts the list reads: merged persons.
func (q EventsListQuery) Needs() Needs { return Needs{PersonOverrides: true} }

// BuildEventsList compiles the request. The statement asks for one event
// more than the page holds, which tells the caller whether a next page
// exists. Columns: uuid, event, distinct_id, properties, timestamp,
// person_id.
func BuildEventsList(q EventsListQuery, f Facts) (Statement, error) {
	s := newEventSource(&q.c, f)
	where := []string{"e.team_id = {team:Int64}"}
	if q.Event != nil {
		where = append(where, "e.event = "+s.str(*q.Event))
	}
	if q.DistinctID != nil {
		where = append(where, "e.distinct_id = "+s.str(*q.DistinctID))
	}
	if q.PersonID != nil {
		where = append(where, s.personID()+" = "+s.bind("UUID", *q.PersonID))
	}
	where = append(where, bound(s.binder, ">", q.After, q.AfterUUID)...)
	where = append(where, bound(s.binder, "<", q.Before, q.BeforeUUID)...)
	if cond := s.cond(q.Properties); cond != "" {
		where = append(where, cond)
	}
	order := "DESC"
	if q.Ascending {
		order = "ASC"
	}
	sql := s.selectFrom(eventsListColumns(s), joins{overrides: true, persons: q.Properties.usesPersons(), sessions: q.Properties.usesSessions()}, where)
	sql += "\nORDER BY e.timestamp " + order + ", e.uuid " + order + "\nLIMIT " + s.named("limit", "UInt32", uint32(q.Limit+1))
	return s.statement(sql), nil
}

// bound is a time bound (op > for after, < for before) as conditions: on
// the timestamp alone, or on the (timestamp, uuid) cursor, with the
// timestamp also bounded alone so the engine can skip whole parts by it.
func bound(b *binder, op string, t *time.Time, id *string) []string {
	if t == nil {
		return nil
	}
	ts := b.time(*t)
	if id == nil {
		return []string{"e.timestamp " + op + " " + ts}
	}
	return []string{"e.timestamp " + op + "= " + ts,
		"(e.timestamp, e.uuid) " + op + " (" + ts + ", " + b.bind("UUID", *id) + ")"}
}

// CanonicalUUID reads a uuid in its usual 8-4-4-4-12 form, any case, and
// gives it in lower case.
func CanonicalUUID(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) != 36 {
		return "", false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return "", false
			}
		}
	}
	return s, true
}
