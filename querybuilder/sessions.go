package querybuilder

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Session properties: what the events sharing a $session_id say about
// the session as a whole, usable as conditions (type "session") and
// breakdowns (breakdown_type "session"). A statement that reads them joins
// each event to its session's properties, folded from the sessions table
// (migrations/clickhouse/0009_sessions.sql: partial aggregates per session
// and day, kept by a materialized view on events) over the range's days and
// sessionMargin either side: a session crossing the range's edge is read
// whole as long as it lasts less than a day, as PostHog's sessions do (its
// SDKs rotate a session after 24 hours). An event without a $session_id
// has no session properties (each reads as missing).
const sessionMargin = 24 * time.Hour

// sessionKeys are the session properties by name, each folding the
// session-day rows of the sessions table.
var sessionKeys = map[string]string{
	"$session_duration":  "dateDiff('second', min(min_timestamp), max(max_timestamp))",
	"$entry_current_url": "argMinIfMerge(entry_url)",
	"$exit_current_url":  "argMaxIfMerge(exit_url)",
	"$entry_pathname":    "argMinIfMerge(entry_pathname)",
	"$exit_pathname":     "argMaxIfMerge(exit_pathname)",
	"$pageview_count":    "sum(pageview_count)",
}

// sessionKeyList names the session properties, for errors.
func sessionKeyList() string {
	keys := make([]string, 0, len(sessionKeys))
	for k := range sessionKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// sessionColumn registers a session property the statement reads and
// returns its text for an event (empty without a session), as property
// conditions and breakdowns compare it.
func (s *eventSource) sessionColumn(key string) string {
	i := -1
	for n, k := range s.sessionCols {
		if k == key {
			i = n
		}
	}
	if i < 0 {
		s.sessionCols = append(s.sessionCols, key)
		i = len(s.sessionCols) - 1
	}
	return fmt.Sprintf("if(e.mat_session_id = '', '', toString(ss.sp_%d))", i)
}

// sessionJoin joins each event to the session properties registered so
// far. Sessions are keyed by a 128-bit hash of their id (sessionKey): the
// join's and the fold's hash tables hold 16 fixed bytes per session
// instead of the id's text, which on millions of sessions is the
// difference between answering and running out of memory.
func (s *eventSource) sessionJoin() string {
	cols := []string{"session_key"}
	for i, k := range s.sessionCols {
		cols = append(cols, fmt.Sprintf("%s AS sp_%d", sessionKeys[k], i))
	}
	where := "team_id = {team:Int64}"
	if r := s.c.Range; !r.From.IsZero() && !s.readsAll {
		// A request without a range (the events list), or one reading all
		// history, reads every session; one reading before its range
		// (readsBack) the sessions of what it reads.
		from, to := r.From, r.To
		if !s.readFrom.IsZero() && s.readFrom.Before(from) {
			from = s.readFrom
		}
		if s.readTo.After(to) {
			to = s.readTo
		}
		where += " AND day >= toDate(" + s.time(from.Add(-sessionMargin)) + ") AND day <= toDate(" + s.time(to.Add(sessionMargin)) + ")"
	}
	return globalJoin(s.schema, "LEFT JOIN") + ` (
    SELECT ` + strings.Join(cols, ",\n        ") + `
    FROM ` + s.schema.Sessions + `
    WHERE ` + where + `
    GROUP BY session_key
) AS ss ON ss.session_key = sipHash128(e.mat_session_id)`
}

// sessionJoinSetting keeps the session join as written: the events probe
// a hash table of the range's sessions. The engine's cost-based choice
// ('auto') built the table from the events instead (its estimate of the
// folded sessions is the table's rows, not the fold's), which made
// session breakdowns far slower (benchmarks/results/breakdowns.md). The
// setting exists from ClickHouse 24.12; older servers refuse it.
const sessionJoinSetting = "query_plan_join_swap_table = 'false'"

// usesSessions reports whether any condition reads session properties.
func (f *PropertyFilter) usesSessions() bool {
	if f == nil {
		return false
	}
	if f.Group == "" {
		return f.Type == "session"
	}
	for _, v := range f.Values {
		if v.usesSessions() {
			return true
		}
	}
	return false
}
