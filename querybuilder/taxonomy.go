package querybuilder

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/insightd/insightd/querybuilder/chsql"
)

// The taxonomy lists (analytics.md, "Taxonomy"): event_definitions/ and
// property_definitions/ read the small tables the event writer keeps
// (olap/taxonomy.go), never the events.

// TaxonomyDefaultLimit and TaxonomyMaxLimit bound a page (PostHog's
// default page is 100).
const (
	TaxonomyDefaultLimit = 100
	TaxonomyMaxLimit     = 10_000
)

// EventDefinitionsQuery is a parsed event_definitions/ request.
type EventDefinitionsQuery struct {
	Words         []string
	Names         []string // exact names (the MCP tool's lookups); nil for any
	Limit, Offset int
	Order         string
}

// eventDefinitionOrders are the orderings event_definitions/ takes, as
// SQL of the list's columns.
var eventDefinitionOrders = map[string]string{
	"name": "name", "-name": "name DESC",
	"last_seen_at": "last_seen_at, name", "-last_seen_at": "last_seen_at DESC, name",
	"volume_30_day": "volume_30_day, name", "-volume_30_day": "volume_30_day DESC, name",
	"created_at": "created_at, name", "-created_at": "created_at DESC, name",
}

// ParseEventDefinitions reads search, limit, offset and ordering.
func ParseEventDefinitions(params map[string]string) (EventDefinitionsQuery, error) {
	var p problems
	q := EventDefinitionsQuery{Words: searchWords(params["search"]), Order: "name"}
	q.Limit, q.Offset = taxonomyPage(params, &p)
	if o, ok := params["ordering"]; ok && o != "" {
		if _, known := eventDefinitionOrders[o]; !known {
			p.add("ordering", "ordering must be one of name, last_seen_at, volume_30_day, created_at (- for descending), got %q", o)
		}
		q.Order = o
	}
	return q, p.err()
}

func taxonomyPage(params map[string]string, p *problems) (limit, offset int) {
	limit = TaxonomyDefaultLimit
	if v, ok := params["limit"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > TaxonomyMaxLimit {
			p.add("limit", "limit must be a whole number from 1 to %d, got %q", TaxonomyMaxLimit, v)
		} else {
			limit = n
		}
	}
	if v, ok := params["offset"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			p.add("offset", "offset must be a whole number, 0 or more, got %q", v)
		} else {
			offset = n
		}
	}
	return limit, offset
}

// searchWords splits a search into words: a name matches when it holds
// every word, in any case (PostHog's term search).
func searchWords(s string) []string {
	return strings.Fields(s)
}

// BuildEventDefinitions lists the project's event names with their first
// and last times and events in the 30 days to now, one page, and the
// total in every row: columns name, created_at, last_seen_at,
// volume_30_day, total.
func BuildEventDefinitions(s chsql.Schema, team int64, q EventDefinitionsQuery, now time.Time) Statement {
	s = s.OrDefault()
	where := ""
	params := map[string]any{"team": team, "words": nonNil(q.Words), "since": now.AddDate(0, 0, -30).Truncate(24 * time.Hour),
		"limit": q.Limit, "offset": q.Offset}
	if q.Names != nil {
		where = " AND name IN {names:Array(String)}"
		params["names"] = q.Names
	}
	return Statement{SQL: `SELECT d.name AS name, d.created_at AS created_at, d.last_seen_at AS last_seen_at,
    v.volume AS volume_30_day, count() OVER () AS total
FROM (
    SELECT name, min(created_at) AS created_at, max(last_seen_at) AS last_seen_at
    FROM ` + s.EventDefinitions + `
    WHERE team_id = {team:Int64} AND arrayAll(w -> positionCaseInsensitiveUTF8(name, w) > 0, {words:Array(String)})` + where + `
    GROUP BY name
) AS d
LEFT JOIN (
    SELECT name, sum(events) AS volume
    FROM ` + s.EventVolume + `
    WHERE team_id = {team:Int64} AND day >= {since:DateTime64(6, 'UTC')}
    GROUP BY name
) AS v ON d.name = v.name
ORDER BY ` + eventDefinitionOrders[q.Order] + `
LIMIT {limit:UInt64} OFFSET {offset:UInt64}`, Params: params}
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// PropertyDefinitionsQuery is a parsed property_definitions/ request.
type PropertyDefinitionsQuery struct {
	// Kind is 1 event, 2 person, 3 group (olap.PropertyEvent...);
	// GroupTypeIndex counts only for groups.
	Kind           uint8
	Type           string
	GroupTypeIndex int
	Words          []string
	// EventNames, when given, mark the properties seen on those events
	// (is_seen_on_filtered_events); FilterByEventNames keeps only those.
	EventNames         []string
	FilterByEventNames bool
	Properties         []string // only these names; nil for any
	Excluded           []string
	ExcludeCore        bool
	IsNumerical        *bool
	PropertyType       string
	Limit, Offset      int
}

// propertyKinds are the type= values property_definitions/ serves.
var propertyKinds = map[string]uint8{"event": 1, "person": 2, "group": 3}

// ParsePropertyDefinitions reads PostHog's parameters of the list.
func ParsePropertyDefinitions(params map[string]string) (PropertyDefinitionsQuery, error) {
	var p problems
	q := PropertyDefinitionsQuery{Kind: 1, Type: "event", Words: searchWords(params["search"])}
	q.Limit, q.Offset = taxonomyPage(params, &p)
	if t, ok := params["type"]; ok && t != "" {
		k, known := propertyKinds[t]
		switch {
		case t == "session":
			p.add("type", "session properties are not listed here: a session's properties are the fixed columns of the sessions table (execute_sql reads them)")
		case !known:
			p.add("type", "type must be event, person or group, got %q", t)
		}
		q.Kind, q.Type = k, t
	}
	if v, ok := params["group_type_index"]; ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 4 {
			p.add("group_type_index", "group_type_index must be 0 to 4, got %q", v)
		}
		q.GroupTypeIndex = n
	} else if q.Kind == 3 {
		p.add("group_type_index", "type=group needs a group_type_index (0 to 4)")
	}
	if v, ok := params["event_names"]; ok && v != "" {
		if err := json.Unmarshal([]byte(v), &q.EventNames); err != nil || q.EventNames == nil {
			p.add("event_names", "event_names must be a JSON list of event names, got %q", v)
		}
	}
	q.FilterByEventNames = boolParam(params, "filter_by_event_names", &p)
	if q.FilterByEventNames && q.EventNames == nil {
		q.EventNames = []string{}
	}
	if v, ok := params["properties"]; ok && v != "" {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				q.Properties = append(q.Properties, name)
			}
		}
	}
	if v, ok := params["excluded_properties"]; ok && v != "" {
		if err := json.Unmarshal([]byte(v), &q.Excluded); err != nil {
			p.add("excluded_properties", "excluded_properties must be a JSON list of property names, got %q", v)
		}
	}
	q.ExcludeCore = boolParam(params, "exclude_core_properties", &p)
	if _, ok := params["is_numerical"]; ok {
		b := boolParam(params, "is_numerical", &p)
		q.IsNumerical = &b
	}
	if v, ok := params["property_type"]; ok && v != "" {
		switch v {
		case "String", "Numeric", "Boolean", "DateTime":
			q.PropertyType = v
		default:
			p.add("property_type", "property_type must be String, Numeric, Boolean or DateTime, got %q", v)
		}
	}
	boolParam(params, "exclude_hidden", &p) // nothing is hidden in insightd
	return q, p.err()
}

func boolParam(params map[string]string, name string, p *problems) bool {
	v, ok := params[name]
	if !ok || v == "" {
		return false
	}
	switch strings.ToLower(v) {
	case "true", "1":
		return true
	case "false", "0":
		return false
	}
	p.add(name, "%s must be true or false, got %q", name, v)
	return false
}

// BuildPropertyDefinitions lists one page of property names of q's kind:
// columns name, property_type, is_seen (on q.EventNames; 0 without
// them), total. Properties seen on the named events come first.
func BuildPropertyDefinitions(s chsql.Schema, team int64, q PropertyDefinitionsQuery) Statement {
	s = s.OrDefault()
	gti := 0
	if q.Kind == 3 {
		gti = q.GroupTypeIndex
	}
	params := map[string]any{"team": team, "kind": q.Kind, "gti": gti, "words": nonNil(q.Words),
		"excluded": nonNil(q.Excluded), "limit": q.Limit, "offset": q.Offset}
	where := ""
	if q.Properties != nil {
		where += " AND name IN {names:Array(String)}"
		params["names"] = q.Properties
	}
	if q.ExcludeCore {
		where += " AND NOT startsWith(name, '$') AND NOT startsWith(name, 'utm_')"
	}
	seen, order := "0", "name"
	if q.EventNames != nil {
		params["events"] = q.EventNames
		seen = `name IN (SELECT name FROM ` + s.EventProperties + ` WHERE team_id = {team:Int64} AND event IN {events:Array(String)})`
		order = "is_seen DESC, name"
	}
	outer := "1"
	if q.FilterByEventNames {
		outer += " AND is_seen"
	}
	if q.IsNumerical != nil {
		outer += " AND (property_type = 'Numeric') = {numerical:Bool}"
		params["numerical"] = *q.IsNumerical
	}
	if q.PropertyType != "" {
		outer += " AND property_type = {ptype:String}"
		params["ptype"] = q.PropertyType
	}
	return Statement{SQL: `SELECT name, property_type, is_seen, count() OVER () AS total
FROM (
    SELECT name, argMin(property_type, created_at) AS property_type, ` + seen + ` AS is_seen
    FROM ` + s.PropertyDefinitions + `
    WHERE team_id = {team:Int64} AND kind = {kind:UInt8} AND group_type_index = {gti:UInt8}
        AND arrayAll(w -> positionCaseInsensitiveUTF8(name, w) > 0, {words:Array(String)})
        AND NOT has({excluded:Array(String)}, name)` + where + `
    GROUP BY name
)
WHERE ` + outer + `
ORDER BY ` + order + `
LIMIT {limit:UInt64} OFFSET {offset:UInt64}`, Params: params}
}

// valuesSQL ranks the values of property prop on the rows of source
// (a subquery with a properties column): the 50 most common, each with
// the number of distinct values.
func valuesSQL(source string) string {
	return `SELECT v, count() OVER () AS distinct_values
FROM (
    SELECT if(JSONType(properties, {prop:String}) = 'String', JSONExtractString(properties, {prop:String}),
        JSONExtractRaw(properties, {prop:String})) AS v, count() AS n
    FROM (` + source + `)
    GROUP BY v
)
ORDER BY n DESC, v
LIMIT 50`
}

// EventPropertyValues are sample values of an event property: of the
// latest 100 000 events of the name in 30 days that carry it (the MCP
// tool's third level; the only taxonomy read of the events).
func EventPropertyValues(s chsql.Schema, team int64, event, prop string) Statement {
	s = s.OrDefault()
	return Statement{SQL: valuesSQL(`SELECT properties FROM ` + s.Events + `
        WHERE team_id = {team:Int64} AND event = {event:String} AND timestamp >= now64(6, 'UTC') - INTERVAL 30 DAY
            AND JSONHas(properties, {prop:String})
        LIMIT 100000`), Params: map[string]any{"team": team, "event": event, "prop": prop}}
}

// EntityPropertyValues are sample values of a person property (kind 2)
// or a group type's property (kind 3), over current persons or groups.
func EntityPropertyValues(s chsql.Schema, team int64, kind uint8, gti int, prop string) Statement {
	s = s.OrDefault()
	params := map[string]any{"team": team, "prop": prop, "gti": gti}
	if kind == 2 {
		return Statement{SQL: valuesSQL(`SELECT argMax(properties, version) AS properties FROM ` + s.Persons + `
        WHERE team_id = {team:Int64} GROUP BY id
        HAVING argMax(is_deleted, version) = 0 AND JSONHas(properties, {prop:String})
        LIMIT 100000`), Params: params}
	}
	return Statement{SQL: valuesSQL(`SELECT argMax(group_properties, version) AS properties FROM ` + s.Groups + `
        WHERE team_id = {team:Int64} AND group_type_index = {gti:UInt8} GROUP BY group_key
        HAVING JSONHas(properties, {prop:String})
        LIMIT 100000`), Params: params}
}
