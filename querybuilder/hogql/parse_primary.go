package hogql

import (
	"math"
	"strconv"
	"strings"
)

// subqueryAhead reports "(" followed by SELECT or WITH.
func (p *parser) subqueryAhead() bool {
	n := p.peekAt(1)
	return p.isOp("(") && (isKeywordTok(n, "SELECT") || isKeywordTok(n, "WITH"))
}

func (p *parser) primary() (Expr, error) {
	t := p.peek()
	switch t.kind {
	case tNumber:
		p.i++
		return number(t)
	case tString:
		p.i++
		return &Constant{At: t.pos, Value: t.text}, nil
	case tQuotedIdent:
		return p.field()
	case tOp:
		switch t.text {
		case "(":
			if p.subqueryAhead() {
				p.i++
				s, err := p.selectUnion()
				if err != nil {
					return nil, err
				}
				if err := p.expectOp(")"); err != nil {
					return nil, err
				}
				return &Subquery{At: t.pos, Query: s}, nil
			}
			p.i++
			items, err := p.exprList(")")
			if err != nil {
				return nil, err
			}
			switch len(items) {
			case 0:
				return nil, errorf(t.pos, "empty parentheses")
			case 1:
				return items[0], nil
			}
			return &Tuple{At: t.pos, Items: items}, nil
		case "[":
			p.i++
			items, err := p.exprList("]")
			if err != nil {
				return nil, err
			}
			return &Array{At: t.pos, Items: items}, nil
		case "{":
			p.i++
			n := p.next()
			// Any name, keywords too ({end}), as PostHog's grammar
			// allows: inside braces a name cannot be anything else.
			if n.kind != tIdent {
				return nil, errorf(n.pos, "a placeholder is {name}")
			}
			if err := p.expectOp("}"); err != nil {
				return nil, err
			}
			return &Placeholder{At: t.pos, Name: n.text}, nil
		case "*":
			p.i++
			return &Star{At: t.pos}, nil
		}
		return nil, p.unexpected()
	case tIdent:
		switch strings.ToUpper(t.text) {
		case "NULL":
			p.i++
			return &Constant{At: t.pos, Value: nil}, nil
		case "TRUE", "FALSE":
			p.i++
			return &Constant{At: t.pos, Value: strings.EqualFold(t.text, "true")}, nil
		case "CASE":
			return p.caseExpr()
		case "INTERVAL":
			return p.interval()
		}
		if p.peekAt(1).isOp("(") {
			return p.call()
		}
		if isReserved(t) {
			return nil, p.unexpected()
		}
		return p.field()
	}
	return nil, p.unexpected()
}

// number reads a number literal: an int64 when it fits, a uint64 past
// that, a float64 with a point or an exponent.
func number(t token) (Expr, error) {
	s := t.text
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		u, err := strconv.ParseUint(s[2:], 16, 64)
		if err != nil {
			return nil, errorf(t.pos, "number %s is out of range", clip(s))
		}
		if u <= math.MaxInt64 {
			return &Constant{At: t.pos, Value: int64(u)}, nil
		}
		return &Constant{At: t.pos, Value: u}, nil
	}
	if !strings.ContainsAny(s, ".eE") {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return &Constant{At: t.pos, Value: n}, nil
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return &Constant{At: t.pos, Value: u}, nil
		}
		return nil, errorf(t.pos, "number %s is out of range", clip(s))
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, errorf(t.pos, "number %s is out of range", clip(s))
	}
	return &Constant{At: t.pos, Value: f}, nil
}

// field := name { . name }.
func (p *parser) field() (Expr, error) {
	t := p.next()
	f := &Field{At: t.pos, Chain: []string{t.text}}
	for p.isOp(".") {
		p.i++
		n := p.next()
		if n.kind != tIdent && n.kind != tQuotedIdent {
			return nil, errorf(n.pos, "unexpected token %s after \".\", expected a name", n)
		}
		f.Chain = append(f.Chain, n.text)
		if len(f.Chain) > 8 {
			return nil, errorf(n.pos, "field chain longer than 8 names")
		}
	}
	return f, nil
}

// exprList parses expressions separated by commas up to the closing op.
func (p *parser) exprList(closing string) ([]Expr, error) {
	var items []Expr
	if p.acceptOp(closing) {
		return items, nil
	}
	for {
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		items = append(items, x)
		if p.acceptOp(closing) {
			return items, nil
		}
		if err := p.expectOp(","); err != nil {
			return nil, p.expected(`"," or "` + closing + `"`)
		}
	}
}

// call := name ( [DISTINCT] args ) [ ( args ) ].
func (p *parser) call() (Expr, error) {
	t := p.next()
	p.i++ // (
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave(1)
	c := &Call{At: t.pos, Name: t.text}
	c.Distinct = p.acceptKeyword("DISTINCT")
	args, err := p.exprList(")")
	if err != nil {
		return nil, err
	}
	c.Args = args
	if p.acceptOp("(") {
		c.Params = c.Args
		if c.Params == nil {
			c.Params = []Expr{}
		}
		if c.Args, err = p.exprList(")"); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// caseExpr := CASE [operand] WHEN c THEN x ... [ELSE x] END.
func (p *parser) caseExpr() (Expr, error) {
	at := p.next().pos
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave(1)
	c := &Case{At: at}
	if !p.isKeyword("WHEN") {
		op, err := p.expr()
		if err != nil {
			return nil, err
		}
		c.Operand = op
	}
	for p.acceptKeyword("WHEN") {
		cond, err := p.expr()
		if err != nil {
			return nil, err
		}
		if err := p.expectKeyword("THEN"); err != nil {
			return nil, err
		}
		then, err := p.expr()
		if err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, When{Cond: cond, Then: then})
	}
	if len(c.Whens) == 0 {
		return nil, p.expected("WHEN")
	}
	if p.acceptKeyword("ELSE") {
		els, err := p.expr()
		if err != nil {
			return nil, err
		}
		c.Else = els
	}
	if err := p.expectKeyword("END"); err != nil {
		return nil, err
	}
	return c, nil
}

// intervalUnits maps the units INTERVAL takes (singular or plural) to
// their canonical name.
var intervalUnits = map[string]string{
	"SECOND": "second", "MINUTE": "minute", "HOUR": "hour", "DAY": "day",
	"WEEK": "week", "MONTH": "month", "QUARTER": "quarter", "YEAR": "year",
}

// interval := INTERVAL n unit.
func (p *parser) interval() (Expr, error) {
	at := p.next().pos
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave(1)
	n, err := p.unary()
	if err != nil {
		return nil, err
	}
	u := p.next()
	unit := intervalUnits[strings.TrimSuffix(strings.ToUpper(u.text), "S")]
	if u.kind != tIdent || unit == "" {
		return nil, errorf(u.pos, "INTERVAL needs a number and a unit (second, minute, hour, day, week, month, quarter, year)")
	}
	return &Interval{At: at, N: n, Unit: unit}, nil
}
