package hogql

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Compiled is a compiled statement: its SQL, the values the compiler
// bound (empty when the caller's Bind bound them), and the result's
// column names as the query named them.
type Compiled struct {
	SQL     string
	Params  map[string]any
	Columns []string
}

// CompileSelect compiles a statement from ParseSelect.
func CompileSelect(s *Select, c *Compiler) (Compiled, error) {
	sql, cols, err := c.selectParts(s, nil)
	if err != nil {
		return Compiled{}, err
	}
	return Compiled{SQL: sql, Params: c.Params(), Columns: cols.names}, nil
}

// columns are a compiled select's result columns: names in order, and
// the generated SQL name of each by its query name (for the selects
// reading it as a subquery or CTE).
type columns struct {
	names []string
	gen   map[string]string
}

// selectUnion compiles a statement in an expression (IN, scalar
// subquery).
func (c *Compiler) selectUnion(s *Select, outer *scope) (string, error) {
	sql, _, err := c.selectParts(s, outer)
	return sql, err
}

func (c *Compiler) selectParts(s *Select, outer *scope) (string, columns, error) {
	var parent *selScope
	if outer != nil {
		parent = outer.sel
	}
	sql, cols, err := c.selectOne(s, parent)
	if err != nil {
		return "", columns{}, err
	}
	parts := []string{sql}
	for _, u := range s.UnionAll {
		s2, cols2, err := c.selectOne(u, parent)
		if err != nil {
			return "", columns{}, err
		}
		if len(cols2.names) != len(cols.names) {
			return "", columns{}, errorf(u.At, "UNION ALL parts select %d and %d columns", len(cols.names), len(cols2.names))
		}
		// Every part names its columns as the first does.
		parts = append(parts, s2)
	}
	if len(parts) == 1 {
		return sql, cols, nil
	}
	return strings.Join(parts, "\nUNION ALL\n"), cols, nil
}

// selectOne compiles one SELECT. Its FROM sources are registered first
// (so fields know their tables), their SQL is written last (so the
// resolver has seen every field the statement reads).
func (c *Compiler) selectOne(s *Select, parent *selScope) (string, columns, error) {
	if c.Only != nil {
		return "", columns{}, errorf(s.At, "subqueries are not allowed here")
	}
	sel := &selScope{parent: parent, aliases: map[string]string{}, ctes: map[string]*source{}}
	sc := &scope{sel: sel}
	var with []string
	for _, cte := range s.With {
		inner := &scope{sel: sel}
		q, cols, err := c.selectParts(cte.Query, inner)
		if err != nil {
			return "", columns{}, err
		}
		if _, dup := sel.ctes[cte.Name]; dup {
			return "", columns{}, errorf(cte.At, "WITH %s is defined twice", clip(cte.Name))
		}
		g := c.name("cte")
		sel.ctes[cte.Name] = &source{name: cte.Name, alias: g, columns: cols.gen}
		with = append(with, g+" AS (\n"+indent(q)+"\n)")
	}
	// Sources: the FROM's, then each join's.
	var from []string // each source's SQL, tables filled in last
	var tables []int
	if s.From != nil {
		add := func(at int, table []string, sub *Select, alias string) error {
			src := &source{name: alias, alias: c.name("t")}
			switch {
			case sub != nil:
				q, cols, err := c.selectParts(sub, sc)
				if err != nil {
					return err
				}
				src.columns = cols.gen
				from = append(from, "(\n"+indent(q)+"\n) AS "+src.alias)
			case len(table) > 1:
				return errorf(at, "table %s is not allowed", clip(strings.Join(table, ".")))
			case sel.cte(table[0]) != nil:
				cte := sel.cte(table[0])
				src.columns = cte.columns
				from = append(from, cte.alias+" AS "+src.alias)
			default:
				src.table = table[0]
				tables = append(tables, len(from))
				from = append(from, "")
			}
			if src.name == "" && len(table) == 1 {
				src.name = table[0]
			}
			sel.sources = append(sel.sources, src)
			return nil
		}
		if err := add(s.From.At, s.From.Table, s.From.Subquery, s.From.Alias); err != nil {
			return "", columns{}, err
		}
		for _, j := range s.From.Joins {
			if err := add(j.At, j.Table, j.Subquery, j.Alias); err != nil {
				return "", columns{}, err
			}
		}
	}
	// Columns, each renamed; explicit aliases are visible to the other
	// clauses.
	cols := columns{gen: map[string]string{}}
	var out []string
	type col struct {
		x         Expr
		name, gen string
	}
	var list []col
	for i, x := range s.Columns {
		cl := col{x: x, gen: c.name("col")}
		switch v := x.(type) {
		case *Alias:
			cl.x, cl.name = v.X, v.Name
			if _, dup := sel.aliases[v.Name]; dup {
				return "", columns{}, errorf(v.At, "alias %s is used twice", clip(v.Name))
			}
			sel.aliases[v.Name] = cl.gen
		case *Field:
			cl.name = v.Chain[len(v.Chain)-1]
		case *Call:
			cl.name = v.Name
		default:
			cl.name = "column" + strconv.Itoa(i+1)
		}
		if _, star := cl.x.(*Star); star {
			return "", columns{}, errorf(x.Pos(), "SELECT * is not supported; name the columns")
		}
		list = append(list, cl)
	}
	colScope := &scope{sel: &selScope{parent: sel.parent, sources: sel.sources, ctes: sel.ctes}}
	for _, cl := range list {
		s, err := c.expr(cl.x, colScope)
		if err != nil {
			return "", columns{}, err
		}
		out = append(out, s+" AS "+cl.gen)
		cols.names = append(cols.names, cl.name)
		if _, dup := cols.gen[cl.name]; !dup {
			cols.gen[cl.name] = cl.gen
		}
	}
	var sql strings.Builder
	if len(with) > 0 {
		sql.WriteString("WITH " + strings.Join(with, ",\n") + "\n")
	}
	sql.WriteString("SELECT ")
	if s.Distinct {
		sql.WriteString("DISTINCT ")
	}
	sql.WriteString(strings.Join(out, ", "))
	var tail strings.Builder
	if s.Where != nil {
		w, err := c.expr(s.Where, sc)
		if err != nil {
			return "", columns{}, err
		}
		tail.WriteString("\nWHERE " + w)
	}
	if len(s.GroupBy) > 0 {
		g, err := c.exprs(s.GroupBy, sc)
		if err != nil {
			return "", columns{}, err
		}
		tail.WriteString("\nGROUP BY " + strings.Join(g, ", "))
	}
	if s.Having != nil {
		h, err := c.expr(s.Having, sc)
		if err != nil {
			return "", columns{}, err
		}
		tail.WriteString("\nHAVING " + h)
	}
	if len(s.OrderBy) > 0 {
		var keys []string
		for _, o := range s.OrderBy {
			k, err := c.expr(o.X, sc)
			if err != nil {
				return "", columns{}, err
			}
			if o.Desc {
				k += " DESC"
			}
			keys = append(keys, k)
		}
		tail.WriteString("\nORDER BY " + strings.Join(keys, ", "))
	}
	for _, lim := range []struct {
		kw string
		x  Expr
	}{{"LIMIT", s.Limit}, {"OFFSET", s.Offset}} {
		if lim.x == nil {
			continue
		}
		n, err := c.count(lim.kw, lim.x)
		if err != nil {
			return "", columns{}, err
		}
		tail.WriteString("\n" + lim.kw + " " + n)
	}
	// The join conditions, then the tables' SQL, now that every field
	// the statement reads has been resolved.
	var ons []string
	if s.From != nil {
		for _, j := range s.From.Joins {
			on, err := c.expr(j.On, sc)
			if err != nil {
				return "", columns{}, err
			}
			ons = append(ons, on)
		}
		if len(tables) > 0 && c.Resolver == nil {
			return "", columns{}, errorf(s.From.At, "table %s is not allowed", clip(sel.sources[tables[0]].table))
		}
		for _, i := range tables {
			src := sel.sources[i]
			var t string
			var err error
			if sr, ok := c.Resolver.(SourceResolver); ok {
				t, err = sr.Source(Scan{Table: src.table, Alias: src.alias, Outermost: parent == nil}, c.bind)
			} else {
				t, err = c.Resolver.Table(src.table, c.bind)
			}
			if err != nil {
				return "", columns{}, asError(err, s.From.At)
			}
			from[i] = t + " AS " + src.alias
		}
		sql.WriteString("\nFROM " + from[0])
		for i, j := range s.From.Joins {
			sql.WriteString("\n" + j.Kind + " JOIN " + from[i+1] + " ON " + ons[i])
		}
	}
	sql.WriteString(tail.String())
	return sql.String(), cols, nil
}

// count is a LIMIT or OFFSET: a non-negative integer literal or
// placeholder, bound.
func (c *Compiler) count(kw string, x Expr) (string, error) {
	var v any
	switch e := x.(type) {
	case *Constant:
		v = e.Value
	case *Placeholder:
		pv, ok := c.Placeholders[e.Name]
		if !ok {
			return "", errorf(e.At, "placeholder {%s} has no value", clip(e.Name))
		}
		switch n := pv.(type) {
		case int:
			v = int64(n)
		case int64:
			v = n
		case json.Number:
			v, _ = n.Int64()
		}
	}
	n, ok := v.(int64)
	if !ok || n < 0 {
		return "", errorf(x.Pos(), "%s must be a non-negative integer", kw)
	}
	return c.bind("UInt64", uint64(n)), nil
}

// indent shifts a subquery right.
func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
