package querybuilder

// Paths over item hashes (every paths statement but the actors behind a
// path, which read the text: PathsQuery.Actors). Each actor's items are
// grouped as 64-bit hashes of their text (pathItemHash), not as the
// text: grouping texts into arrays costs as much as the whole floor,
// grouping numbers far less (benchmarks/results/paths.md, "Items as
// hashes"). Sorting, compacting and counting then move 8 bytes an event
// instead of a string; the edges counted are named once, from the
// range's distinct items.
//
// That is exact only if no two items of the range share a hash: two that
// did would count as one, and compaction would fold them into one step.
// The names are the check. They are the range's distinct items (distinct
// before cleaning too, so a cleaning rule runs once per distinct raw
// item, not once per event), read by a scalar subquery the engine runs
// before the events; when their hashes are fewer than they are, or an
// edge's item has no name (an item first sent after that read), the
// statement fails with FallbackCheck and the engine runs the text
// statement instead (Statement.Fallback). Failing rather than answering
// matters because cityHash64 collisions can be made on purpose: a project
// that holds one pays the names scan and then the text statement, never
// a wrong count. An item first sent after the names were read whose hash
// equals another item's goes unnoticed: the odds of two 64-bit hashes
// matching. Both reads should see one snapshot of the parts anyway
// (enable_shared_storage_snapshot_in_query, on by default in the
// engine insightd embeds); where they do not, a query over a range still
// taking new items may fall back after running whole (twice the time).
//
// The names scan leaves out the request's properties and exclusions: on
// a narrow property filter over a range with many distinct items it can
// cost more than it saves.

import "strings"

// pathItemHash is the engine function that hashes an item; tests swap in
// one that collides (SetPathItemHash in export_test.go).
var pathItemHash = "cityHash64"

// hashedPerActor is perActor with items as hashes: columns a, ts and
// items (UInt64), sorted by (time, uuid). The uuid is grouped as a third
// array (UInt128, toUInt128's order is the text's) and read only by an
// actor with two events at one time.
func (q *PathsQuery) hashedPerActor(s *eventSource) string {
	actor, where := q.eventsRead(s)
	cols := append([]string{actor + " AS a", "toUnixTimestamp64Micro(e.timestamp) AS t", "toUInt128(e.uuid) AS u"}, q.itemColumns(s)...)
	cols = append(cols, pathItemHash+"(item) AS h")
	events := s.selectFrom(cols, q.read(), where)
	if len(q.Exclude) > 0 {
		events = "SELECT a, t, u, h\nFROM (\n" + indent(events) + "\n)\nWHERE item NOT IN " + s.bind("Array(String)", q.Exclude)
	}
	grouped := "SELECT a, groupArray(t) AS t_arrival, groupArray(u) AS u_arrival, groupArray(h) AS h_arrival\nFROM (\n" +
		indent(events) + "\n)\nGROUP BY a"
	return "SELECT a, arraySort((x, t) -> t, arrayZip(t_arrival, h_arrival), t_arrival) AS by_time, by_time.1 AS ts,\n" +
		"    if(arrayExists((x, y) -> x = y, arrayPopBack(ts), arrayPopFront(ts)),\n" +
		"        arraySort((x, t, k) -> (t, k), h_arrival, t_arrival, u_arrival), by_time.2) AS items\n" +
		"FROM (\n" + indent(grouped) + "\n)"
}

// pathNames is the scalar subquery naming item hashes: a tuple of the
// range's distinct items' hashes, their texts, and their numbers (1..n,
// for transform), and 0 from the check that the hashes are distinct
// (which fails the statement otherwise). It reads every event of the
// range's event types, a superset of the events the paths read
// (properties and exclusions left out), so that every item of a path is
// named and checked.
func (q *PathsQuery) pathNames(s *eventSource) string {
	raw, item := q.item(s), "raw"
	if q.pagesOnly() {
		raw, item = propertyText(&s.scope, "event", "$current_url"), pageItem("raw")
	}
	where := []string{"e.team_id = {team:Int64}", s.rangeSpan().sql()}
	if c := q.eventCond(s); c != "" {
		where = append(where, c)
	}
	distinctRaw := "SELECT DISTINCT " + raw + " AS raw\nFROM " + s.schema.Events + " AS e\nWHERE " + strings.Join(where, "\n  AND ")
	cleaned := "SELECT " + strings.Join(q.cleanedItem(s, item), ", ") + "\nFROM (\n" + indent(distinctRaw) + "\n)"
	if points := q.points(); len(points) > 0 {
		// The points (and the ... item) are compared by hash too: they
		// join the check, so that none shares a hash with an item.
		cleaned = "SELECT item\nFROM (\n" + indent(cleaned) + "\n)\nUNION ALL\nSELECT arrayJoin(" + s.bind("Array(String)", points) + ") AS item"
	}
	items := "SELECT DISTINCT item\nFROM (\n" + indent(cleaned) + "\n)"
	named := "SELECT groupArray((h, item)) AS n, throwIf(uniqExact(h) != count(), '" + FallbackCheck + "') AS collided\nFROM (\n" +
		indent("SELECT item, "+pathItemHash+"(item) AS h\nFROM (\n"+indent(items)+"\n)") + "\n)"
	return "(\n" + indent("SELECT (arrayMap(x -> x.1, n), arrayMap(x -> x.2, n), arrayMap(x -> toUInt32(x), arrayEnumerate(n)), collided)\nFROM (\n"+indent(named)+"\n)") + "\n)"
}

// points are the start and end points, and the ... item with both.
func (q *PathsQuery) points() []string {
	var out []string
	for _, p := range []string{q.Start, q.End} {
		if p != "" {
			out = append(out, p)
		}
	}
	if len(out) == 2 {
		out = append(out, pathEllipsis)
	}
	return out
}

// namedEdges names the counted edges' item hashes (columns i, from_item,
// to_item, value, average_conversion_time) through names (pathNames),
// failing the statement for a hash without a name.
func namedEdges(counted, names string) string {
	numbered := "SELECT *, transform(from_item, names.1, names.3, toUInt32(0)) AS fi, transform(to_item, names.1, names.3, toUInt32(0)) AS ti\nFROM (\n" +
		indent(counted) + "\n)"
	return "WITH " + names + " AS names\n" +
		"SELECT concat(toString(i), '_', names.2[fi]) AS source, concat(toString(i + 1), '_', names.2[ti]) AS target, value, average_conversion_time\nFROM (\n" +
		indent(numbered) + "\n)\nWHERE throwIf(fi = 0 OR ti = 0 OR names.4 != 0, '" + FallbackCheck + "') = 0"
}
