package metadata

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/lib/pq"
)

// field is one writeable field of a record R (a project, an insight): how
// to read a JSON value for it and how to get its current value in the same
// shape, for diffs.
type field[R any] struct {
	name  string
	parse func(raw json.RawMessage) (any, string)
	get   func(r *R) any
}

// parseFields checks the writeable fields present in body (any subset).
// Fields that are not writeable (read-only or unknown) are ignored, as
// PostHog does; the first bad value is a ValidationError naming it.
func parseFields[R any](fields []field[R], body map[string]json.RawMessage) (map[string]any, error) {
	values := map[string]any{}
	for _, f := range fields {
		raw, ok := body[f.name]
		if !ok {
			continue
		}
		v, problem := f.parse(raw)
		if problem != "" {
			return values, &ValidationError{Attr: f.name, Detail: problem}
		}
		values[f.name] = v
	}
	return values, nil
}

// changedFields compares the values sent with the record's current ones
// and returns, for the fields that really change, the UPDATE's SET clauses
// (parameters numbered from $1), their arguments, and the activity log's
// before/after entries (typ names the record kind there).
func changedFields[R any](typ string, fields []field[R], before *R, sent map[string]any) (sets []string, args []any, changes []Change) {
	for _, f := range fields {
		v, ok := sent[f.name]
		if !ok {
			continue
		}
		old := f.get(before)
		if jsonEqual(old, v) {
			continue
		}
		args = append(args, v)
		sets = append(sets, fmt.Sprintf("%s = $%d", pq.QuoteIdentifier(f.name), len(args)))
		changes = append(changes, Change{Type: typ, Field: f.name, Action: "changed", Before: old, After: v})
	}
	return sets, args, changes
}

// textOrEmpty reads a string of at most max characters (checkText), and
// null as "": the column is never null.
func textOrEmpty(max int) func(json.RawMessage) (any, string) {
	return func(raw json.RawMessage) (any, string) {
		if isNull(raw) {
			return "", ""
		}
		return readText(raw, max, false, "Must be a string.")
	}
}

// nullableText reads a string of at most max characters (checkText), or
// null.
func nullableText(max int) func(json.RawMessage) (any, string) {
	return func(raw json.RawMessage) (any, string) {
		if isNull(raw) {
			return nil, ""
		}
		return readText(raw, max, false, "Must be a string or null.")
	}
}

// trimmedText reads a string, trimmed as Django REST framework trims, of
// at most max characters. A nullable field takes null; the others read
// null as "" (the column is never null).
func trimmedText(max int, nullable bool) func(json.RawMessage) (any, string) {
	return func(raw json.RawMessage) (any, string) {
		if isNull(raw) {
			if nullable {
				return nil, ""
			}
			return "", ""
		}
		return readText(raw, max, true, "Must be a string.")
	}
}

// readText reads raw, which is not null, as a string of at most max
// characters (checkText), with surrounding white space trimmed first
// when trim; notString is the problem of any other JSON value.
func readText(raw json.RawMessage, max int, trim bool, notString string) (any, string) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, notString
	}
	if trim {
		s = strings.TrimSpace(s)
	}
	if problem := checkText(s, max); problem != "" {
		return nil, problem
	}
	return s, ""
}
