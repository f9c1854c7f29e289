package importer

import (
	"context"
	"encoding/json"
	"fmt"
)

// record is one object of a list, kept as the source sent it: fields
// PostHog adds that insightd lacks are carried along unread.
type record map[string]json.RawMessage

func (r record) id() int64 {
	var v any
	_ = json.Unmarshal(r["id"], &v)
	id, _ := idValue(v)
	return id
}

func (r record) str(key string) string {
	var s string
	_ = json.Unmarshal(r[key], &s)
	return s
}

func (r record) bool(key string) bool {
	var b bool
	_ = json.Unmarshal(r[key], &b)
	return b
}

// given says the field is present and not null.
func (r record) given(key string) bool {
	v, ok := r[key]
	return ok && len(v) > 0 && string(v) != "null"
}

// describe names a record in errors: its kind, id and name.
func (r record) describe(k Kind) string {
	name := r.str("name")
	if name == "" {
		name = r.str("content")
	}
	if name == "" {
		return fmt.Sprintf("%s %d", k, r.id())
	}
	return fmt.Sprintf("%s %d (%q)", k, r.id(), name)
}

// listRecords reads every record of a list of the project, leaving out
// deleted ones.
func listRecords(ctx context.Context, c *Client, rest string) ([]record, error) {
	var out []record
	err := c.List(ctx, rest, func(raw json.RawMessage) error {
		var r record
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("an object of %s cannot be read (%v): %.200s", rest, err, raw)
		}
		if !r.bool("deleted") {
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// body picks fields of r for a create, those r has (not null).
func (r record) body(fields ...string) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		if r.given(f) {
			out[f] = r[f]
		}
	}
	return out
}

// create posts body to rest and answers the new record's id; a refusal
// names the source record and the target's answer.
func (im *Importer) create(ctx context.Context, rest string, body map[string]any, what string) (int64, error) {
	var out record
	if err := im.dst.Post(ctx, im.dst.projectPath(rest), body, &out, false); err != nil {
		return 0, fmt.Errorf("copying %s: the target refused it: %w", what, err)
	}
	id := out.id()
	if id == 0 {
		return 0, fmt.Errorf("copying %s: the target answered without an id", what)
	}
	return id, nil
}

// exists says whether the target still has the record a checkpoint
// mapped (it may have been deleted since).
func (im *Importer) exists(ctx context.Context, rest string) (bool, error) {
	var r record
	err := im.dst.Get(ctx, im.dst.projectPath(rest), &r)
	switch {
	case err == nil:
		return !r.bool("deleted"), nil
	case IsStatus(err, 404):
		return false, nil
	}
	return false, err
}
