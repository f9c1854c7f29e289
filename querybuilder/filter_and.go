package querybuilder

import (
	"encoding/json"
	"strings"
)

// AndProperties joins property documents with AND, by structure: the
// result is a group {"type": "AND", "values": [...]} holding each
// non-empty document as it was written (a list, a group, a condition),
// except the oldest form (an object of key: value exact matches), which a
// group cannot hold (inside a group an object is a condition) and which
// is written as the group of its conditions. A document that does not
// decode is kept as it was, for the parser to refuse with its path. It
// returns nil when every document is empty.
func AndProperties(docs ...json.RawMessage) json.RawMessage {
	var values []json.RawMessage
	for _, raw := range docs {
		raw = unwrapDocument(raw)
		if isNull(raw) {
			continue
		}
		v, err := decodeValue(raw)
		if err != nil {
			values = append(values, raw)
			continue
		}
		switch x := v.(type) {
		case []any:
			if len(x) == 0 {
				continue
			}
		case map[string]any:
			switch {
			case len(x) == 0 || (len(x) == 1 && isGroupType(x["type"])):
				continue // no condition
			case !isGroup(x) && !isCondition(x):
				raw = legacyGroup(x)
			}
		}
		values = append(values, raw)
	}
	if len(values) == 0 {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"type": "AND", "values": values}) // raw JSON values always encode
	return b
}

// legacyGroup writes the oldest form's object as the group of its
// conditions, read as the parser reads it (propertyParser.legacy).
func legacyGroup(x map[string]any) json.RawMessage {
	conds := make([]any, 0, len(x))
	for _, k := range sortedKeys(x) {
		key, op := legacyKey(k)
		conds = append(conds, map[string]any{"key": key, "value": x[k], "operator": op})
	}
	b, _ := json.Marshal(map[string]any{"type": "AND", "values": conds}) // decoded JSON always encodes
	return b
}

// legacyKey splits an oldest-form key into the property and the
// operator: "$current_url__icontains" is $current_url, icontains; a key
// without a known operator suffix is an exact match.
func legacyKey(k string) (key, op string) {
	if i := strings.LastIndex(k, "__"); i > 0 && operators[k[i+2:]] {
		return k[:i], k[i+2:]
	}
	return k, "exact"
}
