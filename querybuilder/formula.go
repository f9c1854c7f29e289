package querybuilder

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// formula is a parsed trends formula: series letters (A is the first
// entity, B the second...), numbers, + - * / and parentheses. It is
// evaluated in Go over the series' numbers, never pasted into SQL.
type formula struct {
	op          byte // 0 for a leaf; '+', '-', '*', '/', or 'n' for negation
	left, right *formula
	series      int // a letter's series index, or -1 for a number
	num         float64
}

// Bounds that keep a hostile formula from exhausting the parser's stack.
const (
	maxFormulaLength = 1000
	maxFormulaDepth  = 100
)

// parseFormula reads a formula over n series. Letters are
// case-insensitive, as PostHog's are.
func parseFormula(s string, n int) (*formula, error) {
	if len(s) > maxFormulaLength {
		return nil, fmt.Errorf("formula is longer than %d characters", maxFormulaLength)
	}
	for i, r := range s {
		switch {
		case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case strings.ContainsRune("+-*/(). ", r):
		default:
			return nil, fmt.Errorf("formula may hold only series letters, numbers, + - * / ( ) and spaces; %q at position %d is none of these", r, i+1)
		}
	}
	p := &formulaParser{s: s, n: n}
	f, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		return nil, fmt.Errorf("formula: unexpected %q at position %d", p.s[p.i], p.i+1)
	}
	return f, nil
}

type formulaParser struct {
	s string
	i int
	n int
}

func (p *formulaParser) space() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *formulaParser) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *formulaParser) expr(depth int) (*formula, error) {
	if depth > maxFormulaDepth {
		return nil, fmt.Errorf("formula nests deeper than %d levels", maxFormulaDepth)
	}
	left, err := p.term(depth)
	if err != nil {
		return nil, err
	}
	for c := p.peek(); c == '+' || c == '-'; c = p.peek() {
		p.i++
		right, err := p.term(depth)
		if err != nil {
			return nil, err
		}
		left = &formula{op: c, left: left, right: right}
	}
	return left, nil
}

func (p *formulaParser) term(depth int) (*formula, error) {
	left, err := p.factor(depth)
	if err != nil {
		return nil, err
	}
	for c := p.peek(); c == '*' || c == '/'; c = p.peek() {
		p.i++
		right, err := p.factor(depth)
		if err != nil {
			return nil, err
		}
		left = &formula{op: c, left: left, right: right}
	}
	return left, nil
}

func (p *formulaParser) factor(depth int) (*formula, error) {
	if depth > maxFormulaDepth {
		return nil, fmt.Errorf("formula nests deeper than %d levels", maxFormulaDepth)
	}
	c := p.peek()
	switch {
	case c == 0:
		return nil, fmt.Errorf("formula ends where a series letter, number or ( was expected")
	case c == '-' || c == '+':
		p.i++
		f, err := p.factor(depth + 1)
		if err != nil || c == '+' {
			return f, err
		}
		return &formula{op: 'n', left: f}, nil
	case c == '(':
		p.i++
		f, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			return nil, fmt.Errorf("formula: missing ) at position %d", p.i+1)
		}
		p.i++
		return f, nil
	case c >= '0' && c <= '9' || c == '.':
		start := p.i
		for p.i < len(p.s) && (p.s[p.i] >= '0' && p.s[p.i] <= '9' || p.s[p.i] == '.') {
			p.i++
		}
		v, err := strconv.ParseFloat(p.s[start:p.i], 64)
		if err != nil {
			return nil, fmt.Errorf("formula: %q is not a number", p.s[start:p.i])
		}
		return &formula{series: -1, num: v}, nil
	case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		p.i++
		idx := int(c|0x20) - 'a'
		if idx >= p.n {
			return nil, fmt.Errorf("formula names series %c but the request has %d series (A to %c)", c&^0x20, p.n, 'A'+p.n-1)
		}
		if p.i < len(p.s) && (p.s[p.i]|0x20 >= 'a' && p.s[p.i]|0x20 <= 'z') {
			return nil, fmt.Errorf("formula: series letters stand alone; %q at position %d is not one", p.s[p.i-1:p.i+1], p.i)
		}
		return &formula{series: idx}, nil
	}
	return nil, fmt.Errorf("formula: unexpected %q at position %d", c, p.i+1)
}

// eval computes the formula with value(i) for series i; division by zero
// gives 0, as analytics.md says, and so does a result too large for a
// float (JSON has no infinity).
func (f *formula) eval(value func(int) float64) float64 {
	v := f.calc(value)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	return v
}

func (f *formula) calc(value func(int) float64) float64 {
	switch f.op {
	case 0:
		if f.series >= 0 {
			return value(f.series)
		}
		return f.num
	case 'n':
		return -f.left.calc(value)
	}
	a, b := f.left.calc(value), f.right.calc(value)
	switch f.op {
	case '+':
		return a + b
	case '-':
		return a - b
	case '*':
		return a * b
	}
	if b == 0 {
		return 0
	}
	return a / b
}
