// Package chsql is ClickHouse SQL: the statement and table names the
// compiler writes and the engine runs. It is the one thing both sides of
// an analysis share, so querybuilder (which writes statements) and olap
// (which runs them) each import it and neither imports the other.
package chsql

import (
	"fmt"
	"sort"
	"strings"
)

// Statement is one SQL statement and the values it binds. Values appear in
// the SQL only as {name:Type} placeholders and are bound by the engine;
// Params maps each placeholder name to its Go value (string, integer,
// float, bool, time.Time, slices of those, or nil for NULL).
type Statement struct {
	SQL    string
	Params map[string]any
	// Settings are engine settings the statement asks for ("name = literal"),
	// fixed text of the builder's, never a request's values. WithLimits, which
	// every served statement passes through, writes them into its SETTINGS
	// clause.
	Settings []string
	// Fallback, when set, answers the same rows by a surer way. The
	// statement checks an assumption its speed rests on (item hashes
	// that no two items share: querybuilder/paths_hashed.go) and fails
	// with FallbackCheck when it does not hold; the engine then runs
	// Fallback instead (olap.Engine.Query), so a failed check costs time,
	// never the answer.
	Fallback *Statement
}

// FallbackCheck is the message of a statement's own check (throwIf) that
// asks for its Fallback.
// It is written into the SQL as a literal, so it has no quote.
const FallbackCheck = "insightd: check failed, run the fallback statement"

// String renders the statement for logs and golden files: the SQL, then
// the parameters sorted by name.
func (s Statement) String() string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(s.SQL))
	b.WriteString("\n")
	if len(s.Settings) > 0 {
		b.WriteString("SETTINGS " + strings.Join(s.Settings, ", ") + "\n")
	}
	names := make([]string, 0, len(s.Params))
	for k := range s.Params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "-- %s = %#v\n", k, s.Params[k])
	}
	if s.Fallback != nil {
		b.WriteString("-- fallback:\n" + s.Fallback.String())
	}
	return b.String()
}

// Limits are the engine settings every analysis runs under, so a request
// cannot hold the engine longer or use more memory than the server
// allows, nor return a result no client can take in. They are the
// server's configuration.
type Limits struct {
	// MaxExecutionTime stops a query that runs longer (seconds; 0: none).
	MaxExecutionTime int
	// MaxMemoryUsage stops a query that needs more memory (bytes; 0: none).
	MaxMemoryUsage int64
	// MaxResultRows refuses a result with more rows (0: none).
	MaxResultRows int64
	// MaxRowsToRead refuses a statement that would read more rows from
	// its tables, every table and subquery counted (0: none).
	MaxRowsToRead int64
	// MaxRowsInJoin and MaxBytesInJoin refuse a statement whose join
	// would hold a larger table in memory (0: none): a self-join of the
	// events stops at its hash table, before it multiplies rows. The
	// engine counts a hash join's rows as its distinct keys.
	MaxRowsInJoin  int64
	MaxBytesInJoin int64
}

// DefaultLimits are the limits of a server configured with nothing else:
// a minute, 4 GiB and a million rows answered; a billion rows read and
// a join's table of 50 million rows or 2 GiB.
func DefaultLimits() Limits {
	return Limits{MaxExecutionTime: 60, MaxMemoryUsage: 4 << 30, MaxResultRows: 1_000_000,
		MaxRowsToRead: 1_000_000_000, MaxRowsInJoin: 50_000_000, MaxBytesInJoin: 2 << 30}
}

// WithLimits returns stmt with a SETTINGS clause applying the limits.
// They are the server's configuration, never request values, and
// ClickHouse takes settings only as literals.
func WithLimits(stmt Statement, l Limits) Statement {
	set := append([]string(nil), stmt.Settings...)
	stmt.Settings = nil
	if l.MaxExecutionTime > 0 {
		set = append(set, fmt.Sprintf("max_execution_time = %d", l.MaxExecutionTime))
	}
	if l.MaxMemoryUsage > 0 {
		// Group-by and sort state past half the budget spills to disk, so
		// a heavy breakdown slows down instead of failing.
		spill := l.MaxMemoryUsage / 2
		set = append(set, fmt.Sprintf("max_memory_usage = %d", l.MaxMemoryUsage),
			fmt.Sprintf("max_bytes_before_external_group_by = %d", spill),
			fmt.Sprintf("max_bytes_before_external_sort = %d", spill))
	}
	if l.MaxResultRows > 0 {
		set = append(set, fmt.Sprintf("max_result_rows = %d", l.MaxResultRows), "result_overflow_mode = 'throw'")
	}
	if l.MaxRowsToRead > 0 {
		set = append(set, fmt.Sprintf("max_rows_to_read = %d", l.MaxRowsToRead), "read_overflow_mode = 'throw'")
	}
	if l.MaxRowsInJoin > 0 {
		set = append(set, fmt.Sprintf("max_rows_in_join = %d", l.MaxRowsInJoin))
	}
	if l.MaxBytesInJoin > 0 {
		set = append(set, fmt.Sprintf("max_bytes_in_join = %d", l.MaxBytesInJoin))
	}
	if l.MaxRowsInJoin > 0 || l.MaxBytesInJoin > 0 {
		set = append(set, "join_overflow_mode = 'throw'")
	}
	if len(set) > 0 {
		stmt.SQL = strings.TrimSpace(stmt.SQL) + "\nSETTINGS " + strings.Join(set, ", ")
	}
	if stmt.Fallback != nil {
		fb := WithLimits(*stmt.Fallback, l)
		stmt.Fallback = &fb
	}
	return stmt
}
