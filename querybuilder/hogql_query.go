package querybuilder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/insightd/insightd/querybuilder/hogql"
)

// HogQL statements of the query API (HogQLQuery, EventsQuery): package
// hogql parses and prints them, the resolver here decides what they may
// read. Every scan of events or persons is a subquery of the project's
// rows (team_id bound), so nothing another project owns is reachable
// whatever the statement joins or nests; fields map to the columns an
// analysis reads (a hot property's materialized column, else
// JSONExtractString with a bound key, missing being NULL as in HogQL),
// person_id and person.properties through the identity mapping (merged
// persons' overrides, persons' current versions), and every other field
// and table is refused.

// Row limits of HogQL results: a statement without LIMIT answers
// HogQLDefaultLimit rows, a LIMIT above HogQLMaxLimit is lowered to it.
const (
	HogQLDefaultLimit = 100
	HogQLMaxLimit     = 50_000
)

// HogQLStatement is a compiled HogQL statement: it asks for one row past
// Limit, which tells the caller there are more.
type HogQLStatement struct {
	Statement
	Columns []string
	Limit   int
}

// hogqlEventFields are the event's own columns a statement may read.
var hogqlEventFields = map[string]string{
	"uuid": "uuid", "event": "event", "timestamp": "timestamp", "distinct_id": "distinct_id",
	"properties": "properties", "$session_id": "mat_session_id", "created_at": "created_at",
}

// hogqlResolver resolves one statement's fields and scans; scans records
// what each events scan (by alias) reads of its person.
type hogqlResolver struct {
	schema Schema
	scans  map[string]*personReads
	// cond, when set, is a condition over the events row e that the
	// statement's own events scan adds (an EventsQuery's event, range
	// and properties), not its subqueries'.
	cond scanCond
	// filters is the condition of a HogQLQuery's filters, which the
	// {filters} placeholder reads from the events scan of its select
	// (hogql_filters.go); nil when the statement has no filters.
	filters *hogqlFilters
}

// scanCond is such a condition and what it reads of the event's person:
// its person expressions are columns condPersonColumn0, 1... of the
// scan's person join, its person id the merged one.
type scanCond struct {
	sql   string
	reads *personReads
}

// condPersonColumn prefixes the person columns a scanCond reads, apart
// from those the statement's fields read (pp_0, pp_1...).
const condPersonColumn = "pc_"

// personReads is what an events scan reads of its event's person: the
// merged person id, and person-level expressions (pp_0, pp_1...);
// filters marks a scan that {filters} reads, which computes the
// filters' condition as a column of its own.
type personReads struct {
	id      bool
	cols    []string
	filters bool
}

func (r *hogqlResolver) scan(alias string) *personReads {
	if r.scans[alias] == nil {
		r.scans[alias] = &personReads{}
	}
	return r.scans[alias]
}

// Field implements hogql.Resolver.
func (r *hogqlResolver) Field(ref hogql.FieldRef, bind func(string, any) string) (string, error) {
	q, ch := ref.Alias+".", ref.Chain
	switch ref.Table {
	case "events":
		switch {
		case len(ch) == 1 && hogqlEventFields[ch[0]] != "":
			return q + hogqlEventFields[ch[0]], nil
		case len(ch) == 1 && ch[0] == "person_id", len(ch) == 2 && ch[0] == "person" && ch[1] == "id":
			r.scan(ref.Alias).id = true
			return q + "person_id", nil
		case len(ch) == 2 && ch[0] == "properties":
			if col, ok := materialized[ch[1]]; ok {
				return "nullIf(" + q + col + ", '')", nil
			}
			return "nullIf(JSONExtractString(" + q + "properties, " + bind("String", ch[1]) + "), '')", nil
		case len(ch) == 3 && ch[0] == "person" && ch[1] == "properties":
			s := r.scan(ref.Alias)
			s.id = true
			s.cols = append(s.cols, "JSONExtractString(properties, "+bind("String", ch[2])+")")
			return fmt.Sprintf("nullIf(%spp_%d, '')", q, len(s.cols)-1), nil
		}
	case "persons":
		switch {
		case len(ch) == 1 && (ch[0] == "id" || ch[0] == "properties" || ch[0] == "created_at"):
			return q + ch[0], nil
		case len(ch) == 2 && ch[0] == "properties":
			return "nullIf(JSONExtractString(" + q + "properties, " + bind("String", ch[1]) + "), '')", nil
		}
	}
	return "", &hogql.Error{Pos: -1, Msg: "field " + strings.Join(ch, ".") + " is not allowed; events have uuid, event, timestamp, " +
		"distinct_id, properties.<key>, $session_id, person_id and person.properties.<key>; persons have id, created_at and properties.<key>"}
}

// Table implements hogql.Resolver; Source is what the compiler calls.
func (r *hogqlResolver) Table(name string, bind func(string, any) string) (string, error) {
	return r.Source(hogql.Scan{Table: name}, bind)
}

// Source implements hogql.SourceResolver: the project's rows of table,
// with what the scan's fields read of persons joined.
func (r *hogqlResolver) Source(scan hogql.Scan, _ func(string, any) string) (string, error) {
	s, alias := r.schema.OrDefault(), scan.Alias
	// The narrowing is the statement's own scan's: a subquery the user
	// wrote reads every event it names.
	cond, condReads := "", &personReads{}
	if scan.Outermost {
		cond = r.cond.sql
		if r.cond.reads != nil {
			condReads = r.cond.reads
		}
	}
	switch scan.Table {
	case "events":
		cols := []string{"e.uuid AS uuid", "e.event AS event", "e.timestamp AS timestamp", "e.distinct_id AS distinct_id",
			"e.properties AS properties", "e.created_at AS created_at"}
		for _, col := range materializedColumns {
			cols = append(cols, "e."+col+" AS "+col)
		}
		reads := r.scans[alias]
		if reads == nil {
			reads = &personReads{}
		}
		filterReads := &personReads{}
		if reads.filters {
			cols = append(cols, r.filters.cond+" AS "+filtersColumn)
			filterReads = r.filters.reads
		}
		// Person columns by prefix: the fields', the scan condition's and
		// the filters'.
		groups := []struct {
			prefix string
			exprs  []string
		}{{"pp_", reads.cols}, {condPersonColumn, condReads.cols}, {filtersPersonColumn, filterReads.cols}}
		from := s.Events + " AS e"
		if reads.id || condReads.id || filterReads.id {
			cols = append(cols, EventPersonID+" AS person_id")
			from += "\n" + s.OverridesJoin("e")
			pcols := []string{"id"}
			for _, g := range groups {
				for i, expr := range g.exprs {
					pcols = append(pcols, fmt.Sprintf("argMax(%s, version) AS %s%d", expr, g.prefix, i))
				}
			}
			for i := range reads.cols {
				cols = append(cols, fmt.Sprintf("pp.pp_%d AS pp_%d", i, i))
			}
			if len(pcols) > 1 {
				from += "\nLEFT JOIN (\n    SELECT " + strings.Join(pcols, ", ") + "\n    FROM " + s.Persons +
					" WHERE team_id = {team:Int64}\n    GROUP BY id HAVING argMax(is_deleted, version) = 0\n) AS pp ON pp.id = " + EventPersonID
			}
		}
		return "(\n    SELECT " + strings.Join(cols, ", ") + "\n    FROM " + indent(from)[4:] + "\n    WHERE e.team_id = {team:Int64}" + cond + "\n)", nil
	case "persons":
		// The current versions are named apart from the columns they are
		// read from, which an alias of the same name would shadow.
		return "(\n    SELECT id, cur_properties AS properties, cur_created_at AS created_at FROM (\n" +
			"        SELECT id, argMax(properties, version) AS cur_properties, argMax(created_at, version) AS cur_created_at\n        FROM " +
			s.Persons + " WHERE team_id = {team:Int64}\n        GROUP BY id HAVING argMax(is_deleted, version) = 0\n    )\n)", nil
	}
	return "", &hogql.Error{Pos: -1, Msg: "table " + scan.Table + " is not allowed; query events or persons"}
}

// materializedColumns are the events' materialized columns in a fixed
// order.
var materializedColumns = []string{"mat_current_url", "mat_pathname", "mat_screen_name", "mat_session_id", "mat_browser",
	"mat_os", "mat_device_type", "mat_group_0", "mat_group_1", "mat_group_2", "mat_group_3", "mat_group_4"}

// BuildHogQL compiles a HogQLQuery's text with its placeholder values
// for project env.Project; refusals are *ValidationErrors naming attr.
func BuildHogQL(text string, values map[string]any, env Env, attr string) (HogQLStatement, error) {
	return buildHogQL(text, values, env, attr, nil)
}

// buildHogQL is BuildHogQL with the statement's filters, which
// {filters} reads (nil: {filters} is a value like any other).
func buildHogQL(text string, values map[string]any, env Env, attr string, filters *hogqlFilters) (HogQLStatement, error) {
	s, err := hogql.ParseSelect(text)
	if err != nil {
		return HogQLStatement{}, &ValidationError{Attr: attr, Detail: hogqlMessage(err)}
	}
	b := newBinder()
	b.named("team", "Int64", env.Project.ID)
	if filters != nil {
		b.named("tz", "String", filters.common.clock.loc.String())
	}
	return compileHogQL(s, values, env, attr, b, scanCond{}, filters)
}

// compileHogQL limits and compiles a parsed select.
// Every value is bound by b, which holds {team}; cond is added to the
// statement's own events scan ("" for none, else starting with AND);
// filters, when not nil, fill {filters}.
func compileHogQL(s *hogql.Select, values map[string]any, env Env, attr string, b *binder, cond scanCond, filters *hogqlFilters) (HogQLStatement, error) {
	// One row past the limit tells that there are more. In a union each
	// part's LIMIT is its own (ClickHouse's reading): the union is read
	// through a select of its own, under the default limit.
	limit := HogQLDefaultLimit
	union := len(s.UnionAll) > 0
	if s.Limit != nil && !union {
		n, err := limitValue(s.Limit, values)
		if err != nil {
			return HogQLStatement{}, &ValidationError{Attr: attr, Detail: err.Error()}
		}
		limit = int(min(n, HogQLMaxLimit))
	}
	if !union {
		s.Limit = &hogql.Constant{Value: int64(limit + 1)}
	}
	r := &hogqlResolver{schema: env.Schema.OrDefault(), scans: map[string]*personReads{}, cond: cond, filters: filters}
	c := &hogql.Compiler{Resolver: r, Bind: b.bind, Placeholders: values, Aggregates: true}
	if filters != nil {
		c.Filters = r.Filters(b)
	}
	out, err := hogql.CompileSelect(s, c)
	if err != nil {
		return HogQLStatement{}, &ValidationError{Attr: attr, Detail: hogqlMessage(err)}
	}
	if union {
		out.SQL = "SELECT *\nFROM (\n" + indent(out.SQL) + "\n)\nLIMIT " + b.bind("UInt64", uint64(limit+1))
	}
	// Every events scan the text names compiles to a subquery of its
	// own: a short text can compile past what the engine parses
	// (max_query_size, 256 KiB by default), which it would refuse as a
	// syntax error of a statement the client never saw.
	if len(out.SQL) > hogqlMaxSQL {
		return HogQLStatement{}, &ValidationError{Attr: attr, Detail: fmt.Sprintf(
			"the query compiles to %d KiB of SQL, more than the %d KiB the engine takes: read events in fewer subqueries", len(out.SQL)>>10, hogqlMaxSQL>>10)}
	}
	return HogQLStatement{Statement: Statement{SQL: out.SQL, Params: b.params}, Columns: out.Columns, Limit: limit}, nil
}

// hogqlMaxSQL bounds a compiled HogQL statement's text, below the
// engine's default max_query_size (262 144 bytes) with room for the
// SETTINGS clause the limits add.
const hogqlMaxSQL = 240 << 10

// limitValue is a LIMIT's number: a literal or a placeholder's value.
func limitValue(x hogql.Expr, values map[string]any) (int64, error) {
	var v any
	switch e := x.(type) {
	case *hogql.Constant:
		v = e.Value
	case *hogql.Placeholder:
		v = values[e.Name]
	}
	switch n := v.(type) {
	case int64:
		if n >= 0 {
			return n, nil
		}
	case int:
		if n >= 0 {
			return int64(n), nil
		}
	}
	return 0, fmt.Errorf("LIMIT must be a non-negative integer")
}

// HogQLValues reads a HogQLQuery's values: JSON numbers as int64 when
// integral, else float64; strings, booleans and lists as they are.
func HogQLValues(raw json.RawMessage, attr string) (map[string]any, error) {
	if isNull(raw) {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if d.Decode(&m) != nil {
		return nil, &ValidationError{Attr: attr, Detail: attr + " must be an object of placeholder values"}
	}
	var conv func(any) any
	conv = func(v any) any {
		switch x := v.(type) {
		case json.Number:
			if i, err := x.Int64(); err == nil {
				return i
			}
			f, _ := x.Float64()
			return f
		case []any:
			for i := range x {
				x[i] = conv(x[i])
			}
		}
		return v
	}
	for k, v := range m {
		m[k] = conv(v)
	}
	return m, nil
}
