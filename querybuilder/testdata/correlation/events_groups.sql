SELECT item, s, f
FROM (
    SELECT item, s, f, max(if(item IS NULL, s + f, 0)) OVER () AS total
    FROM (
        SELECT item, countIf(success) AS s, countIf(NOT success) AS f
        FROM (
            SELECT fa.actor AS actor, fa.success AS success, groupUniqArrayIf(ev.name, ev.t > fa.lo AND ev.t < fa.hi) AS items
            FROM (
                SELECT e.mat_group_2 AS a,
                    toUnixTimestamp64Micro(e.timestamp) AS t,
                    e.event AS name
                FROM events AS e
                WHERE e.team_id = {team:Int64}
                  AND e.timestamp >= {p0:DateTime64(6, 'UTC')} AND e.timestamp <= {p1:DateTime64(6, 'UTC')}
                  AND e.event NOT IN {p7:Array(String)}
                  AND e.mat_group_2 != ''
            ) AS ev
            RIGHT JOIN (
                SELECT actor, level = {p3:UInt8} AS success, t_1 - 1 AS lo,
                    if(success, t_3 - 1, t_1 - 1 + {p2:Int64}) AS hi
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
                                        if(hot_level >= 1, positions[1], 0) AS p_1,
                                        if(hot_level >= 2, positions[2], 0) AS p_2,
                                        if(hot_level >= 3, positions[3], 0) AS p_3
                                    FROM (
                                        SELECT *,
                                            if(hot_level > 0, arraySort(arrayConcat(arraySlice(arrayFilter((i, tt, mm) -> bitTest(mm, 0) AND i >= entry_index AND tt - start <= {p2:Int64}, arrayEnumerate(ts), ts, ms), 1, 1), arraySlice(arrayFilter((i, tt, mm) -> bitTest(mm, 1) AND i >= entry_index AND tt - start <= {p2:Int64}, arrayEnumerate(ts), ts, ms), 1, 1), arraySlice(arrayFilter((i, tt, mm) -> bitTest(mm, 2) AND i >= entry_index AND tt - start <= {p2:Int64}, arrayEnumerate(ts), ts, ms), 1, 1))), []) AS positions
                                        FROM (
                                            SELECT *,
                                                toUInt8(arrayMax(levels)) AS hot_level,
                                                if(hot_level > 0, arrayLastIndex(x -> x = hot_level, levels), 0) AS entry_index,
                                                ts[entry_index] AS start
                                            FROM (
                                                SELECT *,
                                                    arrayMap((tt, mm, u0, b0, u1, b1, u2, b2) -> if(bitAnd(mm, 7) != 0, least(1, u0 - b0) + least(1, u1 - b1) + least(1, u2 - b2), 0), ts, ms, upto_0, before_0, upto_1, before_1, upto_2, before_2) AS levels
                                                FROM (
                                                    SELECT *,
                                                        arrayFilter((c, q) -> q = 1, arrayCumSum(arrayMap((x, q) -> toUInt32(q = 0 AND bitAnd(bitShiftRight(x, 0), 1) = 1), merged, is_query)), is_query) AS upto_0,
                                                        arrayMap((c, mm) -> c - bitTest(mm, 0), arrayCumSum(arrayMap(mm -> toUInt32(bitTest(mm, 0)), ms)), ms) AS before_0,
                                                        arrayFilter((c, q) -> q = 1, arrayCumSum(arrayMap((x, q) -> toUInt32(q = 0 AND bitAnd(bitShiftRight(x, 1), 1) = 1), merged, is_query)), is_query) AS upto_1,
                                                        arrayMap((c, mm) -> c - bitTest(mm, 1), arrayCumSum(arrayMap(mm -> toUInt32(bitTest(mm, 1)), ms)), ms) AS before_1,
                                                        arrayFilter((c, q) -> q = 1, arrayCumSum(arrayMap((x, q) -> toUInt32(q = 0 AND bitAnd(bitShiftRight(x, 2), 1) = 1), merged, is_query)), is_query) AS upto_2,
                                                        arrayMap((c, mm) -> c - bitTest(mm, 2), arrayCumSum(arrayMap(mm -> toUInt32(bitTest(mm, 2)), ms)), ms) AS before_2
                                                    FROM (
                                                        SELECT *,
                                                            arraySort(arrayConcat(arrayMap((tt, mm) -> bitOr(bitShiftLeft(toUInt128(tt * 2), 64), toUInt128(mm)), ts, ms), arrayMap(tt -> bitShiftLeft(toUInt128((tt + {p2:Int64}) * 2 + 1), 64), ts))) AS merged,
                                                            arrayMap(x -> toUInt8(bitAnd(bitShiftRight(x, 64), 1)), merged) AS is_query
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
                                                                        countIf(bitAnd(m, 7) != 0) > 0 AS entered,
                                                                        toUInt64(1) AS weight,
                                                                        groupArrayIf(tk, hot) AS t_arrival,
                                                                        groupArrayIf(m, hot) AS m_arrival,
                                                                        groupArrayIf(uk, hot) AS u_arrival,
                                                                        maxIf(tt0, bitAnd(m, 7) != 0 AND NOT hot) AS entry_t
                                                                    FROM (
                                                                        SELECT e.mat_group_2 AS a,
                                                                            (bitShiftLeft(toUInt64(e.event = {p4:String}), 0)
                                                                                + bitShiftLeft(toUInt64(e.event = {p5:String}), 1)
                                                                                + bitShiftLeft(toUInt64(e.event = {p6:String}), 2)) AS m,
                                                                            e.mat_group_2 IN (
                                                                                SELECT e.mat_group_2
                                                                                FROM events AS e
                                                                                WHERE e.team_id = {team:Int64}
                                                                                  AND e.timestamp >= {p0:DateTime64(6, 'UTC')} AND e.timestamp <= {p1:DateTime64(6, 'UTC')}
                                                                                  AND e.mat_group_2 != ''
                                                                                  AND (e.event = {p5:String}
                                                                                    OR e.event = {p6:String})
                                                                            ) AS hot,
                                                                            toUnixTimestamp64Micro(e.timestamp) + 1 AS tk,
                                                                            toUInt128(e.uuid) AS uk,
                                                                            toUnixTimestamp64Micro(e.timestamp) + 1 AS tt0
                                                                        FROM events AS e
                                                                        WHERE e.team_id = {team:Int64}
                                                                          AND e.timestamp >= {p0:DateTime64(6, 'UTC')} AND e.timestamp <= {p1:DateTime64(6, 'UTC')}
                                                                          AND e.mat_group_2 != ''
                                                                          AND (e.event = {p4:String}
                                                                            OR e.event = {p5:String}
                                                                            OR e.event = {p6:String})
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
                    )
                    WHERE level > 0 AND NOT excluded
                )
            ) AS fa ON ev.a = fa.actor
            GROUP BY fa.actor, fa.success
        )
        ARRAY JOIN arrayPushFront(CAST(items AS Array(Nullable(String))), NULL) AS item
        GROUP BY item
    )
)
WHERE item IS NULL OR s + f >= least(25, 0.02 * total)
ORDER BY item IS NOT NULL, item
-- p0 = time.Date(2026, time.February, 7, 23, 0, 0, 0, time.UTC)
-- p1 = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p2 = 1209600000000
-- p3 = 0x3
-- p4 = "$pageview"
-- p5 = "signup"
-- p6 = "buy"
-- p7 = []string{"$pageview", "signup", "buy"}
-- team = 42
-- tz = "Europe/Berlin"
