package querybuilder

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// An action step's CSS selector, matched against the event's elements
// chain (the clicked element first, then its ancestors), as PostHog's
// action matching did: the selector's last part may match any element of
// the chain, each part before it an ancestor of the element the next part
// matched (the parent, with >). Supported: tag names, #id, .class,
// [attr], [attr=value] (quoted or not), descendant and child combinators.

type selectorPart struct {
	tag     string
	id      string
	classes []string
	attrs   [][2]string // name, value ("" with present: any value)
	present []bool
	// child says this part's element is the parent of the next part's.
	child bool
}

const maxSelectorParts = 10

var (
	selectorIdent = `[A-Za-z_\-][A-Za-z0-9_\-]*`
	selectorToken = regexp.MustCompile(`^(?:(` + selectorIdent + `|\*)|#(` + selectorIdent + `)|\.(` + selectorIdent + `)|\[\s*(` +
		selectorIdent + `)\s*(?:=\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^\]\s]*))\s*)?\])`)
)

// parseSelector reads a selector, refusing what it cannot match.
func parseSelector(s string) ([]selectorPart, error) {
	s = strings.TrimSpace(s)
	if len(s) > 1000 {
		return nil, errors.New("a selector is at most 1000 characters")
	}
	var parts []selectorPart
	cur := selectorPart{}
	empty := true
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '>':
			j := i
			child := false
			for j < len(s) && strings.ContainsRune(" \t\n>", rune(s[j])) {
				if s[j] == '>' {
					if child {
						return nil, fmt.Errorf("%q: two > in a row", s)
					}
					child = true
				}
				j++
			}
			if empty {
				return nil, fmt.Errorf("%q: a combinator without an element before it", s)
			}
			if j == len(s) {
				if child {
					return nil, fmt.Errorf("%q ends with >", s)
				}
				i = j
				continue
			}
			cur.child = child
			parts = append(parts, cur)
			cur, empty, i = selectorPart{}, true, j
		default:
			m := selectorToken.FindStringSubmatch(s[i:])
			if m == nil {
				return nil, fmt.Errorf("%q: cannot read the selector at %q (supported: tag, #id, .class, [attr], [attr=value], descendant and > combinators)", s, s[i:])
			}
			switch {
			case m[1] != "":
				if !empty {
					return nil, fmt.Errorf("%q: a tag name must come first in its part", s)
				}
				if m[1] != "*" {
					cur.tag = strings.ToLower(m[1])
				}
			case m[2] != "":
				cur.id = m[2]
			case m[3] != "":
				cur.classes = append(cur.classes, m[3])
			default:
				value := m[5] + m[6] + m[7]
				value = strings.NewReplacer(`\"`, `"`, `\'`, `'`, `\\`, `\`).Replace(value)
				hasValue := strings.Contains(m[0], "=")
				cur.attrs = append(cur.attrs, [2]string{m[4], value})
				cur.present = append(cur.present, !hasValue)
			}
			empty = false
			i += len(m[0])
		}
	}
	if empty {
		return nil, fmt.Errorf("%q: an empty selector", s)
	}
	parts = append(parts, cur)
	if len(parts) > maxSelectorParts {
		return nil, fmt.Errorf("%q: at most %d parts", s, maxSelectorParts)
	}
	return parts, nil
}

// chainValue is how the elements chain writes an attribute value: quotes
// escaped with a backslash.
func chainValue(v string) string { return strings.ReplaceAll(v, `"`, `\"`) }

// partSQL is the condition that an element segment el meets one part.
func (p selectorPart) sql(sc *scope) string {
	conds := []string{"1"}
	if p.tag != "" {
		conds = append(conds, "match(el, "+sc.str("^"+regexp.QuoteMeta(p.tag)+"([.:]|$)")+")")
	}
	for _, c := range p.classes {
		conds = append(conds, "match(el, "+sc.str(`^[^:]*\.`+regexp.QuoteMeta(c)+`([.:]|$)`)+")")
	}
	if p.id != "" {
		conds = append(conds, "match(el, "+sc.str(`(?:^|[:"])attr_id="`+regexp.QuoteMeta(chainValue(p.id))+`"`)+")")
	}
	for i, a := range p.attrs {
		pattern := `(?:^|[:"])attr__` + regexp.QuoteMeta(a[0]) + `="`
		if !p.present[i] {
			pattern += regexp.QuoteMeta(chainValue(a[1])) + `"`
		}
		conds = append(conds, "match(el, "+sc.str(pattern)+")")
	}
	return strings.Join(conds, " AND ")
}

// selectorSQL is the condition that the chain matches the selector: per
// part, a flag per element; from the last part backwards, the elements
// where a part can match given the parts after it (an ancestor of such an
// element: a later position, or the very next with >).
func selectorSQL(parts []selectorPart, sc *scope) string {
	segs := fmt.Sprintf(elementSegments, propertyText(sc, "event", elementsChainKey))
	flags := func(p selectorPart) string { return "arrayMap(el -> " + p.sql(sc) + ", " + segs + ")" }
	valid := flags(parts[len(parts)-1])
	for k := len(parts) - 2; k >= 0; k-- {
		var reach string
		if parts[k].child {
			reach = "arrayPushFront(arrayPopBack(" + valid + "), 0)"
		} else {
			// An element after one where the later part matched: a
			// running count of the matches before it, shifted by one.
			reach = "arrayMap(c -> c > 0, arrayCumSum(arrayPushFront(arrayPopBack(" + valid + "), 0)))"
		}
		valid = "arrayMap((m, r) -> m AND r, " + flags(parts[k]) + ", " + reach + ")"
	}
	return "arrayExists(x -> x, " + valid + ")"
}
