package hogql

import (
	"math"
	"strconv"
	"strings"
)

// parser is a recursive-descent parser over the token list. depth counts
// the nesting being parsed (and the length of operator chains, which
// become left-deep trees), so no input recurses past MaxDepth.
type parser struct {
	toks  []token
	i     int
	depth int
}

// ParseExpr parses one expression (an expression breakdown, an
// EventsQuery select or where item).
func ParseExpr(src string) (Expr, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	if err := p.end(); err != nil {
		return nil, err
	}
	return e, nil
}

// ParseSelect parses one SELECT statement (with UNION ALL). Anything
// after it (a second statement, SETTINGS, FORMAT, INTO OUTFILE) is
// refused.
func ParseSelect(src string) (*Select, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	s, err := p.selectUnion()
	if err != nil {
		return nil, err
	}
	if err := p.end(); err != nil {
		return nil, err
	}
	return s, nil
}

func newParser(src string) (*parser, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	if toks[0].kind == tEOF {
		return nil, errorf(0, "empty input")
	}
	return &parser{toks: toks}, nil
}

// end checks that the whole input was read.
func (p *parser) end() error {
	t := p.peek()
	switch {
	case t.kind == tEOF:
		return nil
	case p.isOp(";"):
		if p.toks[p.i+1].kind == tEOF {
			return errorf(t.pos, "a trailing semicolon is not allowed")
		}
		return errorf(t.pos, "multiple statements are not allowed")
	case p.isKeyword("SETTINGS"):
		return errorf(t.pos, "SETTINGS is not allowed")
	case p.isKeyword("FORMAT"):
		return errorf(t.pos, "FORMAT is not allowed")
	case p.isKeyword("INTO"):
		return errorf(t.pos, "INTO OUTFILE is not allowed")
	}
	return p.unexpected()
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekAt(n int) token {
	if p.i+n >= len(p.toks) {
		return p.toks[len(p.toks)-1]
	}
	return p.toks[p.i+n]
}
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == op
}

func isKeywordTok(t token, kw string) bool {
	return t.kind == tIdent && strings.EqualFold(t.text, kw)
}

func (p *parser) isKeyword(kw string) bool { return isKeywordTok(p.peek(), kw) }

func (p *parser) acceptOp(op string) bool {
	if p.isOp(op) {
		p.i++
		return true
	}
	return false
}

func (p *parser) acceptKeyword(kw string) bool {
	if p.isKeyword(kw) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectOp(op string) error {
	if !p.acceptOp(op) {
		return p.expected(strconv.Quote(op))
	}
	return nil
}

func (p *parser) expectKeyword(kw string) error {
	if !p.acceptKeyword(kw) {
		return p.expected(kw)
	}
	return nil
}

func (p *parser) unexpected() error {
	t := p.peek()
	return errorf(t.pos, "unexpected token %s", t)
}

func (p *parser) expected(what string) error {
	t := p.peek()
	return errorf(t.pos, "unexpected token %s, expected %s", t, what)
}

// enter deepens the nesting; leave undoes it.
func (p *parser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return errorf(p.peek().pos, "expression nested deeper than %d levels", MaxDepth)
	}
	return nil
}

func (p *parser) leave(n int) { p.depth -= n }

// reserved words are never bare field names or aliases.
var reserved = map[string]bool{
	"SELECT": true, "FROM": true, "WHERE": true, "GROUP": true, "BY": true, "HAVING": true, "ORDER": true,
	"LIMIT": true, "OFFSET": true, "UNION": true, "ALL": true, "JOIN": true, "INNER": true, "LEFT": true,
	"RIGHT": true, "FULL": true, "CROSS": true, "OUTER": true, "ON": true, "USING": true, "AS": true,
	"AND": true, "OR": true, "NOT": true, "IN": true, "LIKE": true, "ILIKE": true, "BETWEEN": true,
	"IS": true, "NULL": true, "TRUE": true, "FALSE": true, "CASE": true, "WHEN": true, "THEN": true,
	"ELSE": true, "END": true, "INTERVAL": true, "WITH": true, "SETTINGS": true, "FORMAT": true,
	"INTO": true, "DISTINCT": true, "ASC": true, "DESC": true, "ARRAY": true, "GLOBAL": true,
	"PREWHERE": true, "SAMPLE": true, "FINAL": true, "ANY": true, "ASOF": true, "SEMI": true, "ANTI": true,
}

func isReserved(t token) bool { return t.kind == tIdent && reserved[strings.ToUpper(t.text)] }

// expr := lambda | ternary.
func (p *parser) expr() (Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave(1)
	if params, n := p.lambdaHead(); n > 0 {
		at := p.peek().pos
		p.i += n
		body, err := p.expr()
		if err != nil {
			return nil, err
		}
		return &Lambda{At: at, Params: params, Body: body}, nil
	}
	cond, err := p.or()
	if err != nil {
		return nil, err
	}
	if !p.isOp("?") {
		return cond, nil
	}
	at := p.next().pos
	then, err := p.expr()
	if err != nil {
		return nil, err
	}
	if err := p.expectOp(":"); err != nil {
		return nil, err
	}
	els, err := p.expr()
	if err != nil {
		return nil, err
	}
	return &Call{At: at, Name: "if", Args: []Expr{cond, then, els}}, nil
}

// lambdaHead recognizes `x ->` and `(x, y) ->` without consuming them:
// the parameters and how many tokens the head takes, arrow included (0
// for no lambda).
func (p *parser) lambdaHead() ([]string, int) {
	t := p.peek()
	if (t.kind == tIdent && !isReserved(t)) || t.kind == tQuotedIdent {
		if p.peekAt(1).isOp("->") {
			return []string{t.text}, 2
		}
		return nil, 0
	}
	if !p.isOp("(") {
		return nil, 0
	}
	var params []string
	for k := 1; k < 2*MaxDepth; k += 2 {
		n := p.peekAt(k)
		if !(n.kind == tIdent && !isReserved(n)) && n.kind != tQuotedIdent {
			return nil, 0
		}
		params = append(params, n.text)
		sep := p.peekAt(k + 1)
		if sep.isOp(")") {
			if p.peekAt(k + 2).isOp("->") {
				return params, k + 3
			}
			return nil, 0
		}
		if !sep.isOp(",") {
			return nil, 0
		}
	}
	return nil, 0
}

// logic parses a chain of AND or OR into one n-ary node.
func (p *parser) logic(op string, operand func() (Expr, error)) (Expr, error) {
	first, err := operand()
	if err != nil {
		return nil, err
	}
	if !p.isKeyword(op) {
		return first, nil
	}
	l := &Logic{At: first.Pos(), Op: op, Items: []Expr{first}}
	for p.acceptKeyword(op) {
		x, err := operand()
		if err != nil {
			return nil, err
		}
		l.Items = append(l.Items, x)
	}
	return l, nil
}

func (p *parser) or() (Expr, error)  { return p.logic("OR", p.and) }
func (p *parser) and() (Expr, error) { return p.logic("AND", p.not) }

func (p *parser) not() (Expr, error) {
	if p.isKeyword("NOT") {
		at := p.next().pos
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave(1)
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return &Unary{At: at, Op: "NOT", X: x}, nil
	}
	return p.comparison()
}

func (t token) isOp(op string) bool { return t.kind == tOp && t.text == op }

var comparisons = map[string]string{"=": "=", "==": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "=~": "=~", "!~": "!~"}

// comparison := concat { cmp concat | [NOT] LIKE/ILIKE concat | [NOT] IN set
// | [NOT] BETWEEN concat AND concat | IS [NOT] NULL }.
func (p *parser) comparison() (Expr, error) {
	left, err := p.concat()
	if err != nil {
		return nil, err
	}
	chain := 0
	defer func() { p.leave(chain) }()
	for {
		t := p.peek()
		neg := false
		if isKeywordTok(t, "NOT") {
			n := p.peekAt(1)
			if !isKeywordTok(n, "LIKE") && !isKeywordTok(n, "ILIKE") && !isKeywordTok(n, "IN") && !isKeywordTok(n, "BETWEEN") {
				return left, nil
			}
			p.i++
			neg, t = true, n
		}
		if t.kind == tOp && comparisons[t.text] == "" || t.kind != tOp && t.kind != tIdent {
			return left, nil
		}
		if t.kind == tIdent && !isKeywordTok(t, "LIKE") && !isKeywordTok(t, "ILIKE") && !isKeywordTok(t, "IN") &&
			!isKeywordTok(t, "BETWEEN") && !isKeywordTok(t, "IS") {
			return left, nil
		}
		chain++
		if err := p.enter(); err != nil {
			return nil, err
		}
		p.i++
		switch {
		case t.kind == tOp:
			right, err := p.concat()
			if err != nil {
				return nil, err
			}
			left = &Binary{At: t.pos, Op: comparisons[t.text], Left: left, Right: right}
		case isKeywordTok(t, "LIKE"), isKeywordTok(t, "ILIKE"):
			right, err := p.concat()
			if err != nil {
				return nil, err
			}
			op := strings.ToUpper(t.text)
			if neg {
				op = "NOT " + op
			}
			left = &Binary{At: t.pos, Op: op, Left: left, Right: right}
		case isKeywordTok(t, "IN"):
			set, err := p.inSet()
			if err != nil {
				return nil, err
			}
			left = &In{At: t.pos, X: left, Not: neg, Set: set}
		case isKeywordTok(t, "BETWEEN"):
			lo, err := p.concat()
			if err != nil {
				return nil, err
			}
			if err := p.expectKeyword("AND"); err != nil {
				return nil, err
			}
			hi, err := p.concat()
			if err != nil {
				return nil, err
			}
			left = &Between{At: t.pos, X: left, Lo: lo, Hi: hi, Not: neg}
		default: // IS [NOT] NULL
			not := p.acceptKeyword("NOT")
			if err := p.expectKeyword("NULL"); err != nil {
				return nil, err
			}
			left = &IsNull{At: t.pos, X: left, Not: not}
		}
	}
}

// inSet is what follows IN: a parenthesized list or subquery, or one
// expression (an array, a field, a placeholder).
func (p *parser) inSet() (Expr, error) {
	if p.isOp("(") && !p.subqueryAhead() {
		at := p.next().pos
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave(1)
		items, err := p.exprList(")")
		if err != nil {
			return nil, err
		}
		return &Tuple{At: at, Items: items}, nil
	}
	return p.concat()
}

// binaryChain parses operand { op operand } for the operators ops, left
// associative.
func (p *parser) binaryChain(ops map[string]bool, operand func() (Expr, error)) (Expr, error) {
	left, err := operand()
	if err != nil {
		return nil, err
	}
	chain := 0
	defer func() { p.leave(chain) }()
	for t := p.peek(); t.kind == tOp && ops[t.text]; t = p.peek() {
		chain++
		if err := p.enter(); err != nil {
			return nil, err
		}
		p.i++
		right, err := operand()
		if err != nil {
			return nil, err
		}
		left = &Binary{At: t.pos, Op: t.text, Left: left, Right: right}
	}
	return left, nil
}

var (
	concatOps   = map[string]bool{"||": true}
	additiveOps = map[string]bool{"+": true, "-": true}
	multOps     = map[string]bool{"*": true, "/": true, "%": true}
)

func (p *parser) concat() (Expr, error)   { return p.binaryChain(concatOps, p.additive) }
func (p *parser) additive() (Expr, error) { return p.binaryChain(additiveOps, p.mult) }
func (p *parser) mult() (Expr, error)     { return p.binaryChain(multOps, p.unary) }

// unary := - unary | postfix. A minus before a number literal is part of
// the literal.
func (p *parser) unary() (Expr, error) {
	if !p.isOp("-") {
		return p.postfix()
	}
	at := p.next().pos
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave(1)
	x, err := p.unary()
	if err != nil {
		return nil, err
	}
	if c, ok := x.(*Constant); ok {
		switch v := c.Value.(type) {
		case int64:
			if v != math.MinInt64 {
				return &Constant{At: at, Value: -v}, nil
			}
		case uint64:
			if v == 1<<63 {
				return &Constant{At: at, Value: int64(math.MinInt64)}, nil
			}
		case float64:
			return &Constant{At: at, Value: -v}, nil
		}
	}
	return &Unary{At: at, Op: "-", X: x}, nil
}

// postfix := primary { [index] }.
func (p *parser) postfix() (Expr, error) {
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	chain := 0
	defer func() { p.leave(chain) }()
	for p.isOp("[") {
		at := p.next().pos
		chain++
		if err := p.enter(); err != nil {
			return nil, err
		}
		i, err := p.expr()
		if err != nil {
			return nil, err
		}
		if err := p.expectOp("]"); err != nil {
			return nil, err
		}
		x = &Index{At: at, X: x, Index: i}
	}
	return x, nil
}
