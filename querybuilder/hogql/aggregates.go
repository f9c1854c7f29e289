package hogql

import "strings"

// HasAggregate reports whether e calls an aggregate function outside a
// subquery: a select of it groups by the columns that do not.
func HasAggregate(e Expr) bool {
	found := false
	var walk func(Expr)
	walk = func(e Expr) {
		if e == nil || found {
			return
		}
		switch x := e.(type) {
		case *Call:
			if f, ok := functions[strings.ToLower(x.Name)]; ok && f.agg {
				found = true
				return
			}
			for _, a := range x.Args {
				walk(a)
			}
		case *Alias:
			walk(x.X)
		case *Binary:
			walk(x.Left)
			walk(x.Right)
		case *Logic:
			for _, i := range x.Items {
				walk(i)
			}
		case *Unary:
			walk(x.X)
		case *In:
			walk(x.X)
			walk(x.Set)
		case *Between:
			walk(x.X)
			walk(x.Lo)
			walk(x.Hi)
		case *IsNull:
			walk(x.X)
		case *Case:
			walk(x.Operand)
			for _, w := range x.Whens {
				walk(w.Cond)
				walk(w.Then)
			}
			walk(x.Else)
		case *Array:
			for _, i := range x.Items {
				walk(i)
			}
		case *Tuple:
			for _, i := range x.Items {
				walk(i)
			}
		case *Index:
			walk(x.X)
			walk(x.Index)
		}
	}
	walk(e)
	return found
}
