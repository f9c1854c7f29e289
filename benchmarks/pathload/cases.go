package main

import (
	"fmt"
	"strings"
	"time"
)

// benchCases are the cases, each ending on the last complete day
// (the loaded project's timezone is UTC and it has no merged persons).
func benchCases(last time.Time) []benchCase {
	day := func(t time.Time) string { return t.Format(time.DateOnly) }
	week, month := day(last.AddDate(0, 0, -6)), day(last.AddDate(0, 0, -29))
	end := day(last.AddDate(0, 0, 1))
	body := func(from string, extra map[string]any) map[string]any {
		b := map[string]any{"include_event_types": []string{"$pageview"}, "date_from": from, "date_to": day(last), "step_limit": 5}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	groupings := []string{"https://example.com/blog*", "https://example.com/docs*", "https://app.example.com/*"}
	return []benchCase{
		{name: "7 days, 5 steps", body: body(week, nil), hand: handHashedPaths(week, end, 5, nil)},
		{name: "30 days, 5 steps", body: body(month, nil), hand: handHashedPaths(month, end, 5, nil)},
		{name: "7 days, start point", body: body(week, map[string]any{"start_point": "https://example.com"}),
			hand: handPaths(week, end, 5, "https://example.com", "")},
		{name: "7 days, end point", body: body(week, map[string]any{"end_point": "https://example.com/pricing"}),
			hand: handPaths(week, end, 5, "", "https://example.com/pricing")},
		{name: "7 days, 3 groupings", body: body(week, map[string]any{"path_groupings": groupings}),
			hand: handHashedPaths(week, end, 5, groupings)},
		{name: "7 days, 10 steps", body: body(week, map[string]any{"step_limit": 10}), hand: handHashedPaths(week, end, 10, nil)},
	}
}

// floor is the least any paths query over the 7 days must do: group the
// pageviews' (time, url) pairs by person into arrays.
func floor(last time.Time) string {
	return fmt.Sprintf(`SELECT person_id, groupArray((toUnixTimestamp64Micro(timestamp), mat_current_url)) AS g
FROM events WHERE team_id = {team:Int64} AND event = '$pageview' AND timestamp >= '%s' AND timestamp < '%s'
GROUP BY person_id`, last.AddDate(0, 0, -6).Format(time.DateOnly), last.AddDate(0, 0, 1).Format(time.DateOnly))
}

// grouped is the hand-written item of a URL u0 under groupings (the first
// that matches replaces it), or u0.
func grouped(groupings []string) string {
	if len(groupings) == 0 {
		return "u0"
	}
	var b strings.Builder
	b.WriteString("multiIf(")
	for _, g := range groupings {
		fmt.Fprintf(&b, "position(u0, '%s') > 0, '%s', ", strings.TrimSuffix(g, "*"), g)
	}
	b.WriteString("u0)")
	return b.String()
}

// handHashedPaths is the fastest query written by hand for the edges of
// paths without start and end points: per person the times and the
// items' cityHash64 sorted by time (by uuid too only for a person with
// two events at one instant), path starts and ends marked, runs
// compacted and positions counted on the whole arrays, edges filtered
// out of them and counted by hash, then named from the range's distinct
// URLs. It skips what the generated statement does for generality and
// safety: parameters, the check that no two items share a hash.
func handHashedPaths(from, end string, k int, groupings []string) string {
	url := "substring(u, 1, length(u) - (length(u) > 1 AND endsWith(u, '/')))"
	rng := fmt.Sprintf("team_id = {team:Int64} AND event = '$pageview' AND timestamp >= '%s' AND timestamp < '%s'", from, end)
	return fmt.Sprintf(`WITH (SELECT (groupArray(cityHash64(item)), groupArray(item)) FROM (SELECT DISTINCT %[4]s AS item FROM (SELECT DISTINCT %[3]s AS u0
    FROM (SELECT DISTINCT mat_current_url AS u FROM events WHERE %[1]s)))) AS names
SELECT concat(toString(i), '_', transform(f, names.1, names.2, '')) AS source, concat(toString(i + 1), '_', transform(t, names.1, names.2, '')) AS target,
    count() AS value, avg(d) / 1000
FROM (
    SELECT arrayMap((d, j) -> j = 1 OR d >= 1800000000, arrayDifference(ts), arrayEnumerate(ts)) AS starts,
        arrayPushBack(arrayPopFront(starts), 1) AS ends,
        arrayMap((x, y, e) -> e OR x != y, items, arrayShiftLeft(items, 1, 0), ends) AS keep,
        arrayCumSum(keep) AS kept,
        arrayMap((c, b) -> c - b, kept, arrayFill((x, st) -> st, arrayMap((c, x) -> c - x, kept, keep), starts)) AS pos,
        arrayMap((x, p, e) -> x AND p < %[2]d AND NOT e, keep, pos, ends) AS from_mask,
        arrayMap((x, p) -> x AND p >= 2 AND p <= %[2]d, keep, pos) AS to_mask,
        arrayFilter((x, m) -> m, pos, from_mask) AS steps,
        arrayFilter((x, m) -> m, items, from_mask) AS fs, arrayFilter((x, m) -> m, items, to_mask) AS tos,
        arrayMap((x, y) -> x - y, arrayFilter((x, m) -> m, ts, to_mask), arrayFilter((x, m) -> m, ts, from_mask)) AS ds
    FROM (
        SELECT arraySort((x, t) -> t, arrayZip(tu, hu), tu) AS by_time, by_time.1 AS ts,
            if(arrayExists((x, y) -> x = y, arrayPopBack(ts), arrayPopFront(ts)), arraySort((x, t, k) -> (t, k), hu, tu, uu), by_time.2) AS items
        FROM (
            SELECT person_id, groupArray(toUnixTimestamp64Micro(timestamp)) AS tu, groupArray(toUInt128(uuid)) AS uu, groupArray(h) AS hu
            FROM (SELECT person_id, timestamp, uuid, mat_current_url AS u, %[3]s AS u0, cityHash64(%[4]s) AS h FROM events WHERE %[1]s)
            GROUP BY person_id
        )
    )
)
ARRAY JOIN steps AS i, fs AS f, tos AS t, ds AS d
GROUP BY i, f, t
ORDER BY value DESC, source, target
LIMIT 50`, rng, k, url, grouped(groupings))
}

// handPaths is the fastest query written by hand for the edges of paths
// with a start or an end point, for pageviews of a project without
// merged persons: per person the times and URLs sorted by time (by uuid
// too only for a person with two events at one instant), split at
// 30-minute gaps, runs compacted, cut, zipped into edges. Literals
// instead of parameters; nothing general.
func handPaths(from, end string, k int, start, stop string) string {
	url := "if(length(mat_current_url) > 1 AND endsWith(mat_current_url, '/'), substring(mat_current_url, 1, length(mat_current_url) - 1), mat_current_url)"
	var cut, where string
	switch {
	case start != "":
		cut = fmt.Sprintf("indexOf(items, '%[1]s') AS si, arraySlice(items, si, %[2]d) AS p, arraySlice(times, si, %[2]d) AS pt", start, k)
		where = "WHERE si > 0"
	case stop != "":
		cut = fmt.Sprintf("indexOf(items, '%[1]s') AS ei, arraySlice(items, greatest(toInt64(ei) - %[2]d + 1, 1), least(ei, %[2]d)) AS p, "+
			"arraySlice(times, greatest(toInt64(ei) - %[2]d + 1, 1), least(ei, %[2]d)) AS pt", stop, k)
		where = "WHERE ei > 0"
	default:
		cut = fmt.Sprintf("arraySlice(items, 1, %[1]d) AS p, arraySlice(times, 1, %[1]d) AS pt", k)
	}
	return fmt.Sprintf(`SELECT concat(toString(i), '_', f) AS source, concat(toString(i + 1), '_', t) AS target, count() AS value, avg(d) / 1000
FROM (
    SELECT %[4]s
    FROM (
        SELECT arrayPushBack(arrayPopBack(arrayMap((a, b) -> a != b, pi, arrayPushBack(arrayPopFront(pi), ''))), 1) AS keep,
            arrayFilter((x, k) -> k, pi, keep) AS items, arrayFilter((x, k) -> k, pts, keep) AS times
        FROM (
            SELECT arraySort(tu) AS ts,
                if(arrayExists((x, y) -> x = y, arrayPopBack(ts), arrayPopFront(ts)),
                    arraySort((x, t, u) -> (t, u), iu, tu, uu), arraySort((x, t) -> t, iu, tu)) AS us
            FROM (
                SELECT person_id, groupArray(toUnixTimestamp64Micro(timestamp)) AS tu, groupArray(toUInt128(uuid)) AS uu, groupArray(item) AS iu
                FROM (SELECT person_id, timestamp, uuid, %[3]s AS item FROM events
                      WHERE team_id = {team:Int64} AND event = '$pageview' AND timestamp >= '%[1]s' AND timestamp < '%[2]s')
                GROUP BY person_id
            )
        )
        ARRAY JOIN arraySplit((x, d) -> d >= 1800000000, us, arrayDifference(ts)) AS pi,
            arraySplit((x, d) -> d >= 1800000000, ts, arrayDifference(ts)) AS pts
    )
    %[5]s
)
ARRAY JOIN arrayEnumerate(arrayPopBack(p)) AS i, arrayPopBack(p) AS f, arrayPopFront(p) AS t, arrayPopFront(arrayDifference(pt)) AS d
GROUP BY source, target
ORDER BY value DESC, source, target
LIMIT 50`, from, end, url, cut, where)
}
