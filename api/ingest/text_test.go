package ingest

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzCleanJSONText checks the cleaning against encoding/json, which
// reads bytes that are not UTF-8 and lone surrogates as U+FFFD too: a
// cleaned document means what the original meant to Go, is valid UTF-8,
// and holds no lone surrogate for ClickHouse to stop at.
func FuzzCleanJSONText(f *testing.F) {
	for _, seed := range []string{`{"a":"b"}`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `{"a":"\ud83e\udd94"}`, `{"\udc00":["\ud800\ud800",1]}`,
		`{"a":"\\ud800"}`, `["\u0000", "\"\ud800"]`, "\"\xe2\x82\"", `{"a":"\ud800\u0041"}`, `{"a": "\ud800\`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := CleanJSONText(in)
		if !utf8.Valid(out) {
			t.Fatalf("%q cleaned to text that is not UTF-8: %q", in, out)
		}
		var a, b any
		errA, errB := json.Unmarshal(in, &a), json.Unmarshal(out, &b)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%q: valid before %v, after %v (%q)", in, errA, errB, out)
		}
		if errA != nil {
			return // JSON that is not valid is refused whole; only the bytes matter
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%q means %v, cleaned %q means %v", in, a, out, b)
		}
		if !onlyPairs(out) {
			t.Fatalf("%q cleaned to %q, which still holds a lone surrogate", in, out)
		}
	})
}

// onlyPairs reports whether every surrogate escape in valid JSON text is
// half of a pair.
func onlyPairs(b []byte) bool {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\\' {
			if b[i+1] == 'u' && escapeLength(b[i:]) == 0 {
				return false
			}
			i += escapeLength(b[i:]) - 1
		}
	}
	return true
}
