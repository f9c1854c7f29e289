package hogql

import (
	"strings"
)

// testResolver maps the fields and tables of a small events schema, the
// way querybuilder does: its SQL is made of fixed names and bound values.
type testResolver struct{}

func (testResolver) Field(ref FieldRef, bind func(typ string, v any) string) (string, error) {
	q := "e."
	if ref.Alias != "" {
		q = ref.Alias + "."
	}
	ch := ref.Chain
	switch {
	case ref.Table == "persons" && len(ch) == 1 && ch[0] == "id":
		return q + "id", nil
	case ref.Table == "persons" && len(ch) == 2 && ch[0] == "properties":
		return "JSONExtractString(" + q + "properties, " + bind("String", ch[1]) + ")", nil
	case ref.Table == "persons":
	case len(ch) == 1 && (ch[0] == "event" || ch[0] == "timestamp" || ch[0] == "distinct_id" || ch[0] == "person_id"):
		return q + ch[0], nil
	case len(ch) == 1 && ch[0] == "$session_id":
		return q + "mat_session_id", nil
	case len(ch) == 2 && ch[0] == "properties":
		if ch[1] == "$browser" {
			return q + "mat_browser", nil
		}
		return "JSONExtractString(" + q + "properties, " + bind("String", ch[1]) + ")", nil
	case len(ch) == 3 && ch[0] == "person" && ch[1] == "properties":
		return "JSONExtractString(pp.properties, " + bind("String", ch[2]) + ")", nil
	}
	return "", &Error{Pos: -1, Msg: "field " + strings.Join(ch, ".") + " is not allowed"}
}

func (testResolver) Table(name string, bind func(typ string, v any) string) (string, error) {
	switch name {
	case "events", "persons":
		return "(SELECT * FROM " + name + " WHERE team_id = {team:Int64})", nil
	}
	return "", &Error{Pos: -1, Msg: "table " + name + " is not allowed"}
}

// resolverWords are the identifiers testResolver writes.
var resolverWords = []string{"e", "event", "timestamp", "distinct_id", "person_id", "mat_session_id", "mat_browser",
	"properties", "JSONExtractString", "pp", "id", "SELECT", "FROM", "events", "persons", "WHERE", "team_id", "team", "Int64"}
