SELECT if(value_rank <= {breakdown_limit:UInt32}, raw_value, {breakdown_other:String}) AS breakdown,
    [sum(c_1), sum(c_2)] AS counts,
    [NULL, if(sum(c_2) = 0, NULL, avgIfMerge(a_2))] AS average_times,
    [NULL, if(sum(c_2) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_2))] AS median_times
FROM (
    SELECT *, dense_rank() OVER (ORDER BY c_1 DESC, raw_value) AS value_rank
    FROM (
        SELECT breakdown_value AS raw_value,
            sumIf(weight, level >= 1) AS c_1,
            sumIf(weight, level >= 2) AS c_2,
            avgIfState((t_2 - t_1) / 1e6, level >= 2) AS a_2,
            quantileExactInclusiveIfState(0.5)((t_2 - t_1) / 1e6, level >= 2) AS q_2
        FROM (
            SELECT *
            FROM (
                SELECT actor, weight, level, excluded, t_1, t_2, breakdown_value
                FROM (
                    SELECT *,
                        is_hot AND (0) AS excluded,
                        if(is_hot, hot_level, toUInt8(entered)) AS level,
                        if(is_hot, if(hot_level >= 1, bds[arrival[p_1]], {breakdown_null:String}), entry_bd) AS breakdown_value
                    FROM (
                        SELECT *,
                            if(hot_level >= 1, ts[p_1], 0) AS t_1,
                            if(hot_level >= 2, ts[p_2], 0) AS t_2
                        FROM (
                            SELECT *,
                                if(hot_level >= 1, arrayFirstIndex(x -> x = start, s_1), 0) AS p_1,
                                if(hot_level >= 2, arrayFirstIndex(x -> x = start, s_2), 0) AS p_2
                            FROM (
                                SELECT *,
                                    toUInt8(multiIf(s_2[-1] != 0, 2, s_1[-1] != 0, 1, 0)) AS hot_level,
                                    multiIf(s_2[-1] != 0, s_2[-1], s_1[-1] != 0, s_1[-1], 0) AS start
                                FROM (
                                    SELECT *,
                                        arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 1) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_1, 0)))) AS s_2
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
                                                            SELECT e.mat_group_2 AS a,
                                                                (bitShiftLeft(toUInt64(e.event = {p0:String}), 0)
                                                                    + bitShiftLeft(toUInt64(e.event = {p1:String}), 1)) AS m,
                                                                e.mat_group_2 IN (
                                                                    SELECT e.mat_group_2
                                                                    FROM events AS e
                                                                    LEFT JOIN (
                                                                        SELECT group_key,
                                                                            argMax(JSONExtractString(group_properties, {p2:String}), version) AS gp_0
                                                                        FROM groups WHERE team_id = {team:Int64} AND group_type_index = {p4:UInt8}
                                                                        GROUP BY group_key
                                                                    ) AS g0 ON g0.group_key = e.mat_group_0
                                                                    WHERE e.team_id = {team:Int64}
                                                                      AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                                                                      AND e.mat_group_2 != ''
                                                                      AND g0.gp_0 = {p3:String}
                                                                      AND (e.event = {p1:String})
                                                                ) AS hot,
                                                                toUnixTimestamp64Micro(e.timestamp) + 1 AS tk,
                                                                toUInt128(e.uuid) AS uk,
                                                                if(empty(g2.gp_0), {breakdown_null:String}, g2.gp_0) AS bd,
                                                                bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(e.timestamp) + 1), 128), toUInt256(toUInt128(e.uuid))) AS at
                                                            FROM events AS e
                                                            LEFT JOIN (
                                                                SELECT group_key,
                                                                    argMax(JSONExtractString(group_properties, {p2:String}), version) AS gp_0
                                                                FROM groups WHERE team_id = {team:Int64} AND group_type_index = {p4:UInt8}
                                                                GROUP BY group_key
                                                            ) AS g0 ON g0.group_key = e.mat_group_0
                                                            LEFT JOIN (
                                                                SELECT group_key,
                                                                    argMax(JSONExtractString(group_properties, {p5:String}), version) AS gp_0
                                                                FROM groups WHERE team_id = {team:Int64} AND group_type_index = {p6:UInt8}
                                                                GROUP BY group_key
                                                            ) AS g2 ON g2.group_key = e.mat_group_2
                                                            WHERE e.team_id = {team:Int64}
                                                              AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                                                              AND e.mat_group_2 != ''
                                                              AND g0.gp_0 = {p3:String}
                                                              AND (e.event = {p0:String}
                                                                OR e.event = {p1:String})
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
)
GROUP BY breakdown
-- breakdown_limit = 10
-- breakdown_null = "$$_posthog_breakdown_null_$$"
-- breakdown_other = "$$_posthog_breakdown_other_$$"
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- p1 = "signup"
-- p2 = "industry"
-- p3 = "finance"
-- p4 = 0
-- p5 = "size"
-- p6 = 2
-- team = 42
-- tz = "Europe/Berlin"
-- window_us = 1209600000000
