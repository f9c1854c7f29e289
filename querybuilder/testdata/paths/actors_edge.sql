SELECT toString(actor) AS actor, count() OVER () AS total
FROM (
    SELECT DISTINCT a AS actor
    FROM (
        SELECT a, concat(toString(i), '_', from_item) AS source, concat(toString(i + 1), '_', to_item) AS target, d / 1000 AS dt
        FROM (
            SELECT a, indexOf(items, {p1:String}) AS si,
                arraySlice(items, si, {p0:UInt64}) AS p,
                arraySlice(times, si, {p0:UInt64}) AS pt
            FROM (
                SELECT a, arrayPushBack(arrayPopBack(arrayMap((a, b) -> a != b, path_items, arrayPushBack(arrayPopFront(path_items), ''))), 1) AS keep,
                    arrayFilter((x, k) -> k, path_items, keep) AS items, arrayFilter((x, k) -> k, path_ts, keep) AS times
                FROM (
                    SELECT a, path_items, path_ts
                    FROM (
                        SELECT a, arrayMap(x -> substring(x, 17, length(x) - 16 - (length(x) > 17 AND endsWith(x, '/'))), ui_arrival) AS i_arrival,
                            arraySort((x, t) -> t, arrayZip(t_arrival, i_arrival), t_arrival) AS by_time, by_time.1 AS ts,
                            if(arrayExists((x, y) -> x = y, arrayPopBack(ts), arrayPopFront(ts)),
                                arraySort((x, t, k) -> (t, k), i_arrival, t_arrival, ui_arrival), by_time.2) AS items
                        FROM (
                            SELECT a, groupArray(t) AS t_arrival, groupArray(concat(UUIDToNum(u), item)) AS ui_arrival
                            FROM (
                                SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                                    toUnixTimestamp64Micro(e.timestamp) AS t,
                                    e.uuid AS u,
                                    e.mat_current_url AS item
                                FROM events AS e
                                LEFT JOIN (
                                    SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                                    FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                                ) AS po ON e.person_id = po.old_person_id
                                WHERE e.team_id = {team:Int64}
                                  AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                                  AND (e.event = '$pageview')
                            )
                            GROUP BY a
                        )
                    )
                    ARRAY JOIN arraySplit((x, d) -> d >= 1800000000, items, arrayDifference(ts)) AS path_items,
                        arraySplit((x, d) -> d >= 1800000000, ts, arrayDifference(ts)) AS path_ts
                )
            )
            WHERE si > 0
        )
        ARRAY JOIN arrayEnumerate(arrayPopBack(p)) AS i, arrayPopBack(p) AS from_item, arrayPopFront(p) AS to_item, arrayPopFront(arrayDifference(pt)) AS d
    )
    WHERE source = {p2:String} AND target = {p3:String}
)
ORDER BY actor
LIMIT {p4:UInt64} OFFSET {p5:UInt64}
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = 0x5
-- p1 = "/home"
-- p2 = "1_/home"
-- p3 = "2_/cart"
-- p4 = 0x64
-- p5 = 0xc8
-- team = 42
-- tz = "Europe/Berlin"
