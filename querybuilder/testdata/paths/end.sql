WITH (
    SELECT (arrayMap(x -> x.1, n), arrayMap(x -> x.2, n), arrayMap(x -> toUInt32(x), arrayEnumerate(n)), collided)
    FROM (
        SELECT groupArray((h, item)) AS n, throwIf(uniqExact(h) != count(), 'insightd: check failed, run the fallback statement') AS collided
        FROM (
            SELECT item, cityHash64(item) AS h
            FROM (
                SELECT DISTINCT item
                FROM (
                    SELECT item
                    FROM (
                        SELECT raw AS item
                        FROM (
                            SELECT DISTINCT multiIf(e.event = '$pageview', substring(e.mat_current_url, 1, length(e.mat_current_url) - (length(e.mat_current_url) > 1 AND endsWith(e.mat_current_url, '/'))),
                                    e.event = '$screen', e.mat_screen_name, e.event) AS raw
                            FROM events AS e
                            WHERE e.team_id = {team:Int64}
                              AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                              AND (NOT startsWith(e.event, '$') OR e.event IN {p0:Array(String)})
                        )
                    )
                    UNION ALL
                    SELECT arrayJoin({p3:Array(String)}) AS item
                )
            )
        )
    )
) AS names
SELECT concat(toString(i), '_', names.2[fi]) AS source, concat(toString(i + 1), '_', names.2[ti]) AS target, value, average_conversion_time
FROM (
    SELECT *, transform(from_item, names.1, names.3, toUInt32(0)) AS fi, transform(to_item, names.1, names.3, toUInt32(0)) AS ti
    FROM (
        SELECT i, from_item, to_item, count() AS value, avg(d / 1000) AS average_conversion_time
        FROM (
            SELECT i, from_item, to_item, d
            FROM (
                SELECT indexOf(items, cityHash64({p2:String})) AS ei,
                    arraySlice(items, greatest(toInt64(ei) - {p1:UInt64} + 1, 1), least(ei, {p1:UInt64})) AS p,
                    arraySlice(times, greatest(toInt64(ei) - {p1:UInt64} + 1, 1), least(ei, {p1:UInt64})) AS pt
                FROM (
                    SELECT arrayPushBack(arrayPopBack(arrayMap((a, b) -> a != b, path_items, arrayPushBack(arrayPopFront(path_items), 0))), 1) AS keep,
                        arrayFilter((x, k) -> k, path_items, keep) AS items, arrayFilter((x, k) -> k, path_ts, keep) AS times
                    FROM (
                        SELECT path_items, path_ts
                        FROM (
                            SELECT a, arraySort((x, t) -> t, arrayZip(t_arrival, h_arrival), t_arrival) AS by_time, by_time.1 AS ts,
                                if(arrayExists((x, y) -> x = y, arrayPopBack(ts), arrayPopFront(ts)),
                                    arraySort((x, t, k) -> (t, k), h_arrival, t_arrival, u_arrival), by_time.2) AS items
                            FROM (
                                SELECT a, groupArray(t) AS t_arrival, groupArray(u) AS u_arrival, groupArray(h) AS h_arrival
                                FROM (
                                    SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                                        toUnixTimestamp64Micro(e.timestamp) AS t,
                                        toUInt128(e.uuid) AS u,
                                        multiIf(e.event = '$pageview', substring(e.mat_current_url, 1, length(e.mat_current_url) - (length(e.mat_current_url) > 1 AND endsWith(e.mat_current_url, '/'))),
                                                e.event = '$screen', e.mat_screen_name, e.event) AS item,
                                        cityHash64(item) AS h
                                    FROM events AS e
                                    LEFT JOIN (
                                        SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                                        FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                                    ) AS po ON e.person_id = po.old_person_id
                                    WHERE e.team_id = {team:Int64}
                                      AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                                      AND (NOT startsWith(e.event, '$') OR e.event IN {p0:Array(String)})
                                )
                                GROUP BY a
                            )
                        )
                        ARRAY JOIN arraySplit((x, d) -> d >= 1800000000, items, arrayDifference(ts)) AS path_items,
                            arraySplit((x, d) -> d >= 1800000000, ts, arrayDifference(ts)) AS path_ts
                    )
                )
                WHERE ei > 0
            )
            ARRAY JOIN arrayEnumerate(arrayPopBack(p)) AS i, arrayPopBack(p) AS from_item, arrayPopFront(p) AS to_item, arrayPopFront(arrayDifference(pt)) AS d
        )
        GROUP BY i, from_item, to_item
    )
)
WHERE throwIf(fi = 0 OR ti = 0 OR names.4 != 0, 'insightd: check failed, run the fallback statement') = 0
ORDER BY value DESC, source, target
LIMIT {p4:UInt64}
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = []string{"$autocapture"}
-- p1 = 0x5
-- p2 = "buy"
-- p3 = []string{"buy"}
-- p4 = 0x32
-- team = 42
-- tz = "Europe/Berlin"
-- fallback:
SELECT concat(toString(i), '_', from_item) AS source, concat(toString(i + 1), '_', to_item) AS target, value, average_conversion_time
FROM (
    SELECT i, from_item, to_item, count() AS value, avg(d / 1000) AS average_conversion_time
    FROM (
        SELECT i, from_item, to_item, d
        FROM (
            SELECT indexOf(items, {p2:String}) AS ei,
                arraySlice(items, greatest(toInt64(ei) - {p1:UInt64} + 1, 1), least(ei, {p1:UInt64})) AS p,
                arraySlice(times, greatest(toInt64(ei) - {p1:UInt64} + 1, 1), least(ei, {p1:UInt64})) AS pt
            FROM (
                SELECT arrayPushBack(arrayPopBack(arrayMap((a, b) -> a != b, path_items, arrayPushBack(arrayPopFront(path_items), ''))), 1) AS keep,
                    arrayFilter((x, k) -> k, path_items, keep) AS items, arrayFilter((x, k) -> k, path_ts, keep) AS times
                FROM (
                    SELECT path_items, path_ts
                    FROM (
                        SELECT a, arrayMap(x -> substring(x, 17), ui_arrival) AS i_arrival,
                            arraySort((x, t) -> t, arrayZip(t_arrival, i_arrival), t_arrival) AS by_time, by_time.1 AS ts,
                            if(arrayExists((x, y) -> x = y, arrayPopBack(ts), arrayPopFront(ts)),
                                arraySort((x, t, k) -> (t, k), i_arrival, t_arrival, ui_arrival), by_time.2) AS items
                        FROM (
                            SELECT a, groupArray(t) AS t_arrival, groupArray(concat(UUIDToNum(u), item)) AS ui_arrival
                            FROM (
                                SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                                    toUnixTimestamp64Micro(e.timestamp) AS t,
                                    e.uuid AS u,
                                    multiIf(e.event = '$pageview', substring(e.mat_current_url, 1, length(e.mat_current_url) - (length(e.mat_current_url) > 1 AND endsWith(e.mat_current_url, '/'))),
                                            e.event = '$screen', e.mat_screen_name, e.event) AS item
                                FROM events AS e
                                LEFT JOIN (
                                    SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                                    FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                                ) AS po ON e.person_id = po.old_person_id
                                WHERE e.team_id = {team:Int64}
                                  AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                                  AND (NOT startsWith(e.event, '$') OR e.event IN {p0:Array(String)})
                            )
                            GROUP BY a
                        )
                    )
                    ARRAY JOIN arraySplit((x, d) -> d >= 1800000000, items, arrayDifference(ts)) AS path_items,
                        arraySplit((x, d) -> d >= 1800000000, ts, arrayDifference(ts)) AS path_ts
                )
            )
            WHERE ei > 0
        )
        ARRAY JOIN arrayEnumerate(arrayPopBack(p)) AS i, arrayPopBack(p) AS from_item, arrayPopFront(p) AS to_item, arrayPopFront(arrayDifference(pt)) AS d
    )
    GROUP BY i, from_item, to_item
)
ORDER BY value DESC, source, target
LIMIT {p3:UInt64}
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = []string{"$autocapture"}
-- p1 = 0x5
-- p2 = "buy"
-- p3 = 0x32
-- team = 42
-- tz = "Europe/Berlin"
