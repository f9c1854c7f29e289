package importer

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Kind names a kind of record the importer copies; the checkpoint keeps
// one id map per kind.
type Kind string

// The kinds whose ids other records refer to.
const (
	KindAction     Kind = "action"
	KindCohort     Kind = "cohort"
	KindInsight    Kind = "insight"
	KindDashboard  Kind = "dashboard"
	KindAnnotation Kind = "annotation"
)

// ref is one id a record names, found by walking its JSON.
type ref struct {
	kind Kind
	id   int64
}

// walkRefs calls fn for every action or cohort id the document names,
// wherever it sits: legacy filters (entities of type "actions", property
// filters of type "cohort", cohort breakdowns, behavioral cohort filters
// on actions) and query nodes (ActionsNode, the same property filters and
// breakdowns). fn answers the id to put in its place, or an error.
// Group type indices are replaced through groups (nil: unchanged).
func walkRefs(v any, groups map[int]int, fn func(ref) (int64, error)) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			nv, err := walkRefs(child, groups, fn)
			if err != nil {
				return nil, err
			}
			x[k] = nv
		}
		typ, _ := x["type"].(string)
		kind, _ := x["kind"].(string)
		replace := func(key string, k Kind) error {
			raw, ok := x[key]
			if !ok || raw == nil {
				return nil
			}
			id, ok := idValue(raw)
			if !ok {
				return nil // a name, as events entities have
			}
			nid, err := fn(ref{kind: k, id: id})
			if err != nil {
				return err
			}
			if _, isString := raw.(string); isString {
				x[key] = strconv.FormatInt(nid, 10)
			} else {
				x[key] = nid
			}
			return nil
		}
		var err error
		switch {
		case typ == "actions" || kind == "ActionsNode":
			err = replace("id", KindAction)
		case typ == "cohort" || typ == "static-cohort" || typ == "precalculated-cohort":
			err = replace("value", KindCohort)
		case typ == "behavioral" && x["event_type"] == "actions":
			err = replace("key", KindAction)
		}
		if err == nil && typ == "behavioral" && x["seq_event_type"] == "actions" {
			err = replace("seq_event", KindAction)
		}
		if err != nil {
			return nil, err
		}
		if bt, _ := x["breakdown_type"].(string); bt == "cohort" {
			switch b := x["breakdown"].(type) {
			case []any:
				for i, e := range b {
					if id, ok := idValue(e); ok {
						nid, err := fn(ref{kind: KindCohort, id: id})
						if err != nil {
							return nil, err
						}
						b[i] = nid
					}
				}
			default:
				if err := replace("breakdown", KindCohort); err != nil {
					return nil, err
				}
			}
		}
		if groups != nil {
			for _, key := range []string{"group_type_index", "aggregation_group_type_index", "math_group_type_index", "groupTypeIndex"} {
				if n, ok := x[key].(float64); ok {
					if to, ok := groups[int(n)]; ok {
						x[key] = to
					}
				}
			}
		}
		return x, nil
	case []any:
		for i, child := range x {
			nv, err := walkRefs(child, groups, fn)
			if err != nil {
				return nil, err
			}
			x[i] = nv
		}
		return x, nil
	}
	return v, nil
}

// idValue reads an id: a JSON number, or a string of digits.
func idValue(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if n == float64(int64(n)) && n > 0 {
			return int64(n), true
		}
	case json.Number:
		i, err := n.Int64()
		return i, err == nil && i > 0
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil && i > 0
	}
	return 0, false
}

// refsOf lists the action and cohort ids raw names.
func refsOf(raw json.RawMessage) ([]ref, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	var out []ref
	_, err := walkRefs(v, nil, func(r ref) (int64, error) { out = append(out, r); return r.id, nil })
	return out, err
}

// mapRefs rewrites raw with the target's ids from m; an id the map lacks
// is an error naming what refers to it.
func mapRefs(raw json.RawMessage, m *IDMaps, groups map[int]int, what string) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return raw, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	v, err := walkRefs(v, groups, func(r ref) (int64, error) {
		to, ok := m.Get(r.kind, r.id)
		if !ok {
			return 0, fmt.Errorf("%s refers to %s %d, which was not copied (the source does not list it, or --only left it out)", what, r.kind, r.id)
		}
		return to, nil
	})
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}
