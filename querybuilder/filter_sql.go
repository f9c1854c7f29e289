package querybuilder

// Property conditions compiled to SQL: materialized columns for hot keys,
// bound keys and values for the rest.

import (
	"strings"
)

// materialized maps hot property keys to the events columns that hold
// them already extracted (migrations/clickhouse): filters and breakdowns
// on them read a column instead of parsing the JSON text. The columns
// hold what JSONExtractString gives, so both paths agree.
var materialized = map[string]string{
	"$current_url": "mat_current_url",
	"$pathname":    "mat_pathname",
	"$screen_name": "mat_screen_name",
	"$session_id":  "mat_session_id",
	"$browser":     "mat_browser",
	"$os":          "mat_os",
	"$device_type": "mat_device_type",
	"$group_0":     "mat_group_0",
	"$group_1":     "mat_group_1",
	"$group_2":     "mat_group_2",
	"$group_3":     "mat_group_3",
	"$group_4":     "mat_group_4",
}

// fewValueProperties are the event properties whose materialized column
// is LowCardinality (migrations/clickhouse/0001_events.sql): a property
// with few distinct values, where a set of actors per value and bucket
// stays small (foldedBreakdown).
var fewValueProperties = map[string]bool{"$browser": true, "$os": true, "$device_type": true}

// propertyText is a property as text: a string's value, the JSON text of
// a number or boolean, the empty string when missing or null.
func propertyText(sc *scope, typ, key string) string {
	if typ == "person" {
		return sc.person("JSONExtractString(properties, " + sc.str(key) + ")")
	}
	if typ == "session" {
		return sc.session(key)
	}
	if col, ok := materialized[key]; ok {
		return "e." + col
	}
	return "JSONExtractString(e.properties, " + sc.str(key) + ")"
}

// sql compiles the document to a boolean expression; "" means no
// condition. Every comparison is 0 or 1, never NULL, so NOT and OR behave
// as they read: a missing property does not match gt 5, and does match
// its negation.
func (f *PropertyFilter) sql(sc *scope) string {
	if f == nil {
		return ""
	}
	if f.Group != "" {
		var parts []string
		for _, v := range f.Values {
			if s := v.sql(sc); s != "" {
				parts = append(parts, s)
			}
		}
		var g string
		switch len(parts) {
		case 0:
			if !f.Negation {
				return ""
			}
			g = "1"
		case 1:
			g = parts[0]
		default:
			g = "(" + strings.Join(parts, " "+f.Group+" ") + ")"
		}
		if f.Negation {
			g = "NOT (" + g + ")"
		}
		return g
	}
	s := f.conditionSQL(sc)
	if f.Negation {
		s = "NOT (" + s + ")"
	}
	return s
}

func (f *PropertyFilter) conditionSQL(sc *scope) string {
	b := sc.binder
	switch f.Type {
	case condEvent:
		return "e.event = " + b.str(f.strs[0])
	case condURL:
		url := propertyText(sc, "event", "$current_url")
		switch f.Operator {
		case "exact":
			return url + " = " + b.str(f.strs[0])
		case "regex":
			return "match(" + url + ", " + b.str(f.strs[0]) + ")"
		}
		return "position(" + url + ", " + b.str(f.strs[0]) + ") > 0"
	case condElement:
		return f.elements.sql(sc)
	case condSelector:
		return selectorSQL(f.selector, sc)
	case condCohort:
		return f.cohortSQL(sc)
	case condBehavioral:
		return f.behaviorSQL(sc)
	}
	switch f.Operator {
	case "is_set", "is_not_set":
		set := "JSONType(e.properties, " + b.str(f.Key) + ") != 'Null'"
		if f.Type == "session" {
			set = sc.session(f.Key) + " != ''"
		}
		if f.Type == "person" {
			// A person without a row (or deleted) has nothing set.
			set = sc.person("JSONType(properties, "+b.str(f.Key)+") != 'Null'") + " = 1"
		}
		if f.Type == condGroup {
			set = groupIsSet(sc, f.GroupTypeIndex, f.Key)
		}
		if f.Operator == "is_not_set" {
			return "NOT (" + set + ")"
		}
		return set
	}
	x := propertyText(sc, f.Type, f.Key)
	if f.Type == condGroup {
		x = groupText(sc, f.GroupTypeIndex, f.Key)
	}
	switch f.Operator {
	case "exact", "is_not":
		eq, in := "=", "IN"
		if f.Operator == "is_not" {
			eq, in = "!=", "NOT IN"
		}
		if len(f.strs) == 1 {
			return x + " " + eq + " " + b.str(f.strs[0])
		}
		return x + " " + in + " " + b.bind("Array(String)", f.strs)
	case "icontains":
		return "positionCaseInsensitiveUTF8(" + x + ", " + b.str(f.strs[0]) + ") > 0"
	case "not_icontains":
		return "positionCaseInsensitiveUTF8(" + x + ", " + b.str(f.strs[0]) + ") = 0"
	case "regex":
		return "match(" + x + ", " + b.str(f.strs[0]) + ")"
	case "not_regex":
		return "NOT match(" + x + ", " + b.str(f.strs[0]) + ")"
	case "gt", "gte", "lt", "lte":
		op := map[string]string{"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[f.Operator]
		return "ifNull(toFloat64OrNull(" + x + ") " + op + " " + b.bind("Float64", f.num) + ", 0)"
	}
	// Dates: the property parsed as a date-time (naive values in the
	// project's timezone), compared with the condition's instant.
	d := "parseDateTime64BestEffortOrNull(" + x + ", 6, {tz:String})"
	switch f.Operator {
	case "is_date_before":
		return "ifNull(" + d + " < " + b.time(f.from) + ", 0)"
	case "is_date_after":
		return "ifNull(" + d + " > " + b.time(f.from) + ", 0)"
	default: // is_date_exact
		return "ifNull(" + d + " >= " + b.time(f.from) + " AND " + d + " < " + b.time(f.until) + ", 0)"
	}
}
