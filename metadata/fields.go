package metadata

import (
	"encoding/json"
	"fmt"

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
