SELECT breakdown, cohort, interval, sum(c) AS actors
FROM (
    SELECT '' AS breakdown, cohort, c,
        arrayJoin(arrayFilter(j -> j = 0 OR bitTest(r, j), range(toUInt64({intervals:UInt32} - cohort)))) AS interval
    FROM (
        SELECT cohort, r, count() AS c
        FROM (
            SELECT bd, arrayJoin(arrayFilter(k -> bitTest(tb, k), range({intervals:UInt32}))) AS cohort, bitShiftRight(rb, cohort) AS r
            FROM (
                SELECT a, '' AS bd, groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(greatest(p, 0)))) AS tb, groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(greatest(p, 0)))) AS rb
                FROM (
                    SELECT e.person_id AS a,
                        toInt64(toRelativeDayNum(e.timestamp, {tz:String})) - toInt64(toRelativeDayNum({p1:Date})) AS p
                    FROM events AS e
                    WHERE e.team_id = {team:Int64}
                      AND e.timestamp < {p3:DateTime64(6, 'UTC')}
                      AND e.timestamp >= {p2:DateTime64(6, 'UTC')}
                      AND e.event = {p0:String}
                )
                GROUP BY a
            )
        )
        GROUP BY cohort, r
    )
)
GROUP BY breakdown, cohort, interval
