package hogql

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokenKind tells tokens apart; keywords are identifiers the parser
// recognizes by their upper-cased text.
type tokenKind int

const (
	tEOF tokenKind = iota
	tIdent
	tQuotedIdent // `name` or "name": never a keyword
	tNumber
	tString
	tOp // punctuation and operators, text in token.text
)

type token struct {
	kind tokenKind
	text string // identifier or operator text; a string's decoded value
	pos  int
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tString:
		return "string literal"
	case tNumber:
		return "number " + t.text
	case tQuotedIdent:
		return "identifier " + strconv.Quote(t.text)
	}
	return strconv.Quote(t.text)
}

// operators, longest first so that "<=" wins over "<".
var operators = []string{
	"->", "<=", ">=", "!=", "<>", "==", "||", "=~", "!~",
	"+", "-", "*", "/", "%", "=", "<", ">", "(", ")", "[", "]", ",", ".", "{", "}", "?", ":", ";",
}

// lex splits the input into tokens. It refuses what no HogQL text holds
// (control characters, stray bytes) and literals past the limits.
func lex(src string) ([]token, error) {
	if len(src) > MaxInputBytes {
		return nil, errorf(-1, "input is %d bytes, more than the %d allowed", len(src), MaxInputBytes)
	}
	if !utf8.ValidString(src) {
		return nil, errorf(-1, "input is not valid UTF-8")
	}
	var toks []token
	i := 0
	for i < len(src) {
		if len(toks) > MaxTokens {
			return nil, errorf(i, "input holds more than %d tokens", MaxTokens)
		}
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, errorf(i, "unterminated comment")
			}
			i += end + 4
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			if j-i > MaxIdentBytes {
				return nil, errorf(i, "identifier longer than %d bytes", MaxIdentBytes)
			}
			toks = append(toks, token{kind: tIdent, text: src[i:j], pos: i})
			i = j
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1]) && !afterValue(toks)):
			j := scanNumber(src, i)
			if j-i > MaxNumberChars {
				return nil, errorf(i, "number literal longer than %d characters", MaxNumberChars)
			}
			if j < len(src) && isIdentStart(src[j]) {
				return nil, errorf(i, "malformed number %q", clip(src[i:j+1]))
			}
			toks = append(toks, token{kind: tNumber, text: src[i:j], pos: i})
			i = j
		case c == '\'':
			s, j, err := scanQuoted(src, i, '\'', MaxStringBytes, "string")
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tString, text: s, pos: i})
			i = j
		case c == '`' || c == '"':
			s, j, err := scanQuoted(src, i, c, MaxIdentBytes, "quoted identifier")
			if err != nil {
				return nil, err
			}
			if s == "" {
				return nil, errorf(i, "empty quoted identifier")
			}
			toks = append(toks, token{kind: tQuotedIdent, text: s, pos: i})
			i = j
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				r, _ := utf8.DecodeRuneInString(src[i:])
				return nil, errorf(i, "unexpected character %q", r)
			}
			toks = append(toks, token{kind: tOp, text: op, pos: i})
			i += len(op)
		}
	}
	return append(toks, token{kind: tEOF, pos: len(src)}), nil
}

// afterValue reports whether the previous token ends a value, so that
// ".5" after it is field access (t.1 style), not a number.
func afterValue(toks []token) bool {
	if len(toks) == 0 {
		return false
	}
	t := toks[len(toks)-1]
	return t.kind == tIdent || t.kind == tQuotedIdent || t.kind == tNumber || t.kind == tString ||
		(t.kind == tOp && (t.text == ")" || t.text == "]"))
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') }

// scanNumber returns the end of the number starting at i: decimal
// integers, 0x hex integers, decimals with an optional exponent.
func scanNumber(src string, i int) int {
	j := i
	if strings.HasPrefix(src[i:], "0x") || strings.HasPrefix(src[i:], "0X") {
		j += 2
		for j < len(src) && isHex(src[j]) {
			j++
		}
		return j
	}
	for j < len(src) && isDigit(src[j]) {
		j++
	}
	if j < len(src) && src[j] == '.' && (j+1 >= len(src) || !isIdentStart(src[j+1])) {
		j++
		for j < len(src) && isDigit(src[j]) {
			j++
		}
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && isDigit(src[k]) {
			for k < len(src) && isDigit(src[k]) {
				k++
			}
			j = k
		}
	}
	return j
}

// scanQuoted decodes a quoted literal starting at src[i] == q: a doubled
// quote or a backslash escape stands for the quote; \n, \t, \r, \0, \b,
// \f, \a, \v, \\ and \xHH are decoded, any other escaped character is
// itself.
func scanQuoted(src string, i int, q byte, limit int, what string) (string, int, error) {
	var b strings.Builder
	j := i + 1
	for {
		if j >= len(src) {
			return "", 0, errorf(i, "unterminated %s", what)
		}
		c := src[j]
		switch {
		case c == q:
			if j+1 < len(src) && src[j+1] == q {
				b.WriteByte(q)
				j += 2
				continue
			}
			return b.String(), j + 1, nil
		case c == '\\':
			if j+1 >= len(src) {
				return "", 0, errorf(i, "unterminated %s", what)
			}
			e := src[j+1]
			j += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'a':
				b.WriteByte('\a')
			case 'v':
				b.WriteByte('\v')
			case 'x':
				if j+1 < len(src) && isHex(src[j]) && isHex(src[j+1]) {
					n, _ := strconv.ParseUint(src[j:j+2], 16, 8)
					b.WriteByte(byte(n))
					j += 2
				} else {
					b.WriteByte('x')
				}
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
			j++
		}
		if b.Len() > limit {
			return "", 0, errorf(i, "%s longer than %d bytes", what, limit)
		}
	}
}

// clip shortens input quoted in an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
