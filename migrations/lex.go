package migrations

import "strings"

// A small lexer for the cluster compiler: words (keywords, names,
// numbers; backquoted and double-quoted names unquoted), string literals
// and single punctuation characters, with their byte positions in the
// statement. Spaces and comments are skipped, so they never match.

type tokKind int

const (
	tokIdent tokKind = iota
	tokString
	tokPunct
)

type token struct {
	kind       tokKind
	text       string
	start, end int
}

type tokens []token

func lex(s string) tokens {
	var out tokens
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			if end := strings.Index(s[i+2:], "*/"); end >= 0 {
				i += end + 4
			} else {
				i = len(s)
			}
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			end := min(j+1, len(s))
			kind := tokIdent
			if c == '\'' {
				kind = tokString
			}
			out = append(out, token{kind: kind, text: s[i+1 : min(j, len(s))], start: i, end: end})
			i = end
		case isWord(c):
			j := i
			for j < len(s) && isWord(s[j]) {
				j++
			}
			out = append(out, token{kind: tokIdent, text: s[i:j], start: i, end: j})
			i = j
		default:
			out = append(out, token{kind: tokPunct, text: s[i : i+1], start: i, end: i + 1})
			i++
		}
	}
	return out
}

func isWord(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// is reports whether the tokens from i are words (keywords, compared
// without case) or punctuation.
func (t tokens) is(i int, words ...string) bool {
	if i < 0 || i+len(words) > len(t) {
		return false
	}
	for k, w := range words {
		if tk := t[i+k]; tk.kind == tokString || !strings.EqualFold(tk.text, w) {
			return false
		}
	}
	return true
}

// ident is token i's text when it is a word or quoted name, else "".
func (t tokens) ident(i int) string {
	if i < 0 || i >= len(t) || t[i].kind != tokIdent {
		return ""
	}
	return t[i].text
}

// closing is the index of the ")" matching the "(" at i, or -1.
func (t tokens) closing(i int) int {
	depth := 0
	for j := i; j < len(t); j++ {
		if t[j].kind != tokPunct {
			continue
		}
		switch t[j].text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// find is the index of the first run of words outside parentheses from
// i on, or -1.
func (t tokens) find(i int, words ...string) int {
	depth := 0
	for j := i; j < len(t); j++ {
		if t[j].kind == tokPunct {
			switch t[j].text {
			case "(":
				depth++
			case ")":
				depth--
			}
		}
		if depth == 0 && t.is(j, words...) {
			return j
		}
	}
	return -1
}

// topLevel is the index of i and of every token after a comma outside
// parentheses from i on: the starts of an ALTER's operations.
func (t tokens) topLevel(i int) []int {
	out := []int{i}
	depth := 0
	for j := i; j < len(t); j++ {
		if t[j].kind != tokPunct {
			continue
		}
		switch t[j].text {
		case "(":
			depth++
		case ")":
			depth--
		case ",":
			if depth == 0 {
				out = append(out, j+1)
			}
		}
	}
	return out
}
