package hogql

import "strings"

// Kind is what an expression's value is, as far as CheckKinds can tell
// from the AST and the kinds of fields.
type Kind int

// Kinds of values; a condition is a number (ClickHouse's UInt8).
const (
	KindAny Kind = iota // NULL, or not known
	KindString
	KindNumber
	KindDate
	KindUUID
	KindInterval
)

var kindNames = map[Kind]string{KindAny: "any value", KindString: "text", KindNumber: "a number",
	KindDate: "a date", KindUUID: "a uuid", KindInterval: "an interval"}

// CheckKinds refuses an expression whose operators or functions get
// values of a kind they do not take (text added to a number, a text
// condition, branches of an if that are text and numbers), which the
// engine would refuse only when running it. field gives each field's
// kind. It knows the functions of BreakdownFunctions; others are not
// checked.
func CheckKinds(e Expr, field func(chain []string) Kind) error {
	_, err := (&kinder{field: field}).kind(e)
	return err
}

type kinder struct{ field func([]string) Kind }

func compatible(a, b Kind) bool {
	return a == KindAny || b == KindAny || a == b || (a == KindDate && b == KindString) || (a == KindString && b == KindDate)
}

func (k *kinder) want(e Expr, want Kind, what string) (Kind, error) {
	got, err := k.kind(e)
	if err != nil {
		return 0, err
	}
	if !compatible(got, want) || got == KindDate && want == KindString {
		return 0, errorf(e.Pos(), "%s takes %s, got %s", what, kindNames[want], kindNames[got])
	}
	return got, nil
}

// common checks that values can be one column (if's branches, coalesce's
// arguments) and gives their kind.
func (k *kinder) common(list []Expr, what string) (Kind, error) {
	out := KindAny
	for _, e := range list {
		got, err := k.kind(e)
		if err != nil {
			return 0, err
		}
		if !compatible(out, got) || (out != KindAny && got != KindAny && out != got) {
			return 0, errorf(e.Pos(), "%s mixes %s and %s", what, kindNames[out], kindNames[got])
		}
		if out == KindAny {
			out = got
		}
	}
	return out, nil
}

func numberConstant(e Expr) bool {
	c, ok := e.(*Constant)
	if !ok {
		return false
	}
	switch c.Value.(type) {
	case int64, uint64, float64:
		return true
	}
	return false
}

func (k *kinder) kind(e Expr) (Kind, error) {
	switch x := e.(type) {
	case *Constant:
		switch x.Value.(type) {
		case nil:
			return KindAny, nil
		case string:
			return KindString, nil
		}
		return KindNumber, nil
	case *Field:
		return k.field(x.Chain), nil
	case *Binary:
		return k.binary(x)
	case *Logic:
		for _, it := range x.Items {
			if _, err := k.want(it, KindNumber, x.Op); err != nil {
				return 0, err
			}
		}
		return KindNumber, nil
	case *Unary:
		if _, err := k.want(x.X, KindNumber, map[string]string{"NOT": "NOT", "-": "unary minus"}[x.Op]); err != nil {
			return 0, err
		}
		return KindNumber, nil
	case *In:
		xk, err := k.kind(x.X)
		if err != nil {
			return 0, err
		}
		if t, ok := x.Set.(*Tuple); ok {
			for _, it := range t.Items {
				if _, err := k.want(it, xk, "IN"); err != nil {
					return 0, err
				}
			}
		}
		return KindNumber, nil
	case *Between:
		if _, err := k.common([]Expr{x.X, x.Lo, x.Hi}, "BETWEEN"); err != nil {
			return 0, err
		}
		return KindNumber, nil
	case *IsNull:
		_, err := k.kind(x.X)
		return KindNumber, err
	case *Case:
		var branches []Expr
		for _, w := range x.Whens {
			if x.Operand != nil {
				if _, err := k.common([]Expr{x.Operand, w.Cond}, "CASE"); err != nil {
					return 0, err
				}
			} else if _, err := k.want(w.Cond, KindNumber, "WHEN"); err != nil {
				return 0, err
			}
			branches = append(branches, w.Then)
		}
		if x.Else != nil {
			branches = append(branches, x.Else)
		}
		return k.common(branches, "CASE")
	case *Interval:
		if _, err := k.want(x.N, KindNumber, "INTERVAL"); err != nil {
			return 0, err
		}
		return KindInterval, nil
	case *Call:
		return k.call(x)
	}
	return KindAny, nil
}

func (k *kinder) binary(x *Binary) (Kind, error) {
	side := func(e, other Expr) (Kind, error) {
		if _, field := e.(*Field); field && numericOps[x.Op] && numberConstant(other) {
			return KindNumber, nil // read as a number (Compiler.operand)
		}
		return k.kind(e)
	}
	l, err := side(x.Left, x.Right)
	if err != nil {
		return 0, err
	}
	r, err := side(x.Right, x.Left)
	if err != nil {
		return 0, err
	}
	switch x.Op {
	case "||":
		return KindString, nil
	case "LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE", "=~", "!~":
		for _, s := range []struct {
			k Kind
			e Expr
		}{{l, x.Left}, {r, x.Right}} {
			if !compatible(s.k, KindString) || s.k == KindDate {
				return 0, errorf(s.e.Pos(), "%s takes text, got %s", x.Op, kindNames[s.k])
			}
		}
		return KindNumber, nil
	case "+", "-":
		if (l == KindDate && (r == KindInterval || r == KindNumber || r == KindAny)) ||
			(x.Op == "+" && r == KindDate && (l == KindInterval || l == KindNumber || l == KindAny)) {
			return KindDate, nil
		}
		fallthrough
	case "*", "/", "%":
		for _, s := range []struct {
			k Kind
			e Expr
		}{{l, x.Left}, {r, x.Right}} {
			if s.k != KindNumber && s.k != KindAny {
				return 0, errorf(s.e.Pos(), "operator %s takes numbers, got %s (toFloat reads text as a number)", x.Op, kindNames[s.k])
			}
		}
		return KindNumber, nil
	}
	if !compatible(l, r) {
		return 0, errorf(x.At, "cannot compare %s with %s", kindNames[l], kindNames[r])
	}
	return KindNumber, nil
}

func (k *kinder) call(x *Call) (Kind, error) {
	name := strings.ToLower(x.Name)
	args := x.Args
	switch name {
	case "if", "multiif":
		var branches []Expr
		for i, a := range args {
			if i%2 == 0 && i != len(args)-1 {
				if _, err := k.want(a, KindNumber, "the condition of "+x.Name); err != nil {
					return 0, err
				}
			} else {
				branches = append(branches, a)
			}
		}
		return k.common(branches, x.Name)
	case "coalesce", "ifnull", "greatest", "least":
		return k.common(args, x.Name)
	case "lower", "upper", "lowerutf8", "upperutf8", "length", "lengthutf8", "substring", "extract", "trimboth",
		"trimleft", "trimright", "startswith", "endswith":
		for i, a := range args {
			want := KindString
			if (name == "substring") && i > 0 {
				want = KindNumber
			}
			if name == "extract" && i == 1 {
				want = KindString
			}
			if _, err := k.want(a, want, x.Name); err != nil {
				return 0, err
			}
		}
		if name == "length" || name == "lengthutf8" || name == "startswith" || name == "endswith" {
			return KindNumber, nil
		}
		return KindString, nil
	case "round", "abs", "floor", "ceil", "sqrt", "exp", "log", "log2", "log10", "pow", "intdiv":
		for _, a := range args {
			if _, err := k.want(a, KindNumber, x.Name); err != nil {
				return 0, err
			}
		}
		return KindNumber, nil
	case "tostring", "concat":
		for _, a := range args {
			if _, err := k.kind(a); err != nil {
				return 0, err
			}
		}
		return KindString, nil
	case "toint", "tofloat":
		for _, a := range args {
			if _, err := k.kind(a); err != nil {
				return 0, err
			}
		}
		return KindNumber, nil
	}
	for _, a := range args {
		if _, err := k.kind(a); err != nil {
			return 0, err
		}
	}
	return KindAny, nil
}
