SELECT raw_value AS breakdown,
    [sum(c_1), sum(c_2), sum(c_3)] AS counts,
    [NULL, if(sum(c_2) = 0, NULL, avgIfMerge(a_2)), if(sum(c_3) = 0, NULL, avgIfMerge(a_3))] AS average_times,
    [NULL, if(sum(c_2) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_2)), if(sum(c_3) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_3))] AS median_times
FROM (
    SELECT '' AS raw_value,
        sumIf(weight, level >= 1) AS c_1,
        sumIf(weight, level >= 2) AS c_2,
        avgIfState((t_2 - t_1) / 1e6, level >= 2) AS a_2,
        quantileExactInclusiveIfState(0.5)((t_2 - t_1) / 1e6, level >= 2) AS q_2,
        sumIf(weight, level >= 3) AS c_3,
        avgIfState((t_3 - t_2) / 1e6, level >= 3) AS a_3,
        quantileExactInclusiveIfState(0.5)((t_3 - t_2) / 1e6, level >= 3) AS q_3
    FROM (
        SELECT *
        FROM (
            SELECT actor, weight, level, excluded, t_1, t_2, t_3
            FROM (
                SELECT *,
                    is_hot AND (0) AS excluded,
                    if(is_hot, hot_level, toUInt8(entered)) AS level
                FROM (
                    SELECT *,
                        if(hot_level >= 1, ts[p_1], 0) AS t_1,
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
                                    arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 2) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_2, 0)))) AS s_3
                                FROM (
                                    SELECT *,
                                        arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 1) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_1, 0)))) AS s_2
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
                                                    SELECT if(hot, a, toUUID('00000000-0000-0000-0000-000000000000')) AS actor,
                                                        max(hot) AS is_hot,
                                                        countIf(bitAnd(m, 1) != 0) > 0 AS entered,
                                                        if(max(hot), toUInt64(1), uniqExactIf(a, bitAnd(m, 1) != 0)) AS weight,
                                                        groupArrayIf(tk, hot) AS t_arrival,
                                                        groupArrayIf(m, hot) AS m_arrival,
                                                        groupArrayIf(uk, hot) AS u_arrival
                                                    FROM (
                                                        SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                                                            (bitShiftLeft(toUInt64(e.event = {p0:String}), 0)
                                                                + bitShiftLeft(toUInt64(e.event = {p1:String}), 1)
                                                                + bitShiftLeft(toUInt64(e.event = {p2:String}), 2)) AS m,
                                                            if(empty(po.override_person_id), e.person_id, po.override_person_id) IN (
                                                                SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id)
                                                                FROM events AS e
                                                                LEFT JOIN (
                                                                    SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                                                                    FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                                                                ) AS po ON e.person_id = po.old_person_id
                                                                WHERE e.team_id = {team:Int64}
                                                                  AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                                                                  AND (e.event = {p1:String})
                                                            ) AS hot,
                                                            toUnixTimestamp64Micro(e.timestamp) + 1 AS tk,
                                                            toUInt128(e.uuid) AS uk
                                                        FROM events AS e
                                                        LEFT JOIN (
                                                            SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                                                            FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                                                        ) AS po ON e.person_id = po.old_person_id
                                                        WHERE e.team_id = {team:Int64}
                                                          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                                                          AND (e.event = {p0:String}
                                                            OR e.event = {p1:String}
                                                            OR e.event = {p2:String})
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
    GROUP BY raw_value
)
GROUP BY breakdown
-- date_from = time.Date(2026, time.February, 28, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 31, 21, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- p1 = "signup"
-- p2 = "purchase"
-- team = 42
-- tz = "Europe/Berlin"
-- window_us = 1209600000000
