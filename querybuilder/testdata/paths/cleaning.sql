WITH (
    SELECT (arrayMap(x -> x.1, n), arrayMap(x -> x.2, n), arrayMap(x -> toUInt32(x), arrayEnumerate(n)), collided)
    FROM (
        SELECT groupArray((h, item)) AS n, throwIf(uniqExact(h) != count(), 'insightd: check failed, run the fallback statement') AS collided
        FROM (
            SELECT item, cityHash64(item) AS h
            FROM (
                SELECT DISTINCT item
                FROM (
                    SELECT replaceRegexpAll(raw, {p0:String}, {p1:String}) AS item_clean, multiIf(item_clean LIKE {p2:String}, {p3:String}, item_clean LIKE {p4:String}, {p5:String}, item_clean) AS item
                    FROM (
                        SELECT DISTINCT multiIf(e.event = '$pageview', substring(e.mat_current_url, 1, length(e.mat_current_url) - (length(e.mat_current_url) > 1 AND endsWith(e.mat_current_url, '/'))),
                                e.event = '$screen', e.mat_screen_name, e.event) AS raw
                        FROM events AS e
                        WHERE e.team_id = {team:Int64}
                          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                    )
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
                SELECT arrayMap((d, j) -> j = 1 OR d >= 1800000000, arrayDifference(ts), arrayEnumerate(ts)) AS starts,
                    arrayPushBack(arrayPopFront(starts), 1) AS ends,
                    arrayMap((x, y, e) -> e OR x != y, items, arrayShiftLeft(items, 1, 0), ends) AS keep,
                    arrayCumSum(keep) AS kept,
                    arrayMap((c, b) -> c - b, kept, arrayFill((x, st) -> st, arrayMap((c, x) -> c - x, kept, keep), starts)) AS pos,
                    arrayMap((x, p, e) -> x AND p < {p7:UInt64} AND NOT e, keep, pos, ends) AS from_mask,
                    arrayMap((x, p) -> x AND p >= 2 AND p <= {p7:UInt64}, keep, pos) AS to_mask,
                    arrayFilter((x, m) -> m, pos, from_mask) AS steps,
                    arrayFilter((x, m) -> m, items, from_mask) AS from_items, arrayFilter((x, m) -> m, items, to_mask) AS to_items,
                    arrayMap((x, y) -> x - y, arrayFilter((x, m) -> m, ts, to_mask), arrayFilter((x, m) -> m, ts, from_mask)) AS ds
                FROM (
                    SELECT a, arraySort((x, t) -> t, arrayZip(t_arrival, h_arrival), t_arrival) AS by_time, by_time.1 AS ts,
                        if(arrayExists((x, y) -> x = y, arrayPopBack(ts), arrayPopFront(ts)),
                            arraySort((x, t, k) -> (t, k), h_arrival, t_arrival, u_arrival), by_time.2) AS items
                    FROM (
                        SELECT a, groupArray(t) AS t_arrival, groupArray(u) AS u_arrival, groupArray(h) AS h_arrival
                        FROM (
                            SELECT a, t, u, h
                            FROM (
                                SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                                    toUnixTimestamp64Micro(e.timestamp) AS t,
                                    toUInt128(e.uuid) AS u,
                                    replaceRegexpAll(multiIf(e.event = '$pageview', substring(e.mat_current_url, 1, length(e.mat_current_url) - (length(e.mat_current_url) > 1 AND endsWith(e.mat_current_url, '/'))),
                                            e.event = '$screen', e.mat_screen_name, e.event), {p0:String}, {p1:String}) AS item_clean,
                                    multiIf(item_clean LIKE {p2:String}, {p3:String}, item_clean LIKE {p4:String}, {p5:String}, item_clean) AS item,
                                    cityHash64(item) AS h
                                FROM events AS e
                                LEFT JOIN (
                                    SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                                    FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                                ) AS po ON e.person_id = po.old_person_id
                                WHERE e.team_id = {team:Int64}
                                  AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                            )
                            WHERE item NOT IN {p6:Array(String)}
                        )
                        GROUP BY a
                    )
                )
            )
            ARRAY JOIN steps AS i, from_items AS from_item, to_items AS to_item, ds AS d
        )
        GROUP BY i, from_item, to_item
    )
)
WHERE throwIf(fi = 0 OR ti = 0 OR names.4 != 0, 'insightd: check failed, run the fallback statement') = 0
ORDER BY value DESC, source, target
LIMIT {p8:UInt64}
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = "/item/\\d+"
-- p1 = "/item/:id"
-- p2 = "%/item/%"
-- p3 = "/item/*"
-- p4 = "%/cart%"
-- p5 = "*/cart*"
-- p6 = []string{"/item/*"}
-- p7 = 0x5
-- p8 = 0x32
-- team = 42
-- tz = "Europe/Berlin"
-- fallback:
SELECT concat(toString(i), '_', from_item) AS source, concat(toString(i + 1), '_', to_item) AS target, value, average_conversion_time
FROM (
    SELECT i, from_item, to_item, count() AS value, avg(d / 1000) AS average_conversion_time
    FROM (
        SELECT i, from_item, to_item, d
        FROM (
            SELECT arrayMap((d, j) -> j = 1 OR d >= 1800000000, arrayDifference(ts), arrayEnumerate(ts)) AS starts,
                arrayPushBack(arrayPopFront(starts), 1) AS ends,
                arrayMap((x, y, e) -> e OR x != y, items, arrayShiftLeft(items, 1, ''), ends) AS keep,
                arrayCumSum(keep) AS kept,
                arrayMap((c, b) -> c - b, kept, arrayFill((x, st) -> st, arrayMap((c, x) -> c - x, kept, keep), starts)) AS pos,
                arrayMap((x, p, e) -> x AND p < {p7:UInt64} AND NOT e, keep, pos, ends) AS from_mask,
                arrayMap((x, p) -> x AND p >= 2 AND p <= {p7:UInt64}, keep, pos) AS to_mask,
                arrayFilter((x, m) -> m, pos, from_mask) AS steps,
                arrayFilter((x, m) -> m, items, from_mask) AS from_items, arrayFilter((x, m) -> m, items, to_mask) AS to_items,
                arrayMap((x, y) -> x - y, arrayFilter((x, m) -> m, ts, to_mask), arrayFilter((x, m) -> m, ts, from_mask)) AS ds
            FROM (
                SELECT a, arrayMap(x -> substring(x, 17), ui_arrival) AS i_arrival,
                    arraySort((x, t) -> t, arrayZip(t_arrival, i_arrival), t_arrival) AS by_time, by_time.1 AS ts,
                    if(arrayExists((x, y) -> x = y, arrayPopBack(ts), arrayPopFront(ts)),
                        arraySort((x, t, k) -> (t, k), i_arrival, t_arrival, ui_arrival), by_time.2) AS items
                FROM (
                    SELECT a, groupArray(t) AS t_arrival, groupArray(concat(UUIDToNum(u), item)) AS ui_arrival
                    FROM (
                        SELECT a, t, u, item
                        FROM (
                            SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                                toUnixTimestamp64Micro(e.timestamp) AS t,
                                e.uuid AS u,
                                replaceRegexpAll(multiIf(e.event = '$pageview', substring(e.mat_current_url, 1, length(e.mat_current_url) - (length(e.mat_current_url) > 1 AND endsWith(e.mat_current_url, '/'))),
                                        e.event = '$screen', e.mat_screen_name, e.event), {p0:String}, {p1:String}) AS item_clean,
                                multiIf(item_clean LIKE {p2:String}, {p3:String}, item_clean LIKE {p4:String}, {p5:String}, item_clean) AS item
                            FROM events AS e
                            LEFT JOIN (
                                SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                                FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                            ) AS po ON e.person_id = po.old_person_id
                            WHERE e.team_id = {team:Int64}
                              AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                        )
                        WHERE item NOT IN {p6:Array(String)}
                    )
                    GROUP BY a
                )
            )
        )
        ARRAY JOIN steps AS i, from_items AS from_item, to_items AS to_item, ds AS d
    )
    GROUP BY i, from_item, to_item
)
ORDER BY value DESC, source, target
LIMIT {p8:UInt64}
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = "/item/\\d+"
-- p1 = "/item/:id"
-- p2 = "%/item/%"
-- p3 = "/item/*"
-- p4 = "%/cart%"
-- p5 = "*/cart*"
-- p6 = []string{"/item/*"}
-- p7 = 0x5
-- p8 = 0x32
-- team = 42
-- tz = "Europe/Berlin"
