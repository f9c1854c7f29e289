package hogql

import (
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary text to both entry points: nothing panics,
// every refusal is a *Error, and what compiles holds no text of the
// input outside bound parameters.
func FuzzParse(f *testing.F) {
	for _, tc := range accepted {
		f.Add(tc.input)
	}
	for _, tc := range refused {
		if len(tc.input) < 2000 {
			f.Add(tc.input)
		}
	}
	f.Fuzz(func(t *testing.T, input string) {
		// The breakdown path: the subset's compiler and the kind check.
		if e, err := ParseExpr(input); err == nil {
			kindErr := CheckKinds(e, func([]string) Kind { return KindString })
			sql, _, err := CompileExpr(e, &Compiler{Resolver: testResolver{}, Only: BreakdownFunctions})
			for _, err := range []error{kindErr, err} {
				var he *Error
				if err != nil && !errors.As(err, &he) {
					t.Fatalf("refusal %v (%T) is not a *hogql.Error", err, err)
				}
			}
			if err == nil {
				if err := checkNoInputText(sql); err != nil {
					t.Fatalf("input %q: %v", input, err)
				}
			}
		}
		for _, kind := range []int{expr, sel} {
			sql, _, err := compileText(kind, input)
			if err != nil {
				var he *Error
				if !errors.As(err, &he) {
					t.Fatalf("refusal %v (%T) is not a *hogql.Error", err, err)
				}
				continue
			}
			if err := checkNoInputText(sql); err != nil {
				t.Fatalf("input %q: %v", input, err)
			}
		}
	})
}
