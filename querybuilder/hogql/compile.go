package hogql

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// FieldRef is a field for the resolver to map: its chain of names
// (properties, $browser) read from a table of the query (Table, as the
// resolver's Table accepted it; "" for the caller's own row, as in an
// expression breakdown), qualified in SQL by Alias ("" for the caller's
// row).
type FieldRef struct {
	Table string
	Alias string
	Chain []string
}

// Resolver maps what the schema decides: fields to SQL over a row, and
// table names to the SQL of a source (with the project's isolation in
// it). Values it binds go through the bind function it is given, so its
// SQL carries no literal either. An error refuses the field or table; a
// *Error keeps its message, any other error's text is used as the
// message.
type Resolver interface {
	Field(ref FieldRef, bind func(typ string, v any) string) (string, error)
	Table(name string, bind func(typ string, v any) string) (string, error)
}

// SourceResolver is a Resolver that writes each scan of a table knowing
// the alias its fields were resolved under (FieldRef.Alias), so a scan
// joins only what the fields read through it need. The compiler calls
// Source instead of Table when the Resolver has it.
type SourceResolver interface {
	Source(scan Scan, bind func(typ string, v any) string) (string, error)
}

// Scan is one scan of a table in a statement.
type Scan struct {
	Table string
	Alias string // the alias its fields were resolved under
	// Outermost is a scan in the FROM or a join of the statement itself
	// (or of a part of its UNION ALL), not of a CTE or a subquery.
	Outermost bool
}

// Compiler prints an AST as ClickHouse SQL. Every literal and
// placeholder value becomes a bound parameter; functions come from the
// allow-list; fields and tables from the Resolver; aliases, lambda
// parameters and CTE names are renamed to generated names, so no text of
// the input reaches the SQL.
type Compiler struct {
	Resolver Resolver
	// Bind binds a value and returns its placeholder; nil numbers the
	// compiler's own parameters hq0, hq1...
	Bind func(typ string, v any) string
	// Placeholders are the values of {name} placeholders.
	Placeholders map[string]any
	// Filters, when set, compiles the {filters} placeholder (PostHog's
	// HogQLQuery.filters): a condition over a row of the tables the
	// select holding it reads directly (its FROM and joins, not their
	// subqueries), given in order as FieldRefs without a chain. Without
	// it {filters} is a value of Placeholders like any other.
	Filters func(tables []FieldRef) (string, error)
	// Aggregates allows aggregate functions (SELECT statements); an
	// expression over one event has none.
	Aggregates bool
	// Only, when not nil, narrows the allow-list to these functions
	// (case-insensitive), and refuses lambdas, subqueries and
	// placeholders: the expression breakdown subset.
	Only []string

	params map[string]any
	seen   map[string]string
	gen    map[string]int
}

// Params are the values the compiler bound itself (Bind nil).
func (c *Compiler) Params() map[string]any {
	if c.params == nil {
		return map[string]any{}
	}
	return c.params
}

func (c *Compiler) bind(typ string, v any) string {
	if c.Bind != nil {
		return c.Bind(typ, v)
	}
	if c.params == nil {
		c.params, c.seen = map[string]any{}, map[string]string{}
	}
	key := typ + "\x00" + fmt.Sprintf("%T:%#v", v, v)
	if name, ok := c.seen[key]; ok {
		return "{" + name + ":" + typ + "}"
	}
	name := fmt.Sprintf("hq%d", len(c.params))
	c.seen[key] = name
	c.params[name] = v
	return "{" + name + ":" + typ + "}"
}

// name generates a name of kind (col, t, x, cte) that holds no text of
// the input and no digit: hq_col_a, hq_col_b, ... hq_col_ba.
func (c *Compiler) name(kind string) string {
	if c.gen == nil {
		c.gen = map[string]int{}
	}
	n := c.gen[kind]
	c.gen[kind]++
	s := ""
	for {
		s = string(rune('a'+n%26)) + s
		n /= 26
		if n == 0 {
			break
		}
		n--
	}
	return "hq_" + kind + "_" + s
}

// scope is what names mean where an expression is compiled: the
// lambda parameters around it (innermost first through parent) and its
// select's names.
type scope struct {
	parent *scope
	lambda map[string]string
	sel    *selScope
}

// selScope is a select's names: column aliases, sources, CTEs, and the
// enclosing select's (CTEs are visible in subqueries).
type selScope struct {
	parent  *selScope
	aliases map[string]string
	sources []*source
	ctes    map[string]*source
}

// source is a table or subquery in FROM: its name in the query (alias,
// else table or CTE name), its SQL alias, the table name for the
// resolver ("" for subqueries), and a subquery's columns by name.
type source struct {
	name, alias, table string
	columns            map[string]string
}

func (s *scope) lookupLambda(n string) (string, bool) {
	for sc := s; sc != nil; sc = sc.parent {
		if g, ok := sc.lambda[n]; ok {
			return g, true
		}
	}
	return "", false
}

func (s *selScope) cte(n string) *source {
	for sc := s; sc != nil; sc = sc.parent {
		if c, ok := sc.ctes[n]; ok {
			return c
		}
	}
	return nil
}

// CompileExpr compiles an expression from ParseExpr with the compiler's
// own parameters: the SQL and the values it binds.
func CompileExpr(e Expr, c *Compiler) (string, map[string]any, error) {
	sql, err := c.Expr(e)
	if err != nil {
		return "", nil, err
	}
	return sql, c.Params(), nil
}

// Expr compiles an expression over the caller's row.
func (c *Compiler) Expr(e Expr) (string, error) {
	return c.expr(e, &scope{sel: &selScope{sources: []*source{{}}}})
}

func (c *Compiler) allowed(name string) bool {
	if c.Only == nil {
		return true
	}
	for _, n := range c.Only {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

func (c *Compiler) expr(e Expr, sc *scope) (string, error) {
	switch x := e.(type) {
	case *Constant:
		return c.constant(x)
	case *Field:
		return c.field(x, sc)
	case *Call:
		return c.call(x, sc)
	case *Binary:
		l, err := c.operand(x, x.Left, x.Right, sc)
		if err != nil {
			return "", err
		}
		r, err := c.operand(x, x.Right, x.Left, sc)
		if err != nil {
			return "", err
		}
		switch x.Op {
		case "=~":
			return "match(" + l + ", " + r + ")", nil
		case "!~":
			return "(NOT match(" + l + ", " + r + "))", nil
		case "||":
			return "concat(" + l + ", " + r + ")", nil
		}
		return "(" + l + " " + x.Op + " " + r + ")", nil
	case *Logic:
		parts := make([]string, len(x.Items))
		for i, it := range x.Items {
			s, err := c.expr(it, sc)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "(" + strings.Join(parts, " "+x.Op+" ") + ")", nil
	case *Unary:
		s, err := c.expr(x.X, sc)
		if err != nil {
			return "", err
		}
		if x.Op == "NOT" {
			return "(NOT " + s + ")", nil
		}
		return "(-" + s + ")", nil
	case *In:
		return c.in(x, sc)
	case *Between:
		parts, err := c.exprs([]Expr{x.X, x.Lo, x.Hi}, sc)
		if err != nil {
			return "", err
		}
		op := " BETWEEN "
		if x.Not {
			op = " NOT BETWEEN "
		}
		return "(" + parts[0] + op + parts[1] + " AND " + parts[2] + ")", nil
	case *IsNull:
		s, err := c.expr(x.X, sc)
		if err != nil {
			return "", err
		}
		if x.Not {
			return "(" + s + " IS NOT NULL)", nil
		}
		return "(" + s + " IS NULL)", nil
	case *Case:
		return c.caseExpr(x, sc)
	case *Array:
		if c.Only != nil {
			return "", errorf(x.At, "arrays are not allowed here")
		}
		items, err := c.exprs(x.Items, sc)
		if err != nil {
			return "", err
		}
		return "[" + strings.Join(items, ", ") + "]", nil
	case *Tuple:
		items, err := c.exprs(x.Items, sc)
		if err != nil {
			return "", err
		}
		return "tuple(" + strings.Join(items, ", ") + ")", nil
	case *Index:
		if c.Only != nil {
			return "", errorf(x.At, "indexing is not allowed here")
		}
		parts, err := c.exprs([]Expr{x.X, x.Index}, sc)
		if err != nil {
			return "", err
		}
		return "arrayElement(" + parts[0] + ", " + parts[1] + ")", nil
	case *Lambda:
		return "", errorf(x.At, "a lambda is only allowed as an argument of an array function")
	case *Interval:
		n, err := c.expr(x.N, sc)
		if err != nil {
			return "", err
		}
		return intervalFunctions[x.Unit] + "(" + n + ")", nil
	case *Placeholder:
		if x.Name == "filters" && c.Filters != nil && c.Only == nil {
			return c.filters(x, sc)
		}
		return c.placeholder(x)
	case *Star:
		return "", errorf(x.At, "* is only allowed in count(*)")
	case *Subquery:
		if c.Only != nil {
			return "", errorf(x.At, "subqueries are not allowed here")
		}
		s, err := c.selectUnion(x.Query, sc)
		if err != nil {
			return "", err
		}
		return "(" + s + ")", nil
	case *Alias:
		return "", errorf(x.At, "AS is only allowed after a selected column")
	}
	return "", errorf(e.Pos(), "unsupported expression")
}

// numericOps compare or compute numbers.
var numericOps = map[string]bool{"=": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true,
	"+": true, "-": true, "*": true, "/": true, "%": true}

// operand compiles one side of a binary operator. Properties are text
// and the engine refuses to compare text with a number (no supertype),
// so a field of the schema compared with or computed with a number
// literal is read as a number: NULL when it is not one, as HogQL's
// toFloat gives.
func (c *Compiler) operand(b *Binary, side, other Expr, sc *scope) (string, error) {
	s, err := c.expr(side, sc)
	if err != nil || !numericOps[b.Op] {
		return s, err
	}
	f, isField := side.(*Field)
	k, isConst := other.(*Constant)
	if !isField || !isConst {
		return s, err
	}
	switch k.Value.(type) {
	case int64, uint64, float64:
	default:
		return s, nil
	}
	if len(f.Chain) == 1 {
		if _, ok := sc.lookupLambda(f.Chain[0]); ok {
			return s, nil
		}
		if _, ok := sc.sel.aliases[f.Chain[0]]; ok {
			return s, nil
		}
	}
	return "toFloat64OrNull(toString(" + s + "))", nil
}

func (c *Compiler) exprs(list []Expr, sc *scope) ([]string, error) {
	out := make([]string, len(list))
	for i, e := range list {
		s, err := c.expr(e, sc)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// constant binds a literal; NULL and booleans are keywords.
func (c *Compiler) constant(x *Constant) (string, error) {
	switch v := x.Value.(type) {
	case nil:
		return "NULL", nil
	case bool:
		if v {
			return "true", nil
		}
		return "false", nil
	case int64:
		return c.bind("Int64", v), nil
	case uint64:
		return c.bind("UInt64", v), nil
	case float64:
		return c.bind("Float64", v), nil
	case string:
		return c.bind("String", v), nil
	}
	return "", errorf(x.At, "unsupported literal")
}

// placeholder binds a caller's value by its Go type.
func (c *Compiler) placeholder(x *Placeholder) (string, error) {
	if c.Only != nil {
		return "", errorf(x.At, "placeholders are not allowed here")
	}
	v, ok := c.Placeholders[x.Name]
	if !ok {
		return "", errorf(x.At, "placeholder {%s} has no value", clip(x.Name))
	}
	switch n := v.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			v = i
		} else if f, err := n.Float64(); err == nil && !math.IsInf(f, 0) {
			v = f
		} else {
			return "", errorf(x.At, "placeholder {%s} is not a number", clip(x.Name))
		}
	case int:
		v = int64(n)
	}
	switch v.(type) {
	case nil, bool, int64, float64, string:
		return c.constant(&Constant{At: x.At, Value: v})
	}
	return "", errorf(x.At, "placeholder {%s} must be a string, number, boolean or null", clip(x.Name))
}

// filters compiles {filters} over the tables of the select around it.
func (c *Compiler) filters(x *Placeholder, sc *scope) (string, error) {
	var tables []FieldRef
	for _, s := range sc.sel.sources {
		if s.table != "" {
			tables = append(tables, FieldRef{Table: s.table, Alias: s.alias})
		}
	}
	sql, err := c.Filters(tables)
	if err != nil {
		return "", asError(err, x.At)
	}
	return sql, nil
}

// field resolves a name: a lambda parameter, a column alias, a field of a
// source.
func (c *Compiler) field(x *Field, sc *scope) (string, error) {
	if len(x.Chain) == 1 {
		if g, ok := sc.lookupLambda(x.Chain[0]); ok {
			return g, nil
		}
		if g, ok := sc.sel.aliases[x.Chain[0]]; ok {
			return g, nil
		}
	}
	if len(sc.sel.sources) == 0 {
		return "", errorf(x.At, "field %s needs a FROM clause", clip(strings.Join(x.Chain, ".")))
	}
	src, chain := sc.sel.sources[0], x.Chain
	if len(chain) > 1 {
		for _, s := range sc.sel.sources {
			if s.name != "" && s.name == chain[0] {
				src, chain = s, chain[1:]
				break
			}
		}
	}
	if src.columns != nil {
		if g, ok := src.columns[strings.Join(chain, ".")]; ok {
			return src.alias + "." + g, nil
		}
		return "", errorf(x.At, "field %s is not a column of the subquery", clip(strings.Join(x.Chain, ".")))
	}
	if c.Resolver == nil {
		return "", errorf(x.At, "field %s is not allowed", clip(strings.Join(x.Chain, ".")))
	}
	s, err := c.Resolver.Field(FieldRef{Table: src.table, Alias: src.alias, Chain: chain}, c.bind)
	if err != nil {
		return "", asError(err, x.At)
	}
	return s, nil
}

// asError keeps a resolver's *Error, placing it at pos, or wraps its text.
func asError(err error, pos int) *Error {
	if e, ok := err.(*Error); ok {
		if e.Pos < 0 {
			return &Error{Pos: pos, Msg: e.Msg}
		}
		return e
	}
	return &Error{Pos: pos, Msg: err.Error()}
}

// in is x [NOT] IN a list, a subquery, or an array expression (has).
func (c *Compiler) in(x *In, sc *scope) (string, error) {
	l, err := c.expr(x.X, sc)
	if err != nil {
		return "", err
	}
	op := " IN "
	if x.Not {
		op = " NOT IN "
	}
	switch set := x.Set.(type) {
	case *Tuple:
		items, err := c.exprs(set.Items, sc)
		if err != nil {
			return "", err
		}
		return "(" + l + op + "(" + strings.Join(items, ", ") + "))", nil
	case *Subquery:
		s, err := c.expr(set, sc)
		if err != nil {
			return "", err
		}
		return "(" + l + op + s + ")", nil
	}
	r, err := c.expr(x.Set, sc)
	if err != nil {
		return "", err
	}
	if x.Not {
		return "(NOT has(" + r + ", " + l + "))", nil
	}
	return "has(" + r + ", " + l + ")", nil
}
