WITH (
    SELECT (arrayMap(x -> x.1, n), arrayMap(x -> x.2, n), arrayMap(x -> toUInt32(x), arrayEnumerate(n)), collided)
    FROM (
        SELECT groupArray((h, item)) AS n, throwIf(uniqExact(h) != count(), 'insightd: check failed, run the fallback statement') AS collided
        FROM (
            SELECT item, cityHash64(item) AS h
            FROM (
                SELECT DISTINCT item
                FROM (
                    SELECT raw AS item
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
                    arrayMap((x, p, e) -> x AND p < {p6:UInt64} AND NOT e, keep, pos, ends) AS from_mask,
                    arrayMap((x, p) -> x AND p >= 2 AND p <= {p6:UInt64}, keep, pos) AS to_mask,
                    arrayFilter((x, m) -> m, pos, from_mask) AS steps,
                    arrayFilter((x, m) -> m, items, from_mask) AS from_items, arrayFilter((x, m) -> m, items, to_mask) AS to_items,
                    arrayMap((x, y) -> x - y, arrayFilter((x, m) -> m, ts, to_mask), arrayFilter((x, m) -> m, ts, from_mask)) AS ds
                FROM (
                    SELECT pa.a AS a, arrayMap(t -> t >= fa.lo AND t <= fa.hi, pa.ts) AS within,
                        arrayFilter((t, w) -> w, pa.ts, within) AS ts, arrayFilter((x, w) -> w, pa.items, within) AS items
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
                            )
                            GROUP BY a
                        )
                    ) AS pa
                    INNER JOIN (
                        SELECT actor, toInt64(-9223372036854775807) AS lo, t_2 - 1 + {p2:Int64} AS hi
                        FROM (
                            SELECT actor, level, t_1, t_2, t_3
                            FROM (
                                SELECT actor, weight, level, excluded, t_1, t_2, t_3
                                FROM (
                                    SELECT *,
                                        is_hot AND (0) AS excluded,
                                        if(is_hot, hot_level, toUInt8(entered)) AS level
                                    FROM (
                                        SELECT *,
                                            if(is_hot, if(hot_level >= 1, ts[p_1], 0), entry_t) AS t_1,
                                            if(hot_level >= 2, ts[p_2], 0) AS t_2,
                                            if(hot_level >= 3, ts[p_3], 0) AS t_3
                                        FROM (
                                            SELECT *,
                                                if(hot_level >= 1, arrayFirstIndex(x -> x = start, s_1), 0) AS p_1,
                                                if(hot_level >= 2, arrayFirstIndex(x -> x = start, s_2), 0) AS p_2,
                                                if(hot_level >= 3, arrayFirstIndex(x -> x = start, s_3), 0) AS p_3
                                            FROM (
                                                SELECT *,
                                                    toUInt8(multiIf(s_3[-1] != 0, 3, s_2[-1] != 0, 2, s_1[-1] != 0, 1, 0)) AS hot_level,
                                                    multiIf(s_3[-1] != 0, s_3[-1], s_2[-1] != 0, s_2[-1], s_1[-1] != 0, s_1[-1], 0) AS start
                                                FROM (
                                                    SELECT *,
                                                        arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 2) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {p2:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_2, 0)))) AS s_3
                                                    FROM (
                                                        SELECT *,
                                                            arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 1) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {p2:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_1, 0)))) AS s_2
                                                        FROM (
                                                            SELECT *,
                                                                arrayFill(x -> x != 0, arrayMap((tt, mm, i) -> if(bitAnd(mm, 1) != 0, bitOr(bitShiftLeft(toUInt128(tt), 32), toUInt128(i)), toUInt128(0)), ts, ms, arrayEnumerate(ts))) AS s_1
                                                            FROM (
                                                                SELECT *,
                                                                    by_time.1 AS ts,
                                                                    if(arrayExists((x, y) -> x = y, arrayPopBack(ts), arrayPopFront(ts)),
                                                                    arraySort((x, t, u) -> (t, u), m_arrival, t_arrival, u_arrival), by_time.2) AS ms
                                                                FROM (
                                                                    SELECT *,
                                                                        arraySort((x, t) -> t, arrayZip(t_arrival, m_arrival), t_arrival) AS by_time
                                                                    FROM (
                                                                        SELECT a AS actor,
                                                                            max(hot) AS is_hot,
                                                                            countIf(bitAnd(m, 1) != 0) > 0 AS entered,
                                                                            toUInt64(1) AS weight,
                                                                            groupArrayIf(tk, hot) AS t_arrival,
                                                                            groupArrayIf(m, hot) AS m_arrival,
                                                                            groupArrayIf(uk, hot) AS u_arrival,
                                                                            maxIf(tt0, bitAnd(m, 1) != 0 AND NOT hot) AS entry_t
                                                                        FROM (
                                                                            SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                                                                                (bitShiftLeft(toUInt64(e.event = {p3:String}), 0)
                                                                                    + bitShiftLeft(toUInt64(e.event = {p4:String}), 1)
                                                                                    + bitShiftLeft(toUInt64(e.event = {p5:String}), 2)) AS m,
                                                                                if(empty(po.override_person_id), e.person_id, po.override_person_id) IN (
                                                                                    SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id)
                                                                                    FROM events AS e
                                                                                    LEFT JOIN (
                                                                                        SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                                                                                        FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                                                                                    ) AS po ON e.person_id = po.old_person_id
                                                                                    WHERE e.team_id = {team:Int64}
                                                                                      AND e.timestamp >= {p0:DateTime64(6, 'UTC')} AND e.timestamp <= {p1:DateTime64(6, 'UTC')}
                                                                                      AND (e.event = {p4:String})
                                                                                ) AS hot,
                                                                                toUnixTimestamp64Micro(e.timestamp) + 1 AS tk,
                                                                                toUInt128(e.uuid) AS uk,
                                                                                toUnixTimestamp64Micro(e.timestamp) + 1 AS tt0
                                                                            FROM events AS e
                                                                            LEFT JOIN (
                                                                                SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                                                                                FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                                                                            ) AS po ON e.person_id = po.old_person_id
                                                                            WHERE e.team_id = {team:Int64}
                                                                              AND e.timestamp >= {p0:DateTime64(6, 'UTC')} AND e.timestamp <= {p1:DateTime64(6, 'UTC')}
                                                                              AND (e.event = {p3:String}
                                                                                OR e.event = {p4:String}
                                                                                OR e.event = {p5:String})
                                                                        )
                                                                        GROUP BY actor
                                                                    )
                                                                )
                                                            )
                                                        )
                                                    )
                                                )
                                            )
                                        )
                                    )
                                )
                            )
                            WHERE level > 0 AND NOT excluded
                        )
                        WHERE level = 2
                    ) AS fa ON fa.actor = pa.a
                )
            )
            ARRAY JOIN steps AS i, from_items AS from_item, to_items AS to_item, ds AS d
        )
        GROUP BY i, from_item, to_item
    )
)
WHERE throwIf(fi = 0 OR ti = 0 OR names.4 != 0, 'insightd: check failed, run the fallback statement') = 0
ORDER BY value DESC, source, target
LIMIT {p7:UInt64}
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- p1 = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p2 = 3600000000
-- p3 = "$pageview"
-- p4 = "signup"
-- p5 = "buy"
-- p6 = 0x5
-- p7 = 0x32
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
                arrayMap((x, p, e) -> x AND p < {p6:UInt64} AND NOT e, keep, pos, ends) AS from_mask,
                arrayMap((x, p) -> x AND p >= 2 AND p <= {p6:UInt64}, keep, pos) AS to_mask,
                arrayFilter((x, m) -> m, pos, from_mask) AS steps,
                arrayFilter((x, m) -> m, items, from_mask) AS from_items, arrayFilter((x, m) -> m, items, to_mask) AS to_items,
                arrayMap((x, y) -> x - y, arrayFilter((x, m) -> m, ts, to_mask), arrayFilter((x, m) -> m, ts, from_mask)) AS ds
            FROM (
                SELECT pa.a AS a, arrayMap(t -> t >= fa.lo AND t <= fa.hi, pa.ts) AS within,
                    arrayFilter((t, w) -> w, pa.ts, within) AS ts, arrayFilter((x, w) -> w, pa.items, within) AS items
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
                        )
                        GROUP BY a
                    )
                ) AS pa
                INNER JOIN (
                    SELECT actor, toInt64(-9223372036854775807) AS lo, t_2 - 1 + {p2:Int64} AS hi
                    FROM (
                        SELECT actor, level, t_1, t_2, t_3
                        FROM (
                            SELECT actor, weight, level, excluded, t_1, t_2, t_3
                            FROM (
                                SELECT *,
                                    is_hot AND (0) AS excluded,
                                    if(is_hot, hot_level, toUInt8(entered)) AS level
                                FROM (
                                    SELECT *,
                                        if(is_hot, if(hot_level >= 1, ts[p_1], 0), entry_t) AS t_1,
                                        if(hot_level >= 2, ts[p_2], 0) AS t_2,
                                        if(hot_level >= 3, ts[p_3], 0) AS t_3
                                    FROM (
                                        SELECT *,
                                            if(hot_level >= 1, arrayFirstIndex(x -> x = start, s_1), 0) AS p_1,
                                            if(hot_level >= 2, arrayFirstIndex(x -> x = start, s_2), 0) AS p_2,
                                            if(hot_level >= 3, arrayFirstIndex(x -> x = start, s_3), 0) AS p_3
                                        FROM (
                                            SELECT *,
                                                toUInt8(multiIf(s_3[-1] != 0, 3, s_2[-1] != 0, 2, s_1[-1] != 0, 1, 0)) AS hot_level,
                                                multiIf(s_3[-1] != 0, s_3[-1], s_2[-1] != 0, s_2[-1], s_1[-1] != 0, s_1[-1], 0) AS start
                                            FROM (
                                                SELECT *,
                                                    arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 2) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {p2:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_2, 0)))) AS s_3
                                                FROM (
                                                    SELECT *,
                                                        arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 1) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {p2:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_1, 0)))) AS s_2
                                                    FROM (
                                                        SELECT *,
                                                            arrayFill(x -> x != 0, arrayMap((tt, mm, i) -> if(bitAnd(mm, 1) != 0, bitOr(bitShiftLeft(toUInt128(tt), 32), toUInt128(i)), toUInt128(0)), ts, ms, arrayEnumerate(ts))) AS s_1
                                                        FROM (
                                                            SELECT *,
                                                                by_time.1 AS ts,
                                                                if(arrayExists((x, y) -> x = y, arrayPopBack(ts), arrayPopFront(ts)),
                                                                arraySort((x, t, u) -> (t, u), m_arrival, t_arrival, u_arrival), by_time.2) AS ms
                                                            FROM (
                                                                SELECT *,
                                                                    arraySort((x, t) -> t, arrayZip(t_arrival, m_arrival), t_arrival) AS by_time
                                                                FROM (
                                                                    SELECT a AS actor,
                                                                        max(hot) AS is_hot,
                                                                        countIf(bitAnd(m, 1) != 0) > 0 AS entered,
                                                                        toUInt64(1) AS weight,
                                                                        groupArrayIf(tk, hot) AS t_arrival,
                                                                        groupArrayIf(m, hot) AS m_arrival,
                                                                        groupArrayIf(uk, hot) AS u_arrival,
                                                                        maxIf(tt0, bitAnd(m, 1) != 0 AND NOT hot) AS entry_t
                                                                    FROM (
                                                                        SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                                                                            (bitShiftLeft(toUInt64(e.event = {p3:String}), 0)
                                                                                + bitShiftLeft(toUInt64(e.event = {p4:String}), 1)
                                                                                + bitShiftLeft(toUInt64(e.event = {p5:String}), 2)) AS m,
                                                                            if(empty(po.override_person_id), e.person_id, po.override_person_id) IN (
                                                                                SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id)
                                                                                FROM events AS e
                                                                                LEFT JOIN (
                                                                                    SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                                                                                    FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                                                                                ) AS po ON e.person_id = po.old_person_id
                                                                                WHERE e.team_id = {team:Int64}
                                                                                  AND e.timestamp >= {p0:DateTime64(6, 'UTC')} AND e.timestamp <= {p1:DateTime64(6, 'UTC')}
                                                                                  AND (e.event = {p4:String})
                                                                            ) AS hot,
                                                                            toUnixTimestamp64Micro(e.timestamp) + 1 AS tk,
                                                                            toUInt128(e.uuid) AS uk,
                                                                            toUnixTimestamp64Micro(e.timestamp) + 1 AS tt0
                                                                        FROM events AS e
                                                                        LEFT JOIN (
                                                                            SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                                                                            FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                                                                        ) AS po ON e.person_id = po.old_person_id
                                                                        WHERE e.team_id = {team:Int64}
                                                                          AND e.timestamp >= {p0:DateTime64(6, 'UTC')} AND e.timestamp <= {p1:DateTime64(6, 'UTC')}
                                                                          AND (e.event = {p3:String}
                                                                            OR e.event = {p4:String}
                                                                            OR e.event = {p5:String})
                                                                    )
                                                                    GROUP BY actor
                                                                )
                                                            )
                                                        )
                                                    )
                                                )
                                            )
                                        )
                                    )
                                )
                            )
                        )
                        WHERE level > 0 AND NOT excluded
                    )
                    WHERE level = 2
                ) AS fa ON fa.actor = pa.a
            )
        )
        ARRAY JOIN steps AS i, from_items AS from_item, to_items AS to_item, ds AS d
    )
    GROUP BY i, from_item, to_item
)
ORDER BY value DESC, source, target
LIMIT {p7:UInt64}
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- p1 = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p2 = 3600000000
-- p3 = "$pageview"
-- p4 = "signup"
-- p5 = "buy"
-- p6 = 0x5
-- p7 = 0x32
-- team = 42
-- tz = "Europe/Berlin"
