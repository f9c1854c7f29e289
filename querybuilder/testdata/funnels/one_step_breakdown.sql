SELECT if(value_rank <= {breakdown_limit:UInt32}, raw_value, {breakdown_other:String}) AS breakdown,
    [sum(c_1)] AS counts,
    [NULL] AS average_times,
    [NULL] AS median_times
FROM (
    SELECT *, dense_rank() OVER (ORDER BY c_1 DESC, raw_value) AS value_rank
    FROM (
        SELECT breakdown_value AS raw_value,
            sumIf(weight, level >= 1) AS c_1
        FROM (
            SELECT *
            FROM (
                SELECT actor, weight, level, excluded, t_1, breakdown_value
                FROM (
                    SELECT *,
                        is_hot AND (0) AS excluded,
                        if(is_hot, hot_level, toUInt8(entered)) AS level,
                        if(is_hot, if(hot_level >= 1, bds[arrival[p_1]], {breakdown_null:String}), entry_bd) AS breakdown_value
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
                                            by_order.1 AS ms,
                                            by_order.2 AS arrival
                                        FROM (
                                            SELECT *,
                                                by_time.1 AS ts,
                                                if(arrayExists((x, y) -> x = y, arrayPopBack(ts), arrayPopFront(ts)),
                                                arraySort((x, t, u) -> (t, u), arrayZip(m_arrival, arrayEnumerate(t_arrival)), t_arrival, u_arrival), arrayZip(by_time.2, by_time.3)) AS by_order
                                            FROM (
                                                SELECT *,
                                                    arraySort((x, t) -> t, arrayZip(t_arrival, m_arrival, arrayEnumerate(t_arrival)), t_arrival) AS by_time
                                                FROM (
                                                    SELECT a AS actor,
                                                        max(hot) AS is_hot,
                                                        countIf(bitAnd(m, 1) != 0) > 0 AS entered,
                                                        toUInt64(1) AS weight,
                                                        groupArrayIf(tk, hot) AS t_arrival,
                                                        groupArrayIf(m, hot) AS m_arrival,
                                                        groupArrayIf(uk, hot) AS u_arrival,
                                                        groupArrayIf(bd, hot) AS bds,
                                                        argMaxIf(bd, at, bitAnd(m, 1) != 0 AND NOT hot) AS entry_bd
                                                    FROM (
                                                        SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                                                            (bitShiftLeft(toUInt64(e.event = {p0:String}), 0)) AS m,
                                                            0 AS hot,
                                                            toUnixTimestamp64Micro(e.timestamp) + 1 AS tk,
                                                            toUInt128(e.uuid) AS uk,
                                                            if(empty(e.mat_browser), {breakdown_null:String}, e.mat_browser) AS bd,
                                                            bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(e.timestamp) + 1), 128), toUInt256(toUInt128(e.uuid))) AS at
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
            )
            WHERE level > 0 AND NOT excluded
        )
        GROUP BY raw_value
    )
)
GROUP BY breakdown
-- breakdown_limit = 10
-- breakdown_null = "$$_posthog_breakdown_null_$$"
-- breakdown_other = "$$_posthog_breakdown_other_$$"
-- date_from = time.Date(2026, time.February, 28, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 31, 21, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- team = 42
-- tz = "Europe/Berlin"
-- window_us = 1209600000000
