package hogql

import (
	"fmt"
	"strings"
	"testing"
)

// {filters} goes to the Filters hook with the tables of the select it
// is in (not of its subqueries), wherever it stands; without a hook it
// is a placeholder like any other.
func TestFiltersPlaceholderNamesTheTablesOfItsSelect(t *testing.T) {
	var calls []string
	c := &Compiler{Resolver: testResolver{}, Aggregates: true, Filters: func(tables []FieldRef) (string, error) {
		calls = append(calls, fmt.Sprint(tables))
		if len(tables) == 0 {
			return "", &Error{Pos: -1, Msg: "no table"}
		}
		return tables[0].Alias + ".f", nil
	}}
	s, err := ParseSelect(`SELECT countIf({filters}) FROM events AS a JOIN persons AS b ON a.person_id = b.id ` +
		`WHERE {filters} AND a.event IN (SELECT p.id FROM persons AS p WHERE {filters})`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := CompileSelect(s, c)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(calls) != "[[{events hq_t_a []} {persons hq_t_b []}] [{events hq_t_a []} {persons hq_t_b []}] [{persons hq_t_c []}]]" {
		t.Fatalf("calls %v", calls)
	}
	if strings.Count(out.SQL, "hq_t_a.f") != 2 || !strings.Contains(out.SQL, "hq_t_c.f") {
		t.Fatalf("%s", out.SQL)
	}
	s, _ = ParseSelect(`SELECT {filters}`)
	if _, err := CompileSelect(s, c); err == nil || !strings.Contains(err.Error(), "no table") {
		t.Fatalf("a select without tables: %v", err)
	}
	c.Filters = nil
	if _, err := CompileSelect(s, c); err == nil || !strings.Contains(err.Error(), "has no value") {
		t.Fatalf("without a hook: %v", err)
	}
}
