package hogql

// Expr is an expression node. Every node records the byte offset it
// starts at, for errors.
type Expr interface {
	Pos() int
}

// Constant is a literal: nil (NULL), bool, int64, uint64 (integers past
// int64), float64 or string.
type Constant struct {
	At    int
	Value any
}

// Field is a name or a dotted chain of names: event,
// properties.$browser, person.properties.email, or an alias.
type Field struct {
	At    int
	Chain []string
}

// Call is a function call; Params holds a parametric function's first
// argument list (quantile(0.9)(x): Params [0.9], Args [x]).
type Call struct {
	At       int
	Name     string
	Params   []Expr
	Args     []Expr
	Distinct bool
}

// Binary is an infix operator: arithmetic (+ - * / %), concatenation
// (||), comparison (= != < <= > >=), LIKE, ILIKE, NOT LIKE, NOT ILIKE,
// regular expression match (=~ !~).
type Binary struct {
	At          int
	Op          string
	Left, Right Expr
}

// Logic is AND or OR over two or more items (n-ary, so a long list of
// conditions is not a deep tree).
type Logic struct {
	At    int
	Op    string // "AND" or "OR"
	Items []Expr
}

// Unary is NOT x or -x.
type Unary struct {
	At int
	Op string // "NOT" or "-"
	X  Expr
}

// In is x [NOT] IN (list or subquery).
type In struct {
	At  int
	X   Expr
	Not bool
	Set Expr // *Tuple, *Subquery, or one expression
}

// Between is x [NOT] BETWEEN lo AND hi.
type Between struct {
	At        int
	X, Lo, Hi Expr
	Not       bool
}

// IsNull is x IS [NOT] NULL.
type IsNull struct {
	At  int
	X   Expr
	Not bool
}

// Case is CASE [operand] WHEN .. THEN .. [ELSE ..] END.
type Case struct {
	At      int
	Operand Expr // nil for the searched form
	Whens   []When
	Else    Expr // nil for none
}

// When is one branch of a Case.
type When struct{ Cond, Then Expr }

// Array is [a, b, ...].
type Array struct {
	At    int
	Items []Expr
}

// Tuple is (a, b, ...) with at least two items.
type Tuple struct {
	At    int
	Items []Expr
}

// Index is x[i].
type Index struct {
	At       int
	X, Index Expr
}

// Lambda is x -> body or (x, y) -> body.
type Lambda struct {
	At     int
	Params []string
	Body   Expr
}

// Interval is INTERVAL n unit.
type Interval struct {
	At   int
	N    Expr
	Unit string // second, minute, hour, day, week, month, quarter, year
}

// Placeholder is {name}, a value the caller supplies.
type Placeholder struct {
	At   int
	Name string
}

// Star is * in count(*) or SELECT *.
type Star struct{ At int }

// Subquery is a SELECT in an expression: x IN (SELECT ...) or a scalar
// subquery.
type Subquery struct {
	At    int
	Query *Select
}

// Alias is expr AS name (select columns and WITH expressions).
type Alias struct {
	At   int
	X    Expr
	Name string
}

func (e *Constant) Pos() int    { return e.At }
func (e *Field) Pos() int       { return e.At }
func (e *Call) Pos() int        { return e.At }
func (e *Binary) Pos() int      { return e.At }
func (e *Logic) Pos() int       { return e.At }
func (e *Unary) Pos() int       { return e.At }
func (e *In) Pos() int          { return e.At }
func (e *Between) Pos() int     { return e.At }
func (e *IsNull) Pos() int      { return e.At }
func (e *Case) Pos() int        { return e.At }
func (e *Array) Pos() int       { return e.At }
func (e *Tuple) Pos() int       { return e.At }
func (e *Index) Pos() int       { return e.At }
func (e *Lambda) Pos() int      { return e.At }
func (e *Interval) Pos() int    { return e.At }
func (e *Placeholder) Pos() int { return e.At }
func (e *Star) Pos() int        { return e.At }
func (e *Subquery) Pos() int    { return e.At }
func (e *Alias) Pos() int       { return e.At }

// Select is one SELECT statement; UnionAll are the statements joined to
// it by UNION ALL, in order.
type Select struct {
	At       int
	With     []CTE
	Distinct bool
	Columns  []Expr // an *Alias names a column
	From     *From  // nil for none
	Where    Expr
	GroupBy  []Expr
	Having   Expr
	OrderBy  []OrderBy
	Limit    Expr
	Offset   Expr
	UnionAll []*Select
}

// CTE is WITH name AS (SELECT ...).
type CTE struct {
	At    int
	Name  string
	Query *Select
}

// From is a FROM clause: a table (Table, a dotted name) or a subquery,
// with an optional alias, then joins.
type From struct {
	At       int
	Table    []string
	Subquery *Select
	Alias    string
	Joins    []Join
}

// Join is [LEFT|INNER] JOIN source ON cond.
type Join struct {
	At       int
	Kind     string // "INNER" or "LEFT"
	Table    []string
	Subquery *Select
	Alias    string
	On       Expr
}

// OrderBy is expr [ASC|DESC].
type OrderBy struct {
	X    Expr
	Desc bool
}
