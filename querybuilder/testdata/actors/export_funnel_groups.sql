SELECT toString(a.actor) AS id,
    toString(a.actor) AS group_key,
    toString({p7:UInt8}) AS group_type_index,
    if(x.group_properties = '', '{}', x.group_properties) AS group_properties,
    if(x.group_key = '', '', formatDateTime(x.created_at, '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC')) AS created_at,
    'group' AS type
FROM (
    SELECT group_key, argMax(group_properties, version) AS group_properties, argMax(created_at, version) AS created_at
    FROM groups WHERE team_id = {team:Int64} AND group_type_index = {p7:UInt8}
    GROUP BY group_key
) AS x
RIGHT JOIN (
    SELECT DISTINCT actor
    FROM (
        SELECT actor, level, t_1, t_2
        FROM (
            SELECT actor, weight, level, excluded, t_1, t_2
            FROM (
                SELECT *,
                    is_hot AND (0) AS excluded,
                    if(is_hot, hot_level, toUInt8(entered)) AS level
                FROM (
                    SELECT *,
                        if(is_hot, if(hot_level >= 1, ts[p_1], 0), entry_t) AS t_1,
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
                                                    SELECT e.mat_group_2 AS a,
                                                        (bitShiftLeft(toUInt64(e.event = {p3:String}), 0)
                                                            + bitShiftLeft(toUInt64(e.event = {p4:String}), 1)) AS m,
                                                        e.mat_group_2 IN (
                                                            SELECT e.mat_group_2
                                                            FROM events AS e
                                                            WHERE e.team_id = {team:Int64}
                                                              AND e.timestamp >= {p0:DateTime64(6, 'UTC')} AND e.timestamp <= {p1:DateTime64(6, 'UTC')}
                                                              AND e.mat_group_2 != ''
                                                              AND (e.event = {p4:String})
                                                        ) AS hot,
                                                        toUnixTimestamp64Micro(e.timestamp) + 1 AS tk,
                                                        toUInt128(e.uuid) AS uk,
                                                        toUnixTimestamp64Micro(e.timestamp) + 1 AS tt0
                                                    FROM events AS e
                                                    WHERE e.team_id = {team:Int64}
                                                      AND e.timestamp >= {p0:DateTime64(6, 'UTC')} AND e.timestamp <= {p1:DateTime64(6, 'UTC')}
                                                      AND e.mat_group_2 != ''
                                                      AND (e.event = {p3:String}
                                                        OR e.event = {p4:String})
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
    WHERE level = {p6:UInt8}
) AS a ON x.group_key = a.actor
ORDER BY id
-- p0 = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- p1 = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p2 = 1209600000000
-- p3 = "$pageview"
-- p4 = "signup"
-- p5 = 0xfe
-- p6 = 0x1
-- p7 = 0x2
-- team = 42
-- tz = "Europe/Berlin"
