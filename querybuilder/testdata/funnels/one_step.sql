SELECT raw_value AS breakdown,
    [sum(c_1)] AS counts,
    [NULL] AS average_times,
    [NULL] AS median_times
FROM (
    SELECT '' AS raw_value,
        sumIf(weight, level >= 1) AS c_1
    FROM (
        SELECT *
        FROM (
            SELECT actor, weight, level, excluded, t_1
            FROM (
                SELECT *,
                    is_hot AND (0) AS excluded,
                    if(is_hot, hot_level, toUInt8(entered)) AS level
                FROM (
                    SELECT *,
                        if(hot_level >= 1, ts[p_1], 0) AS t_1
                    FROM (
                        SELECT *,
                            if(hot_level >= 1, arrayFirstIndex(x -> x = start, s_1), 0) AS p_1
                        FROM (
                            SELECT *,
                                toUInt8(multiIf(s_1[-1] != 0, 1, 0)) AS hot_level,
                                multiIf(s_1[-1] != 0, s_1[-1], 0) AS start
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
                                                    (bitShiftLeft(toUInt64(e.event = {p0:String}), 0)) AS m,
                                                    0 AS hot,
                                                    toUnixTimestamp64Micro(e.timestamp) + 1 AS tk,
                                                    toUInt128(e.uuid) AS uk
                                                FROM events AS e
                                                LEFT JOIN (
                                                    SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                                                    FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                                                ) AS po ON e.person_id = po.old_person_id
                                                WHERE e.team_id = {team:Int64}
                                                  AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                                                  AND (e.event = {p0:String})
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
        WHERE level > 0 AND NOT excluded
    )
    GROUP BY raw_value
)
GROUP BY breakdown
-- date_from = time.Date(2026, time.February, 28, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 31, 21, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- team = 42
-- tz = "Europe/Berlin"
-- window_us = 1209600000000
