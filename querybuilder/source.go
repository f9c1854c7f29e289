package querybuilder

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// eventSource is the one place that writes how a statement reads events:
// the events table and its joins (merged persons, persons' current
// properties), each event's person and the actor a statement counts, the
// conditions that select an entity's events and property conditions, and
// time buckets in the project's timezone. Every analysis kind reads
// events through it, so a change in how events are read (actions,
// cohorts, a cluster's tables) is made here once.
//
// What a read joins is decided from the request and the engine's facts
// before any SQL is written: a FROM clause is written last, once the
// conditions and columns of its SELECT have been compiled and have
// registered the person properties they read.
type eventSource struct {
	c      *Common
	facts  Facts
	schema Schema
	scope
	// personCols are the person-level expressions read through the person
	// join, as its columns pp_0, pp_1...; sessionCols the session
	// properties read through the session join (sessions.go).
	personCols  []string
	sessionCols []string
	// groupCols are the group-level expressions read through each group
	// type's join (groups.go), by type index.
	groupCols [maxGroupTypeIndex + 1][]string
	weekMode  string
	// settings are the engine settings a join written so far asks for
	// (sessionJoinSetting).
	settings []string
	// readFrom and readTo are the earliest and latest times the statement
	// reads events at when those are outside the range (compare's previous
	// period, the look-back of weekly active users, a paths statement's
	// funnel...); readsAll that it reads every event's history. The
	// session join folds the sessions of what is read.
	readFrom, readTo time.Time
	readsAll         bool
}

// readsBack tells the source that its statement reads events from t on
// (the zero time: from the first event), before the range; call it
// before writing any read.
func (s *eventSource) readsBack(t time.Time) {
	switch {
	case t.IsZero():
		s.readsAll = true
	case s.readFrom.IsZero() || t.Before(s.readFrom):
		s.readFrom = t
	}
}

// readsSpan tells the source that its statement reads events from from
// to to (a funnel's range inside a paths statement), as readsBack.
func (s *eventSource) readsSpan(from, to time.Time) {
	s.readsBack(from)
	if to.After(s.readTo) {
		s.readTo = to
	}
}

// scope is how compiled expressions read values: every value bound as a
// parameter, and person-level expressions (over a persons row's
// properties) as the reader of persons sees them.
type scope struct {
	*binder
	person func(expr string) string
	// session reads a session property (a key of sessionKeys) as text;
	// group a group-level expression (over a groups row's properties) of
	// the event's group of a type, nil where no event is read.
	session func(key string) string
	group   func(index int, expr string) string
	// personID is the person an event belongs to; behavior, in a cohort's
	// calculation, the count column of a behavioural condition; schema
	// names the tables.
	personID func() string
	behavior func(b *behavior) string
	schema   Schema
}

// newEventSource starts a statement of request c: the team and timezone
// parameters every event read uses are bound.
func newEventSource(c *Common, f Facts) *eventSource {
	s := &eventSource{c: c, facts: f, schema: c.Schema.OrDefault()}
	s.scope = scope{binder: newBinder(), person: s.personColumn, session: s.sessionColumn, group: s.groupColumn,
		personID: s.personID, schema: s.schema}
	s.named("team", "Int64", c.Project.ID)
	s.named("tz", "String", c.clock.loc.String())
	return s
}

// statement is the finished statement with the source's parameters.
func (s *eventSource) statement(sql string) Statement {
	return Statement{SQL: sql, Params: s.params, Settings: s.settings}
}

// joins says what a read of events joins.
type joins struct {
	// overrides resolves each event's person through merged persons.
	overrides bool
	// persons joins each event's person's current properties (the
	// columns registered by personColumn).
	persons bool
	// sessions joins each event's session's properties (sessionColumn).
	sessions bool
}

// from is a FROM clause reading events as e with the joins j. Person
// properties must be registered before it is written.
func (s *eventSource) from(j joins) string {
	sql := s.schema.Events + " AS e"
	if (j.overrides || j.persons) && !s.facts.NoPersonOverrides {
		sql += "\n" + s.schema.OverridesJoin("e")
	}
	// A left join whose columns nothing reads changes no row (persons
	// are unique by id): a read that registered no person property yet
	// (a funnel's hot actors beside a person breakdown) skips it.
	if j.persons && len(s.personCols) > 0 {
		sql += "\n" + s.personJoin()
	}
	if j.sessions && len(s.sessionCols) > 0 {
		sql += "\n" + s.sessionJoin()
		s.setting(sessionJoinSetting)
	}
	return sql + s.groupJoins()
}

// setting asks the engine for a setting once (a statement may write the
// same join for several series).
func (s *eventSource) setting(set string) {
	if !slices.Contains(s.settings, set) {
		s.settings = append(s.settings, set)
	}
}

// personID is an event's person: through the overrides of merged persons
// unless the project has none.
func (s *eventSource) personID() string {
	if s.facts.NoPersonOverrides {
		return "e.person_id"
	}
	return EventPersonID
}

// groupColumns are the events' materialized $group_N columns.
var groupColumns = [maxGroupTypeIndex + 1]string{"e.mat_group_0", "e.mat_group_1", "e.mat_group_2", "e.mat_group_3", "e.mat_group_4"}

// actor is who a statement counts: the event's person, or with a group
// type index above 0 its group; cond keeps only events that have one
// ("" for persons, who always do).
func (s *eventSource) actor(groupTypeIndex int) (expr, cond string) {
	if groupTypeIndex > 0 {
		c := groupColumns[groupTypeIndex]
		return c, c + " != ''"
	}
	return s.personID(), ""
}

// personColumn registers an expression over a person's properties and
// returns the person join's column holding its current value.
func (s *eventSource) personColumn(expr string) string {
	for i, e := range s.personCols {
		if e == expr {
			return fmt.Sprintf("pp.pp_%d", i)
		}
	}
	s.personCols = append(s.personCols, expr)
	return fmt.Sprintf("pp.pp_%d", len(s.personCols)-1)
}

// personJoin joins each event's person to the person's current values of
// the properties registered so far, skipping deleted persons: filters
// and breakdowns on person properties see the person as they are now,
// after every $set. Only those values travel into the join's hash table,
// not every person's whole properties document.
func (s *eventSource) personJoin() string {
	cols := []string{"id"}
	for i, expr := range s.personCols {
		cols = append(cols, fmt.Sprintf("argMax(%s, version) AS pp_%d", expr, i))
	}
	return `LEFT JOIN (
    SELECT ` + strings.Join(cols, ",\n        ") + `
    FROM ` + s.schema.Persons + ` WHERE team_id = {team:Int64}
    GROUP BY id HAVING argMax(is_deleted, version) = 0
) AS pp ON pp.id = ` + s.personID()
}

// eventIs is the condition that an event is the entity's event ("" for
// all events).
func (s *eventSource) eventIs(e Entity) string {
	if e.AllEvents || e.Type == "actions" {
		return "" // an action's events are its conditions
	}
	return "e.event = " + s.str(e.ID)
}

// entityCond is the condition selecting an entity's events: its event and
// its own properties; "1" for every event.
func (s *eventSource) entityCond(e Entity) string {
	var parts []string
	if c := s.eventIs(e); c != "" {
		parts = append(parts, c)
	}
	if c := e.Properties.sql(&s.scope); c != "" {
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		return "1"
	}
	return strings.Join(parts, " AND ")
}

// cond compiles property conditions ("" for none).
func (s *eventSource) cond(f *PropertyFilter) string { return f.sql(&s.scope) }

// span is a closed time range as two placeholders.
type span struct{ from, to string }

// rangeSpan binds the request's range as date_from and date_to.
func (s *eventSource) rangeSpan() span {
	from, to := s.c.Range.bounds()
	return span{s.named("date_from", typeTime, from.UTC()), s.named("date_to", typeTime, to.UTC())}
}

func (sp span) sql() string {
	return "e.timestamp >= " + sp.from + " AND e.timestamp <= " + sp.to
}

// bucket is instant t's bucket in the project's timezone, typed: a Date
// for day, week and month, the hour's start instant for hours.
func (s *eventSource) bucket(iv Interval, t string) string {
	tz := "{tz:String}"
	switch iv {
	case IntervalHour:
		return "toStartOfHour(" + t + ", " + tz + ")"
	case IntervalWeek:
		return "toStartOfWeek(" + t + ", " + s.weekModeParam() + ", " + tz + ")"
	case IntervalMonth:
		return "toStartOfMonth(" + t + ", " + tz + ")"
	}
	return "toDate(" + t + ", " + tz + ")"
}

// weekModeParam is toStartOfWeek's mode: 0 weeks start on Sunday, 1 on
// Monday (the project's week_start_day).
func (s *eventSource) weekModeParam() string {
	if s.weekMode == "" {
		mode := 0
		if s.c.clock.weekStart == time.Monday {
			mode = 1
		}
		s.weekMode = s.named("week_mode", "UInt8", mode)
	}
	return s.weekMode
}

// bucketKey renders a typed bucket column (bucket) as Bucket.Key.
func bucketKey(iv Interval, col string) string {
	if iv == IntervalHour {
		return "formatDateTime(" + col + ", '%Y-%m-%d %H:%i:%S', 'UTC')"
	}
	return "toString(" + col + ")"
}

// selectFrom is SELECT cols FROM events (with joins j) WHERE the
// conditions, ANDed. The FROM clause is written after cols and where have
// been compiled, so it carries the person properties they read.
func (s *eventSource) selectFrom(cols []string, j joins, where []string) string {
	for i, c := range cols {
		cols[i] = strings.ReplaceAll(c, "\n", "\n    ")
	}
	return "SELECT " + strings.Join(cols, ",\n    ") + "\nFROM " + s.from(j) + "\nWHERE " + strings.Join(where, "\n  AND ")
}

// indent shifts a subquery right, so that generated SQL reads as nested.
func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// groupBy is a GROUP BY clause, or nothing for no keys (one row).
func groupBy(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return "\nGROUP BY " + strings.Join(keys, ", ")
}

// periodIndex is the index of instant t's bucket (iv) counted from the
// bucket that starts at first (a bucket start in the project's timezone):
// 0 for that bucket. It holds only for t at or after first (the caller
// bounds t): it is plain arithmetic on the engine's day and month numbers
// and elapsed seconds, computed per event without rounding t to its
// bucket. Hours are elapsed hours from first, so the two hours of a DST
// fall-back stay apart, as buckets do.
func (s *eventSource) periodIndex(iv Interval, t string, first time.Time) string {
	tz := "{tz:String}"
	day := "toInt64(toRelativeDayNum(" + s.bind("Date", first.In(s.c.clock.loc).Format("2006-01-02")) + "))"
	switch iv {
	case IntervalHour:
		return "intDiv(toInt64(toUnixTimestamp(" + t + ")) - " + s.bind("Int64", first.Unix()) + ", 3600)"
	case IntervalWeek:
		return "intDiv(toInt64(toRelativeDayNum(" + t + ", " + tz + ")) - " + day + ", 7)"
	case IntervalMonth:
		return "toInt64(toRelativeMonthNum(" + t + ", " + tz + ")) - toInt64(toRelativeMonthNum(" +
			s.bind("Date", first.In(s.c.clock.loc).Format("2006-01-02")) + "))"
	}
	return "toInt64(toRelativeDayNum(" + t + ", " + tz + ")) - " + day
}
