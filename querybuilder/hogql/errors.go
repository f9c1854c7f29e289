// Package hogql is insightd's front end for a safe subset of HogQL,
// PostHog's SQL dialect: a lexer, a recursive-descent parser producing an
// AST, and a compiler that prints the AST back as ClickHouse SQL with every
// literal bound as a parameter and every name taken from an allow-list.
// It does no I/O and knows no schema: the caller resolves fields and
// tables (Resolver), so the same front end serves expression breakdowns
// and the query API.
package hogql

import "fmt"

// Error is every refusal of the package: where in the input (a byte
// offset, -1 when the refusal is not about one place) and what was
// refused.
type Error struct {
	Pos int
	Msg string
}

func (e *Error) Error() string {
	if e.Pos < 0 {
		return "hogql: " + e.Msg
	}
	return fmt.Sprintf("hogql: %s (at offset %d)", e.Msg, e.Pos)
}

func errorf(pos int, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Limits bound what the parser accepts, so that hostile input costs a
// bounded amount of memory and time and never overflows a stack (here or
// in the engine, whose own AST depth limit is 1000).
const (
	// MaxInputBytes is the longest query or expression text.
	MaxInputBytes = 64 << 10
	// MaxStringBytes is the longest string literal (after escapes).
	MaxStringBytes = 16 << 10
	// MaxNumberChars is the longest number literal.
	MaxNumberChars = 40
	// MaxIdentBytes is the longest identifier.
	MaxIdentBytes = 256
	// MaxDepth is the deepest nesting of expressions and subqueries.
	MaxDepth = 64
	// MaxTokens is the most tokens one input may hold.
	MaxTokens = 20000
)
