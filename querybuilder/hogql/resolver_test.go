package hogql

import (
	"strings"
	"testing"
)

// testResolver maps the fields and tables of a small events schema, the
// way querybuilder does: its SQL is made of fixed names and bound values.
type testResolver struct{}

func (testResolver) Field(ref FieldRef, bind func(typ string, v any) string) (string, error) {
	q := "e."
	if ref.Alias != "" {
		q = ref.Alias + "."
	}
	ch := ref.Chain
	switch {
	case ref.Table == "persons" && len(ch) == 1 && ch[0] == "id":
		return q + "id", nil
	case ref.Table == "persons" && len(ch) == 2 && ch[0] == "properties":
		return "JSONExtractString(" + q + "properties, " + bind("String", ch[1]) + ")", nil
	case ref.Table == "persons":
	case len(ch) == 1 && (ch[0] == "event" || ch[0] == "timestamp" || ch[0] == "distinct_id" || ch[0] == "person_id"):
		return q + ch[0], nil
	case len(ch) == 1 && ch[0] == "$session_id":
		return q + "mat_session_id", nil
	case len(ch) == 2 && ch[0] == "properties":
		if ch[1] == "$browser" {
			return q + "mat_browser", nil
		}
		return "JSONExtractString(" + q + "properties, " + bind("String", ch[1]) + ")", nil
	case len(ch) == 3 && ch[0] == "person" && ch[1] == "properties":
		return "JSONExtractString(pp.properties, " + bind("String", ch[2]) + ")", nil
	}
	return "", &Error{Pos: -1, Msg: "field " + strings.Join(ch, ".") + " is not allowed"}
}

func (testResolver) Table(name string, bind func(typ string, v any) string) (string, error) {
	switch name {
	case "events", "persons":
		return "(SELECT * FROM " + name + " WHERE team_id = {team:Int64})", nil
	}
	return "", &Error{Pos: -1, Msg: "table " + name + " is not allowed"}
}

// resolverWords are the identifiers testResolver writes.
var resolverWords = []string{"e", "event", "timestamp", "distinct_id", "person_id", "mat_session_id", "mat_browser",
	"properties", "JSONExtractString", "pp", "id", "SELECT", "FROM", "events", "persons", "WHERE", "team_id", "team", "Int64"}

// sourceResolver is testResolver writing each scan with its alias.
type sourceResolver struct {
	testResolver
	seen      map[string]string
	outermost []string
}

func (r *sourceResolver) Source(scan Scan, _ func(string, any) string) (string, error) {
	r.seen[scan.Alias] = scan.Table
	if scan.Outermost {
		r.outermost = append(r.outermost, scan.Alias)
	}
	return "(SELECT * FROM " + scan.Table + " WHERE team_id = {team:Int64} AND " + scan.Alias + "_scan = 1)", nil
}

// A SourceResolver is asked for each scan with the alias its fields were
// resolved under, subqueries' scans included.
func TestSourceResolverSeesEachScansAlias(t *testing.T) {
	s, err := ParseSelect(`SELECT event FROM events WHERE event IN (SELECT event FROM events AS x)`)
	if err != nil {
		t.Fatal(err)
	}
	r := &sourceResolver{seen: map[string]string{}}
	out, err := CompileSelect(s, &Compiler{Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.seen) != 2 {
		t.Fatalf("want two scans, got %v", r.seen)
	}
	for alias := range r.seen {
		if !strings.Contains(out.SQL, alias+"_scan = 1) AS "+alias) || !strings.Contains(out.SQL, alias+".event") {
			t.Errorf("scan %s: %s", alias, out.SQL)
		}
	}
}

// Only the statement's own FROM and joins (and its UNION ALL parts') are
// outermost scans; CTEs and subqueries anywhere are not.
func TestSourceResolverTellsTheOutermostScans(t *testing.T) {
	for _, tc := range []struct {
		query     string
		scans     int
		outermost int
	}{
		{`SELECT event FROM events`, 1, 1},
		{`SELECT event FROM events WHERE event IN (SELECT event FROM events AS x)`, 2, 1},
		{`SELECT (SELECT event FROM events AS x LIMIT 1), event FROM events`, 2, 1},
		{`SELECT s.event FROM (SELECT event FROM events) AS s`, 1, 0},
		{`WITH c AS (SELECT event FROM events) SELECT a.event FROM events AS a JOIN c ON a.event = c.event`, 2, 1},
		{`SELECT a.event FROM events AS a JOIN persons AS p ON a.person_id = p.id`, 2, 2},
		{`SELECT event FROM events UNION ALL SELECT event FROM events AS x WHERE event IN (SELECT event FROM events AS y)`, 3, 2},
	} {
		t.Run(tc.query, func(t *testing.T) {
			s, err := ParseSelect(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			r := &sourceResolver{seen: map[string]string{}}
			if _, err := CompileSelect(s, &Compiler{Resolver: r}); err != nil {
				t.Fatal(err)
			}
			if len(r.seen) != tc.scans || len(r.outermost) != tc.outermost {
				t.Errorf("scans %v, outermost %v; want %d and %d", r.seen, r.outermost, tc.scans, tc.outermost)
			}
		})
	}
}
