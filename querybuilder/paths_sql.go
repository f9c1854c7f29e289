package querybuilder

import (
	"errors"
	"fmt"
	"strings"
)

// Paths statements answer one row per edge: source, target, value and
// average_conversion_time (milliseconds), ordered and limited.
var pathsColumns = []string{"source", "target", "value", "average_conversion_time"}

// BuildPaths writes the paths statement, one statement in four steps
// (analytics.md, Paths):
//
//  1. the events read, each with its actor, time (microseconds), uuid and
//     item: page, screen or event name, cleaned and grouped; excluded
//     items dropped;
//  2. per actor, the events sorted by (time, uuid) with arraySort, never
//     relying on the order rows arrive in (with funnel paths, only those
//     within the actor's step times);
//  3. per path: the actor's events split at gaps of 30 minutes, runs of
//     one item compacted to their last event, cut at the start and end
//     points and to step_limit items;
//  4. edges: each path's consecutive items as "{i}_{item}" pairs (ARRAY
//     JOIN), counted and averaged, filtered by weight, ordered and
//     limited. Unreachable edges are dropped when shaping (ShapePaths).
//
// Without start and end points, steps 3 and 4 work on each actor's whole
// arrays (flatEdges); with one, on a row per path (paths). Items are
// hashes, named after counting, with the text statement as the fallback
// (paths_hashed.go).
func BuildPaths(q *PathsQuery, f Facts) (Statement, error) {
	if q.clock.loc == nil {
		return Statement{}, errors.New("querybuilder: paths needs a request that ParsePaths validated")
	}
	text, err := q.build(f, false)
	if err != nil {
		return text, err
	}
	hashed, err := q.build(f, true)
	if err != nil {
		return Statement{}, err
	}
	hashed.Fallback = &text
	return hashed, nil
}

// build is BuildPaths' statement, with items as text or as hashes
// (paths_hashed.go).
func (q *PathsQuery) build(f Facts, hashed bool) (Statement, error) {
	s, perActor, err := q.perActorSource(f, hashed)
	if err != nil {
		return Statement{}, err
	}
	var edges string
	if q.Start == "" && q.End == "" {
		edges = q.flatEdges(s, perActor, hashed)
	} else {
		edges = "SELECT i, from_item, to_item, d\nFROM (\n" + indent(q.paths(s, perActor, false, hashed)) + "\n)\n" + edgesJoin
	}
	var having []string
	if q.MinWeight > 0 {
		having = append(having, "value >= "+s.bind("UInt64", uint64(q.MinWeight)))
	}
	if q.MaxWeight > 0 {
		having = append(having, "value <= "+s.bind("UInt64", uint64(q.MaxWeight)))
	}
	// Edges are counted by (position, item, item) and named after: the
	// "{i}_{item}" text is made once per edge counted, not once per path
	// taking it.
	counted := "SELECT i, from_item, to_item, count() AS value, avg(d / 1000) AS average_conversion_time\nFROM (\n" + indent(edges) +
		"\n)\nGROUP BY i, from_item, to_item"
	if len(having) > 0 {
		counted += "\nHAVING " + strings.Join(having, " AND ")
	}
	named := "SELECT concat(toString(i), '_', from_item) AS source, concat(toString(i + 1), '_', to_item) AS target, value, average_conversion_time\nFROM (\n" +
		indent(counted) + "\n)"
	if hashed {
		named = namedEdges(counted, q.pathNames(s))
	}
	sql := named + "\nORDER BY value DESC, source, target\nLIMIT " + s.bind("UInt64", uint64(q.EdgeLimit))
	return s.statement(sql), nil
}

// edgesJoin zips each path's consecutive items (p) and times (pt) into
// its edges: position i, from_item, to_item and d, the microseconds
// between them. Arrays of one length, so that no row's path is copied
// once per edge.
const edgesJoin = "ARRAY JOIN arrayEnumerate(arrayPopBack(p)) AS i, arrayPopBack(p) AS from_item, arrayPopFront(p) AS to_item, arrayPopFront(arrayDifference(pt)) AS d"

// perActorSource resolves what depends on the facts and gives steps 1
// and 2, the rows of each actor's sorted events (perActor, narrowed to
// the funnel's actors and times with funnel paths), and their source.
func (q *PathsQuery) perActorSource(f Facts, hashed bool) (*eventSource, string, error) {
	if err := q.applyFacts(f); err != nil {
		return nil, "", err
	}
	s := newEventSource(&q.Common, f)
	var perActor string
	if hashed {
		perActor = q.hashedPerActor(s)
	} else {
		perActor = q.perActor(s)
	}
	if q.Funnel != nil {
		if err := q.Funnel.applyFacts(f); err != nil {
			return nil, "", err
		}
		perActor = q.withinFunnel(s, perActor)
	}
	return s, perActor, nil
}

// edges is step 4's rows before counting, for the actors behind edges:
// one per edge a path takes, with its source, target and time apart (dt,
// milliseconds), and with actor the path's actor a.
func (q *PathsQuery) edges(paths string, actor bool) string {
	return "SELECT " + carried(actor) + "concat(toString(i), '_', from_item) AS source, concat(toString(i + 1), '_', to_item) AS target, d / 1000 AS dt\n" +
		"FROM (\n" + indent(paths) + "\n)\n" + edgesJoin
}

// flatEdges is steps 3 and 4 without start and end points, on each
// actor's whole arrays rather than a row per path: most paths are one
// event, and splitting them into rows cost more than the rest of the
// statement (benchmarks/results/paths.md). Per event: whether it starts a
// path (the first, or 30 minutes after the one before) or ends one; kept
// if it ends its path or the next item differs (a run keeps its last
// event); pos, its position among its path's kept events. An edge runs
// from a kept event at pos 1 to step_limit - 1 that does not end its path
// to the next kept one (pos 2 to step_limit): filtered apart, the i-th
// from and the i-th to are one edge. The columns are i (the from pos),
// from_item, to_item and d (microseconds apart). The lambdas take only
// arrays as arguments: one that reads another array of the row makes the
// engine copy that array for every element.
func (q *PathsQuery) flatEdges(s *eventSource, perActor string, hashed bool) string {
	none := "''" // what the last item is compared with
	if hashed {
		none = "0"
	}
	gap := fmt.Sprint(int64(pathSessionGapMins) * 60 * 1_000_000)
	k := s.bind("UInt64", uint64(q.StepLimit))
	marks := "SELECT arrayMap((d, j) -> j = 1 OR d >= " + gap + ", arrayDifference(ts), arrayEnumerate(ts)) AS starts,\n" +
		"    arrayPushBack(arrayPopFront(starts), 1) AS ends,\n" +
		"    arrayMap((x, y, e) -> e OR x != y, items, arrayShiftLeft(items, 1, " + none + "), ends) AS keep,\n" +
		"    arrayCumSum(keep) AS kept,\n" +
		"    arrayMap((c, b) -> c - b, kept, arrayFill((x, st) -> st, arrayMap((c, x) -> c - x, kept, keep), starts)) AS pos,\n" +
		"    arrayMap((x, p, e) -> x AND p < " + k + " AND NOT e, keep, pos, ends) AS from_mask,\n" +
		"    arrayMap((x, p) -> x AND p >= 2 AND p <= " + k + ", keep, pos) AS to_mask,\n" +
		"    arrayFilter((x, m) -> m, pos, from_mask) AS steps,\n" +
		"    arrayFilter((x, m) -> m, items, from_mask) AS from_items, arrayFilter((x, m) -> m, items, to_mask) AS to_items,\n" +
		"    arrayMap((x, y) -> x - y, arrayFilter((x, m) -> m, ts, to_mask), arrayFilter((x, m) -> m, ts, from_mask)) AS ds\n" +
		"FROM (\n" + indent(perActor) + "\n)"
	return "SELECT i, from_item, to_item, d\nFROM (\n" + indent(marks) + "\n)\n" +
		"ARRAY JOIN steps AS i, from_items AS from_item, to_items AS to_item, ds AS d"
}

// carried is the actor column a step carries along when its rows serve
// the actors behind the edges (PathsQuery.Actors); the edges themselves
// leave it out, so that no path drags its actor along.
func carried(actor bool) string {
	if actor {
		return "a, "
	}
	return ""
}

// item is an event's path item before cleaning: a pageview's URL with
// one trailing slash removed ("/" stays), a screen's name, else the
// event's name. Only the branches the events read can take are written:
// over pageviews alone, the item is the URL expression (a multiIf costs
// every row its branches' masks).
func (q *PathsQuery) item(s *eventSource) string {
	url := propertyText(&s.scope, "event", "$current_url")
	screen := propertyText(&s.scope, "event", "$screen_name")
	switch {
	case q.pagesOnly():
		return pageItem(url)
	case q.Screens && !q.Pageviews && !q.AllCustom && len(q.CustomEvents) == 0:
		return screen
	}
	return "multiIf(e.event = '$pageview', " + pageItem(url) + ",\n        e.event = '$screen', " + screen + ", e.event)"
}

// pageItem is the item of a pageview's URL: one trailing slash removed.
// One substring rather than if(…, substring(…), url): if copies every
// row's text a second time.
func pageItem(url string) string {
	return fmt.Sprintf("substring(%[1]s, 1, length(%[1]s) - (length(%[1]s) > 1 AND endsWith(%[1]s, '/')))", url)
}

// pagesOnly reports whether the events read are pageviews alone.
func (q *PathsQuery) pagesOnly() bool {
	return q.Pageviews && !q.Screens && !q.AllCustom && len(q.CustomEvents) == 0
}

// itemColumns are the columns computing an event's item: the item after
// the cleaning rules (each a replace-all with a literal alias), then the
// groupings (the first matching one replaces it), ending with item.
func (q *PathsQuery) itemColumns(s *eventSource) []string {
	return q.cleanedItem(s, q.item(s))
}

// cleanedItem is itemColumns over the item before cleaning, item.
func (q *PathsQuery) cleanedItem(s *eventSource, item string) []string {
	for _, r := range q.Cleaning {
		// replaceRegexpAll reads \0-\9 in the replacement as groups:
		// the alias is literal text, so its backslashes are escaped.
		item = "replaceRegexpAll(" + item + ", " + s.str(r.Regex) + ", " + s.str(strings.ReplaceAll(r.Alias, `\`, `\\`)) + ")"
	}
	if len(q.Groupings) == 0 {
		return []string{item + " AS item"}
	}
	var b strings.Builder
	b.WriteString("multiIf(")
	for i, pattern := range q.groupingPatterns() {
		fmt.Fprintf(&b, "item_clean LIKE %s, %s, ", s.str(pattern), s.str(q.Groupings[i]))
	}
	b.WriteString("item_clean) AS item")
	return []string{item + " AS item_clean", b.String()}
}

// eventCond selects the events paths read (include_event_types and
// include_custom_events; none of them: every event).
func (q *PathsQuery) eventCond(s *eventSource) string {
	var or []string
	if q.Pageviews {
		or = append(or, "e.event = '$pageview'")
	}
	if q.Screens {
		or = append(or, "e.event = '$screen'")
	}
	if q.AllCustom {
		or = append(or, "NOT startsWith(e.event, '$')")
	}
	if len(q.CustomEvents) > 0 {
		or = append(or, "e.event IN "+s.bind("Array(String)", q.CustomEvents))
	}
	if len(or) == 0 {
		return ""
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

// perActor is steps 1 and 2: columns a, and ts and items, the actor's
// event times (microseconds) and items sorted by (time, uuid). Two
// arrays are grouped: the times, and each item behind its uuid's 16
// bytes in the order its text reads (UUIDToNum: the order of
// toUInt128(uuid)): a third array of uuids cost more, and the prefix is
// cut off after the grouping. Times and items are sorted together
// (zipped: one sort, not one per array) by time alone unless two events
// share a time, because sorting by tuples costs more
// (benchmarks/results/paths.md). Only an actor with a tie pays for the
// uuids' order, by (time, prefixed item).
func (q *PathsQuery) perActor(s *eventSource) string {
	actor, where := q.eventsRead(s)
	// Pageviews' URLs, neither cleaned, grouped nor excluded, lose their
	// trailing slash after the grouping, in the substring that cuts the
	// prefix off: one copy of every event's text fewer.
	items, cut := q.itemColumns(s), "substring(x, 17)"
	if q.pagesOnly() && len(q.Cleaning) == 0 && len(q.Groupings) == 0 && len(q.Exclude) == 0 {
		items = []string{propertyText(&s.scope, "event", "$current_url") + " AS item"}
		cut = "substring(x, 17, length(x) - 16 - (length(x) > 17 AND endsWith(x, '/')))"
	}
	cols := append([]string{actor + " AS a", "toUnixTimestamp64Micro(e.timestamp) AS t", "e.uuid AS u"}, items...)
	events := s.selectFrom(cols, q.read(), where)
	if len(q.Exclude) > 0 {
		events = "SELECT a, t, u, item\nFROM (\n" + indent(events) + "\n)\nWHERE item NOT IN " + s.bind("Array(String)", q.Exclude)
	}
	grouped := "SELECT a, groupArray(t) AS t_arrival, groupArray(concat(UUIDToNum(u), item)) AS ui_arrival\nFROM (\n" +
		indent(events) + "\n)\nGROUP BY a"
	return "SELECT a, arrayMap(x -> " + cut + ", ui_arrival) AS i_arrival,\n" +
		"    arraySort((x, t) -> t, arrayZip(t_arrival, i_arrival), t_arrival) AS by_time, by_time.1 AS ts,\n" +
		"    if(arrayExists((x, y) -> x = y, arrayPopBack(ts), arrayPopFront(ts)),\n" +
		"        arraySort((x, t, k) -> (t, k), i_arrival, t_arrival, ui_arrival), by_time.2) AS items\n" +
		"FROM (\n" + indent(grouped) + "\n)"
}

// eventsRead is the actor of the events paths read and their conditions.
func (q *PathsQuery) eventsRead(s *eventSource) (actor string, where []string) {
	actor, actorCond := s.actor(q.AggregationGroupTypeIndex)
	where = []string{"e.team_id = {team:Int64}", s.rangeSpan().sql()}
	for _, c := range []string{q.eventCond(s), s.cond(andFilters(q.Properties, q.TestAccounts)), actorCond} {
		if c != "" {
			where = append(where, c)
		}
	}
	return actor, where
}

// withinFunnel keeps, of each actor's events, those around their funnel
// step: the funnel's actors at funnel_step (reached it, or with a
// negative step dropped off before it), after their step event, before
// it (a drop-off: before the end of the window their last step opened),
// or between the step before and the step.
func (q *PathsQuery) withinFunnel(s *eventSource, perActor string) string {
	fb := funnelOn(q.Funnel, s)
	step := q.FunnelStep
	var cond, at string
	if step > 0 {
		cond, at = fmt.Sprintf("level >= %d", step), fmt.Sprintf("t_%d - 1", step)
	} else {
		cond, at = fmt.Sprintf("level = %d", -step-1), fmt.Sprintf("t_%d - 1", -step-1)
	}
	lo, hi := "toInt64(-9223372036854775807)", "toInt64(9223372036854775807)"
	switch q.FunnelPaths {
	case FunnelPathAfterStep:
		lo = at
	case FunnelPathBeforeStep:
		hi = at
		if step < 0 {
			hi = at + " + " + fb.window
		}
	case FunnelPathBetweenSteps:
		lo, hi = fmt.Sprintf("t_%d - 1", step-1), at
	}
	actors := "SELECT actor, " + lo + " AS lo, " + hi + " AS hi\nFROM (\n" + indent(fb.actorRows()) + "\n)\nWHERE " + cond
	return "SELECT pa.a AS a, arrayMap(t -> t >= fa.lo AND t <= fa.hi, pa.ts) AS within,\n" +
		"    arrayFilter((t, w) -> w, pa.ts, within) AS ts, arrayFilter((x, w) -> w, pa.items, within) AS items\nFROM (\n" + indent(perActor) +
		"\n) AS pa\nINNER JOIN (\n" + indent(actors) + "\n) AS fa ON fa.actor = pa.a"
}

// paths is step 3: columns p (items) and pt (their times) per path,
// with actor also the path's actor a; with hashed, items and points are
// hashes (paths_hashed.go).
func (q *PathsQuery) paths(s *eventSource, perActor string, actor, hashed bool) string {
	none, ellipsis := "''", "'"+pathEllipsis+"'"
	point := func(v string) string { return s.bind("String", v) }
	if hashed {
		none, ellipsis = "0", pathItemHash+"("+ellipsis+")"
		point = func(v string) string { return pathItemHash + "(" + s.bind("String", v) + ")" }
	}
	gap := fmt.Sprint(int64(pathSessionGapMins) * 60 * 1_000_000)
	split := "SELECT " + carried(actor) + "path_items, path_ts\nFROM (\n" + indent(perActor) + "\n)\n" +
		"ARRAY JOIN arraySplit((x, d) -> d >= " + gap + ", items, arrayDifference(ts)) AS path_items,\n" +
		"    arraySplit((x, d) -> d >= " + gap + ", ts, arrayDifference(ts)) AS path_ts"
	// A run of one item keeps its last event: an event is kept when the
	// next one's item differs, or it is the last. The lambdas capture
	// nothing from the row: a lambda that reads another array of the row
	// makes the engine copy that array for every element (quadratic in
	// the path's length; benchmarks/results/paths.md).
	compact := "SELECT " + carried(actor) + "arrayPushBack(arrayPopBack(arrayMap((a, b) -> a != b, path_items, arrayPushBack(arrayPopFront(path_items), " + none + "))), 1) AS keep,\n" +
		"    arrayFilter((x, k) -> k, path_items, keep) AS items, arrayFilter((x, k) -> k, path_ts, keep) AS times\nFROM (\n" +
		indent(split) + "\n)"
	k := s.bind("UInt64", uint64(q.StepLimit))
	var cols []string
	where := ""
	switch {
	case q.Start != "" && q.End != "":
		start, end := point(q.Start), point(q.End)
		half := s.bind("UInt64", uint64(q.StepLimit/2))
		cols = []string{
			"indexOf(items, " + start + ") AS si",
			"indexOf(arraySlice(items, si + 1), " + end + ") AS ei",
			"arraySlice(items, si, ei + 1) AS full", "arraySlice(times, si, ei + 1) AS full_t",
			"if(length(full) > " + k + ", arrayConcat(arraySlice(full, 1, " + half + "), [" + ellipsis + "], arraySlice(full, -" + half + ")), full) AS p",
			"if(length(full) > " + k + ", arrayConcat(arraySlice(full_t, 1, " + half + "), [full_t[" + half + " + 1]], arraySlice(full_t, -" + half + ")), full_t) AS pt",
		}
		where = "si > 0 AND ei > 0"
	case q.Start != "":
		cols = []string{"indexOf(items, " + point(q.Start) + ") AS si",
			"arraySlice(items, si, " + k + ") AS p", "arraySlice(times, si, " + k + ") AS pt"}
		where = "si > 0"
	case q.End != "":
		cols = []string{"indexOf(items, " + point(q.End) + ") AS ei",
			"arraySlice(items, greatest(toInt64(ei) - " + k + " + 1, 1), least(ei, " + k + ")) AS p",
			"arraySlice(times, greatest(toInt64(ei) - " + k + " + 1, 1), least(ei, " + k + ")) AS pt"}
		where = "ei > 0"
	default:
		cols = []string{"arraySlice(items, 1, " + k + ") AS p", "arraySlice(times, 1, " + k + ") AS pt"}
	}
	sql := "SELECT " + carried(actor) + strings.Join(cols, ",\n    ") + "\nFROM (\n" + indent(compact) + "\n)"
	if where != "" {
		sql += "\nWHERE " + where
	}
	return sql
}
