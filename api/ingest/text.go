package ingest

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// ClickHouse's JSON functions give up on a whole document at the first
// byte that is not UTF-8 or the first lone surrogate escape (\ud800 with
// no low half after it): every property of such an event would read as
// missing, in filters and breakdowns alike. PostHog stores such text with
// U+FFFD in place of what cannot be read, and so does capture, before
// anything else reads the body: only the string that held it changes.

// replacementEscape is U+FFFD as a JSON escape, the same length as the
// \uXXXX it replaces.
var replacementEscape = []byte(`\ufffd`)

// CleanJSONText returns body with each byte that is not UTF-8 replaced
// by U+FFFD (one per byte, as encoding/json decodes them) and each lone
// surrogate escape replaced by \ufffd. A body that needs neither is
// returned as is, without a copy: the common case costs one pass.
func CleanJSONText(body []byte) []byte {
	if utf8.Valid(body) && !hasSurrogateEscape(body) {
		return body
	}
	out := make([]byte, 0, len(body)+16)
	inString := false
	for i := 0; i < len(body); {
		c := body[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && n == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, body[i:i+n]...)
			}
			i += n
			continue
		}
		switch {
		case c == '"':
			inString = !inString
		case c == '\\' && inString && i+1 < len(body) && body[i+1] < utf8.RuneSelf:
			if n := escapeLength(body[i:]); n > 0 {
				out = append(out, body[i:i+n]...)
				i += n
				continue
			}
			if body[i+1] == 'u' && i+6 <= len(body) {
				out = append(out, replacementEscape...) // a lone surrogate
				i += 6
				continue
			}
			out = append(out, body[i:i+2]...)
			i += 2
			continue
		}
		out = append(out, c)
		i++
	}
	return out
}

// escapeLength is the length of the well-formed escape at the start of b
// (a backslash): 2 for \n and the like, 6 for \uXXXX, 12 for a surrogate
// pair; 0 for a \u escape of a lone surrogate.
func escapeLength(b []byte) int {
	if len(b) < 2 || b[1] != 'u' {
		return 2
	}
	hi, ok := hex4(b[2:])
	switch {
	case !ok:
		return 2 // not a \u escape the decoder takes; left for it to refuse
	case hi < 0xd800 || hi > 0xdfff:
		return 6
	case hi >= 0xdc00:
		return 0 // a low half first
	}
	if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
		if lo, ok := hex4(b[8:]); ok && lo >= 0xdc00 && lo <= 0xdfff {
			return 12
		}
	}
	return 0
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// hasSurrogateEscape reports whether body may hold a surrogate escape:
// \uD800 to \uDFFF, in either case. Surrogate pairs are common (emoji from
// encoders that escape everything beyond ASCII); only then does
// CleanJSONText look closer.
func hasSurrogateEscape(body []byte) bool {
	for i := 0; ; {
		j := bytes.Index(body[i:], []byte(`\u`))
		if j < 0 {
			return false
		}
		i += j + 2
		if i+1 < len(body) && (body[i] == 'd' || body[i] == 'D') {
			switch body[i+1] {
			case '8', '9', 'a', 'b', 'c', 'd', 'e', 'f', 'A', 'B', 'C', 'D', 'E', 'F':
				return true
			}
		}
	}
}

// The values of a JSON text capture reads.

// isPresent tells a field that was sent from a missing or null one.
func isPresent(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// isGiven is isPresent for fields where an empty string also means
// absent, as PostHog reads them: the official Go SDK sends "uuid": "" on
// every event, other clients "timestamp": "" or "sent_at": "". Refusing
// those would lose every event such a client sends.
func isGiven(raw json.RawMessage) bool {
	return isPresent(raw) && !bytes.Equal(raw, []byte(`""`))
}

func jsonString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	// raw is valid JSON: without escapes or bytes that are not UTF-8
	// (which decoding replaces), the text between the quotes is the value.
	if in := raw[1 : len(raw)-1]; bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return string(in), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func firstString(raws ...json.RawMessage) string {
	for _, r := range raws {
		if s, ok := jsonString(r); ok && s != "" {
			return s
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
