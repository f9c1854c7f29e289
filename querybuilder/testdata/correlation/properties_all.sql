SELECT item, s, f
FROM (
    SELECT item, s, f, max(if(item IS NULL, s + f, 0)) OVER () AS total
    FROM (
        SELECT item, countIf(success) AS s, countIf(NOT success) AS f
        FROM (
            SELECT fa.actor AS actor, fa.success AS success, arrayDistinct(arrayConcat(arrayMap(kv -> concat(toString(length(kv.1)), ':', kv.1, '::', multiIf(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2 = 'null', '', kv.2)), arrayFilter(kv -> kv.1 NOT IN {p7:Array(String)}, JSONExtractKeysAndValuesRaw(p.props))))) AS items
            FROM (
                SELECT id, argMax(properties, version) AS props
                FROM persons
                WHERE team_id = {team:Int64}
                GROUP BY id
                HAVING argMax(is_deleted, version) = 0
            ) AS p
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
                                                                        (bitShiftLeft(toUInt64(e.event = {p4:String}), 0)
                                                                            + bitShiftLeft(toUInt64(e.event = {p5:String}), 1)
                                                                            + bitShiftLeft(toUInt64(e.event = {p6:String}), 2)) AS m,
                                                                        if(empty(po.override_person_id), e.person_id, po.override_person_id) IN (
                                                                            SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id)
                                                                            FROM events AS e
                                                                            LEFT JOIN (
                                                                                SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                                                                                FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                                                                            ) AS po ON e.person_id = po.old_person_id
                                                                            WHERE e.team_id = {team:Int64}
                                                                              AND e.timestamp >= {p0:DateTime64(6, 'UTC')} AND e.timestamp <= {p1:DateTime64(6, 'UTC')}
                                                                              AND (e.event = {p5:String})
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
                    WHERE level > 0 AND NOT excluded
                )
            ) AS fa ON p.id = fa.actor
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
-- p7 = []string{"email"}
-- team = 42
-- tz = "Europe/Berlin"
