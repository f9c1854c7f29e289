package hogql

import "strings"

// caseExpr is multiIf over the branches, or caseWithExpression with an
// operand (written once: repeating it in every branch would grow nested
// CASEs exponentially); no ELSE is NULL.
func (c *Compiler) caseExpr(x *Case, sc *scope) (string, error) {
	var args []string
	if x.Operand != nil {
		op, err := c.expr(x.Operand, sc)
		if err != nil {
			return "", err
		}
		args = append(args, op)
	}
	for _, w := range x.Whens {
		parts, err := c.exprs([]Expr{w.Cond, w.Then}, sc)
		if err != nil {
			return "", err
		}
		args = append(args, parts...)
	}
	els := "NULL"
	if x.Else != nil {
		s, err := c.expr(x.Else, sc)
		if err != nil {
			return "", err
		}
		els = s
	}
	fn := "multiIf("
	if x.Operand != nil {
		fn = "caseWithExpression("
	}
	return fn + strings.Join(append(args, els), ", ") + ")", nil
}

// call prints an allow-listed function.
func (c *Compiler) call(x *Call, sc *scope) (string, error) {
	f, ok := functions[strings.ToLower(x.Name)]
	if !ok || !c.allowed(f.ch) {
		return "", errorf(x.At, "function %s is not allowed", clip(x.Name))
	}
	if f.agg && !c.Aggregates {
		return "", errorf(x.At, "aggregate function %s is not allowed here", f.ch)
	}
	if x.Distinct && !f.distinct {
		return "", errorf(x.At, "DISTINCT is not allowed in %s", f.ch)
	}
	if x.Params != nil && !f.parametric {
		return "", errorf(x.At, "function %s takes no parameters", f.ch)
	}
	if f.parametric && (len(x.Params) < f.pmin || len(x.Params) > f.pmax) {
		if f.pmax == 0 && x.Params == nil {
			// retention(cond, ...) has no parameter list.
		} else if f.pmin == f.pmax {
			return "", errorf(x.At, "function %s takes %d parameters", f.ch, f.pmin)
		} else {
			return "", errorf(x.At, "function %s takes %d to %d parameters", f.ch, f.pmin, f.pmax)
		}
	}
	args := x.Args
	if f.ch == "count" && len(args) == 1 {
		if _, star := args[0].(*Star); star {
			if x.Distinct {
				return "", errorf(x.At, "count(DISTINCT *) is not supported")
			}
			args = nil
		}
	}
	if len(args) < f.min || (f.max >= 0 && len(args) > f.max) {
		switch {
		case f.max < 0:
			return "", errorf(x.At, "function %s takes at least %d arguments, got %d", f.ch, f.min, len(args))
		case f.min == f.max:
			return "", errorf(x.At, "function %s takes %d arguments, got %d", f.ch, f.min, len(args))
		}
		return "", errorf(x.At, "function %s takes %d to %d arguments, got %d", f.ch, f.min, f.max, len(args))
	}
	out := make([]string, len(args))
	for i, a := range args {
		if l, ok := a.(*Lambda); ok {
			if !f.lambda || c.Only != nil {
				return "", errorf(l.At, "a lambda is not allowed as an argument of %s", f.ch)
			}
			s, err := c.lambda(l, sc)
			if err != nil {
				return "", err
			}
			out[i] = s
			continue
		}
		s, err := c.expr(a, sc)
		if err != nil {
			return "", err
		}
		out[i] = s
	}
	if f.wrap != nil {
		return f.wrap(out), nil
	}
	if f.ch == "concat" {
		// HogQL's concat reads NULL (a missing property) as empty text
		// and any value as its text, where ClickHouse's gives NULL.
		empty := c.bind("String", "")
		for i, a := range out {
			out[i] = "ifNull(toString(" + a + "), " + empty + ")"
		}
	}
	head := f.ch
	if f.parametric && x.Params != nil {
		ps := make([]string, len(x.Params))
		for i, p := range x.Params {
			if _, ok := p.(*Constant); !ok {
				return "", errorf(p.Pos(), "parameters of %s must be literals", f.ch)
			}
			s, err := c.expr(p, sc)
			if err != nil {
				return "", err
			}
			ps[i] = s
		}
		head += "(" + strings.Join(ps, ", ") + ")"
	}
	if x.Distinct {
		return head + "(DISTINCT " + strings.Join(out, ", ") + ")", nil
	}
	return head + "(" + strings.Join(out, ", ") + ")", nil
}

// lambda prints x -> body with generated parameter names.
func (c *Compiler) lambda(l *Lambda, sc *scope) (string, error) {
	inner := &scope{parent: sc, lambda: map[string]string{}, sel: sc.sel}
	names := make([]string, len(l.Params))
	for i, p := range l.Params {
		names[i] = c.name("x")
		inner.lambda[p] = names[i]
	}
	body, err := c.expr(l.Body, inner)
	if err != nil {
		return "", err
	}
	if len(names) == 1 {
		return names[0] + " -> " + body, nil
	}
	return "(" + strings.Join(names, ", ") + ") -> " + body, nil
}
