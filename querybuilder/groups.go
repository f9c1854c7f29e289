package querybuilder

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Groups ($groupidentify) have properties, versioned in the groups table
// (migrations/clickhouse 0008). Events name their group of each type in
// the materialized $group_N columns. A statement that reads group
// properties (conditions of type "group", breakdown_type "group") joins
// each event to its group of that type as it is now (the latest version
// of each property set), one join per group type read, carrying only the
// properties read: like persons, filters and breakdowns see the group's
// current properties, whatever they were when the event happened. An
// event without a group of the type, or whose group was never identified,
// has no group properties (each reads as missing).

// groupColumn registers an expression over a group's properties (type
// index) and returns the join's column holding its current value.
func (s *eventSource) groupColumn(index int, expr string) string {
	cols := s.groupCols[index]
	for i, e := range cols {
		if e == expr {
			return fmt.Sprintf("g%d.gp_%d", index, i)
		}
	}
	s.groupCols[index] = append(cols, expr)
	return fmt.Sprintf("g%d.gp_%d", index, len(cols))
}

// groupJoins joins each event to its groups' current values of the
// expressions registered so far, a join per group type read; "" when none
// is. A group's key is unique within its type after the GROUP BY, so the
// joins change no row.
func (s *eventSource) groupJoins() string {
	var sql strings.Builder
	for i, exprs := range s.groupCols {
		if len(exprs) == 0 {
			continue
		}
		cols := []string{"group_key"}
		for n, expr := range exprs {
			cols = append(cols, fmt.Sprintf("argMax(%s, version) AS gp_%d", expr, n))
		}
		alias := "g" + strconv.Itoa(i)
		sql.WriteString(`
LEFT JOIN (
    SELECT ` + strings.Join(cols, ",\n        ") + `
    FROM ` + s.schema.Groups + ` WHERE team_id = {team:Int64} AND group_type_index = ` + s.bind("UInt8", i) + `
    GROUP BY group_key
) AS ` + alias + ` ON ` + alias + `.group_key = ` + groupColumns[i])
	}
	return sql.String()
}

// groupLookup is a group property of every group of type index as one
// constant the engine computes once per statement, a tuple of five: the
// groups' keys by their cityHash64, each key's value number, the values
// by number (1-based), the keys as text, and whether looking keys up by
// their hash is exact. A trend groups events by groupValueKey, a number
// found through a small hash table built once, and only the grouped rows
// read the value (arrayElement(values, number), empty for 0: no group,
// or one never identified).
//
// The events are looked up by a hash of their key, not the key: hashing
// and looking up a number costs less per event than looking up the text,
// and reading the hash stored on the event (groupHashColumns) less still
// (benchmarks/results/breakdowns.md). That is exact only if no key an
// event can carry shares its hash with a group's key, nor with the empty
// key of events without a group. The lookup checks it over every key
// ever seen on events of the type or in its groups (Schema.GroupKeys,
// kept by materialized views): when two share a hash, or one shares the
// empty key's, the statement looks the text up instead (exact, at the
// text's cost). Failing instead would let anyone who can send events
// (cityHash64 collisions can be made on purpose) stop every breakdown by
// the type for good, since keys are never forgotten. An event whose key
// is new since the check read the keys (or, on a cluster, whose key
// replication has not brought yet) is looked up by hash unchecked: it is
// counted under another group's value only if its 64-bit hash equals
// that group key's.
//
// Both tables are read FINAL (one row per group, its highest version;
// one per key), cheaper than grouping versions by key with argMax
// (benchmarks/results/breakdowns.md). The statement waits for both
// before it reads an event. Values are grouped with their keys so that
// key and number come from the same row: the statement depends on no
// order of rows.
func groupLookup(sc *scope, index int, key string) string {
	prop := sc.str(key)
	where := "WHERE team_id = {team:Int64} AND group_type_index = " + sc.bind("UInt8", index)
	latest := "SELECT group_key, JSONExtractString(group_properties, " + prop + ") AS v\nFROM " + sc.schema.Groups + " FINAL " + where
	byValue := "SELECT groupArray((keys, v)) AS byValue\nFROM (\n" + indent("SELECT v, groupArray(group_key) AS keys\nFROM (\n"+indent(latest)+"\n)\nGROUP BY v") + "\n)"
	exact := "SELECT count() = uniqExact(h) AND countIf(h = cityHash64('')) = 0\nFROM (\n" +
		indent("SELECT cityHash64(group_key) AS h\nFROM "+sc.schema.GroupKeys+" FINAL "+where) + "\n)"
	return "(\n" + indent("SELECT (arrayMap(k -> cityHash64(k), arrayFlatten(arrayMap(x -> x.1, byValue))),\n"+
		"    arrayFlatten(arrayMap((x, n) -> arrayWithConstant(length(x.1), n), byValue, arrayEnumerate(byValue))),\n"+
		"    arrayMap(x -> x.2, byValue),\n"+
		"    arrayFlatten(arrayMap(x -> x.1, byValue)),\n"+
		"    (\n"+indent(indent(exact))+"\n    ))\nFROM (\n"+indent(byValue)+"\n)") + "\n)"
}

// groupValueKey is the number of the value of a group property
// (groupLookup) of the event's group of type index: 0 for none. The
// lookup's exactness is a constant of the statement, so each event takes
// one branch: by the key's hash, or by its text.
func groupValueKey(lookup string, index int) string {
	col, t := groupColumns[index], func(i int) string { return "tupleElement(" + lookup + ", " + strconv.Itoa(i) + ")" }
	return "if(" + t(5) + ", transform(" + groupHashColumns[index] + ", " + t(1) + ", " + t(2) + ", toUInt32(0)), transform(" + col + ", " + t(4) + ", " + t(2) + ", toUInt32(0)))"
}

// groupHashColumns are the events' cityHash64 of each $group_N, kept on
// the event (migrations/clickhouse 0011): reading the 8 bytes is cheaper
// than hashing the key's text per event (benchmarks/results/breakdowns.md).
var groupHashColumns = [maxGroupTypeIndex + 1]string{"e.mat_group_0_hash", "e.mat_group_1_hash", "e.mat_group_2_hash", "e.mat_group_3_hash", "e.mat_group_4_hash"}

// groupText is a group property of the event's group of type index as
// text (propertyText's group case).
func groupText(sc *scope, index int, key string) string {
	return sc.group(index, "JSONExtractString(group_properties, "+sc.str(key)+")")
}

// groupIsSet is the condition that the event's group of type index has
// the property set.
func groupIsSet(sc *scope, index int, key string) string {
	return sc.group(index, "JSONType(group_properties, "+sc.str(key)+") != 'Null'") + " = 1"
}

// usesGroups reports whether any condition reads group properties.
func (f *PropertyFilter) usesGroups() bool {
	if f == nil {
		return false
	}
	if f.Group == "" {
		return f.Type == condGroup
	}
	for _, v := range f.Values {
		if v.usesGroups() {
			return true
		}
	}
	return false
}

// condGroup is the condition type of group properties.
const condGroup = "group"

// GroupsQuery is a page of a project's groups of one type
// (/api/projects/:id/groups/): newest first, optionally those whose key
// or properties hold Search (any case), or the one whose key is Key.
type GroupsQuery struct {
	Schema         Schema
	ProjectID      int64
	GroupTypeIndex int
	Search         string
	// Key, when not nil, keeps only the group with this key.
	Key           *string
	Limit, Offset int
}

// Statement reads the page: columns group_type_index, group_key,
// group_properties, created_at and total (the count of groups matching,
// on every row).
func (q GroupsQuery) Statement() Statement {
	b := newBinder()
	b.named("team", "Int64", q.ProjectID)
	where := []string{"team_id = {team:Int64}", "group_type_index = " + b.bind("UInt8", q.GroupTypeIndex)}
	if q.Key != nil {
		where = append(where, "group_key = "+b.str(*q.Key))
	}
	having := ""
	if q.Search != "" {
		v := b.str(q.Search)
		having = "\nHAVING positionCaseInsensitiveUTF8(group_key, " + v + ") > 0 OR positionCaseInsensitiveUTF8(group_properties, " + v + ") > 0"
	}
	sql := `SELECT group_type_index, group_key, group_properties, created_at, count() OVER () AS total
FROM (
    SELECT group_type_index, group_key, argMax(group_properties, version) AS group_properties,
        argMax(created_at, version) AS created_at
    FROM ` + q.Schema.OrDefault().Groups + `
    WHERE ` + strings.Join(where, " AND ") + `
    GROUP BY group_type_index, group_key` + strings.ReplaceAll(having, "\n", "\n    ") + `
)
ORDER BY created_at DESC, group_key
LIMIT ` + b.bind("UInt64", uint64(q.Limit)) + ` OFFSET ` + b.bind("UInt64", uint64(q.Offset))
	return Statement{SQL: sql, Params: b.params}
}

// groupTypeIndexOf reads a group_type_index as sent (a number, or its
// text): a group type 0 to maxGroupTypeIndex.
func groupTypeIndexOf(v any) (int, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
	default:
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > maxGroupTypeIndex {
		return 0, false
	}
	return n, true
}

// parseBreakdownGroup reads the group type of a group breakdown:
// breakdown_group_type_index, or group_type_index inside breakdowns.
func parseBreakdownGroup(p Params, prefix string, pr *problems) *int {
	name, attr := "breakdown_group_type_index", "breakdown_group_type_index"
	if prefix != "" {
		name, attr = "group_type_index", "breakdowns"
	}
	var v any
	if raw, ok := p[name]; ok {
		v, _ = decodeValue(raw)
	}
	n, ok := groupTypeIndexOf(v)
	if !ok {
		pr.add(attr, "%s%s must be a group type 0 to %d with a group breakdown", prefix, name, maxGroupTypeIndex)
		return nil
	}
	return &n
}

// text is the breakdown property of an event as text: a group's through
// the group join, others as propertyText reads them.
func (bp BreakdownProp) text(sc *scope) string {
	if bp.Type == condGroup && bp.GroupTypeIndex != nil {
		return groupText(sc, *bp.GroupTypeIndex, bp.Property)
	}
	return propertyText(sc, bp.Type, bp.Property)
}
