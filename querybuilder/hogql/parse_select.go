package hogql

import "strings"

// selectUnion := select { UNION ALL select }.
func (p *parser) selectUnion() (*Select, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave(1)
	first, err := p.selectStmt()
	if err != nil {
		return nil, err
	}
	for p.isKeyword("UNION") {
		t := p.next()
		if !p.acceptKeyword("ALL") {
			return nil, errorf(t.pos, "only UNION ALL is supported")
		}
		s, err := p.selectStmt()
		if err != nil {
			return nil, err
		}
		first.UnionAll = append(first.UnionAll, s)
		if len(first.UnionAll) > MaxDepth {
			return nil, errorf(t.pos, "more than %d UNION ALL parts", MaxDepth)
		}
	}
	return first, nil
}

// selectStmt := [WITH ctes] SELECT [DISTINCT] columns [FROM ...] [WHERE]
// [GROUP BY] [HAVING] [ORDER BY] [LIMIT [OFFSET]].
func (p *parser) selectStmt() (*Select, error) {
	s := &Select{At: p.peek().pos}
	if p.acceptKeyword("WITH") {
		for {
			cte, err := p.cte()
			if err != nil {
				return nil, err
			}
			s.With = append(s.With, cte)
			if !p.acceptOp(",") {
				break
			}
		}
	}
	if err := p.expectKeyword("SELECT"); err != nil {
		return nil, err
	}
	s.Distinct = p.acceptKeyword("DISTINCT")
	for {
		col, err := p.column()
		if err != nil {
			return nil, err
		}
		s.Columns = append(s.Columns, col)
		if !p.acceptOp(",") {
			break
		}
	}
	if p.acceptKeyword("FROM") {
		f, err := p.from()
		if err != nil {
			return nil, err
		}
		s.From = f
	}
	if p.isKeyword("PREWHERE") || p.isKeyword("SAMPLE") || p.isKeyword("FINAL") || p.isKeyword("ARRAY") {
		return nil, errorf(p.peek().pos, "%s is not supported", strings.ToUpper(p.peek().text))
	}
	var err error
	if p.acceptKeyword("WHERE") {
		if s.Where, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if p.acceptKeyword("GROUP") {
		if err := p.expectKeyword("BY"); err != nil {
			return nil, err
		}
		for {
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			s.GroupBy = append(s.GroupBy, x)
			if !p.acceptOp(",") {
				break
			}
		}
	}
	if p.acceptKeyword("HAVING") {
		if s.Having, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if p.acceptKeyword("ORDER") {
		if err := p.expectKeyword("BY"); err != nil {
			return nil, err
		}
		for {
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			o := OrderBy{X: x}
			if p.acceptKeyword("DESC") {
				o.Desc = true
			} else {
				p.acceptKeyword("ASC")
			}
			s.OrderBy = append(s.OrderBy, o)
			if !p.acceptOp(",") {
				break
			}
		}
	}
	if p.acceptKeyword("LIMIT") {
		if s.Limit, err = p.expr(); err != nil {
			return nil, err
		}
		if p.acceptOp(",") { // LIMIT offset, n
			s.Offset = s.Limit
			if s.Limit, err = p.expr(); err != nil {
				return nil, err
			}
		}
		if p.isKeyword("BY") {
			return nil, errorf(p.peek().pos, "LIMIT BY is not supported")
		}
	}
	if p.acceptKeyword("OFFSET") {
		if s.Offset != nil {
			return nil, errorf(p.peek().pos, "OFFSET given twice")
		}
		if s.Offset, err = p.expr(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// cte := name AS ( select ).
func (p *parser) cte() (CTE, error) {
	t := p.next()
	if (t.kind != tIdent || isReserved(t)) && t.kind != tQuotedIdent {
		return CTE{}, errorf(t.pos, "unexpected token %s, expected a name: WITH name AS (SELECT ...)", t)
	}
	if err := p.expectKeyword("AS"); err != nil {
		return CTE{}, err
	}
	if !p.subqueryAhead() {
		return CTE{}, p.expected("(SELECT ...)")
	}
	p.i++
	q, err := p.selectUnion()
	if err != nil {
		return CTE{}, err
	}
	if err := p.expectOp(")"); err != nil {
		return CTE{}, err
	}
	return CTE{At: t.pos, Name: t.text, Query: q}, nil
}

// column := expr [AS name].
func (p *parser) column() (Expr, error) {
	x, err := p.expr()
	if err != nil {
		return nil, err
	}
	if at := p.peek().pos; p.acceptKeyword("AS") {
		name, err := p.name()
		if err != nil {
			return nil, err
		}
		return &Alias{At: at, X: x, Name: name}, nil
	}
	return x, nil
}

// name is an alias or a table's name: an identifier that is not a
// reserved word, or a quoted one.
func (p *parser) name() (string, error) {
	t := p.next()
	if (t.kind == tIdent && !isReserved(t)) || t.kind == tQuotedIdent {
		return t.text, nil
	}
	return "", errorf(t.pos, "unexpected token %s, expected a name", t)
}

// source := table [.name] | ( select ), then [[AS] alias].
func (p *parser) source() (table []string, sub *Select, alias string, err error) {
	t := p.peek()
	switch {
	case p.subqueryAhead():
		p.i++
		if sub, err = p.selectUnion(); err != nil {
			return nil, nil, "", err
		}
		if err = p.expectOp(")"); err != nil {
			return nil, nil, "", err
		}
	case (t.kind == tIdent && !isReserved(t)) || t.kind == tQuotedIdent:
		if p.peekAt(1).isOp("(") {
			return nil, nil, "", errorf(t.pos, "table function %s is not allowed", t.text)
		}
		f, err := p.field()
		if err != nil {
			return nil, nil, "", err
		}
		table = f.(*Field).Chain
		if p.isOp("(") {
			return nil, nil, "", errorf(t.pos, "table function %s is not allowed", strings.Join(table, "."))
		}
	default:
		return nil, nil, "", p.expected("a table or (SELECT ...)")
	}
	if p.acceptKeyword("AS") {
		if alias, err = p.name(); err != nil {
			return nil, nil, "", err
		}
	} else if n := p.peek(); (n.kind == tIdent && !isReserved(n)) || n.kind == tQuotedIdent {
		alias = p.next().text
	}
	return table, sub, alias, nil
}

// from := source { [INNER|LEFT [OUTER]] JOIN source ON expr }.
func (p *parser) from() (*From, error) {
	f := &From{At: p.peek().pos}
	var err error
	if f.Table, f.Subquery, f.Alias, err = p.source(); err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		kind := ""
		switch {
		case p.isKeyword("JOIN"), p.isKeyword("INNER"):
			p.acceptKeyword("INNER")
			if err := p.expectKeyword("JOIN"); err != nil {
				return nil, err
			}
			kind = "INNER"
		case p.acceptKeyword("LEFT"):
			p.acceptKeyword("OUTER")
			if err := p.expectKeyword("JOIN"); err != nil {
				return nil, err
			}
			kind = "LEFT"
		case p.isKeyword("RIGHT"), p.isKeyword("FULL"), p.isKeyword("CROSS"), p.isKeyword("ARRAY"), p.isKeyword("GLOBAL"),
			p.isKeyword("ANY"), p.isKeyword("ASOF"), p.isKeyword("SEMI"), p.isKeyword("ANTI"), p.isOp(","):
			return nil, errorf(t.pos, "%s joins are not supported; use JOIN or LEFT JOIN ... ON", strings.ToUpper(t.text))
		default:
			return f, nil
		}
		j := Join{At: t.pos, Kind: kind}
		if j.Table, j.Subquery, j.Alias, err = p.source(); err != nil {
			return nil, err
		}
		if p.isKeyword("USING") {
			return nil, errorf(p.peek().pos, "JOIN ... USING is not supported; use ON")
		}
		if err := p.expectKeyword("ON"); err != nil {
			return nil, err
		}
		if j.On, err = p.expr(); err != nil {
			return nil, err
		}
		f.Joins = append(f.Joins, j)
		if len(f.Joins) > 8 {
			return nil, errorf(t.pos, "more than 8 joins")
		}
	}
}
