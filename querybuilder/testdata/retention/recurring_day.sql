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
                    SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                        toInt64(toRelativeDayNum(e.timestamp, {tz:String})) - toInt64(toRelativeDayNum({p1:Date})) AS p
                    FROM events AS e
                    LEFT JOIN (
                        SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                        FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                    ) AS po ON e.person_id = po.old_person_id
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
-- intervals = 11
-- p0 = "$pageview"
-- p1 = "2026-02-28"
-- p2 = time.Date(2026, time.February, 27, 23, 0, 0, 0, time.UTC)
-- p3 = time.Date(2026, time.March, 10, 23, 0, 0, 0, time.UTC)
-- team = 42
-- tz = "Europe/Berlin"
