SELECT breakdown, cohort, interval, sum(c) AS actors
FROM (
    SELECT '' AS breakdown, cohort, c,
        arrayJoin(arrayFilter(j -> j = 0 OR bitTest(r, j), range(toUInt64({intervals:UInt32} - cohort)))) AS interval
    FROM (
        SELECT cohort, r, count() AS c
        FROM (
            SELECT bd, arrayJoin(arrayFilter(k -> bitTest(tb, k), range({intervals:UInt32}))) AS cohort, bitShiftRight(rb, cohort) AS r
            FROM (
                SELECT a, '' AS bd, groupBitOrIf(bitShiftLeft(toUInt64(1), toUInt64(greatest(p, 0))), t) AS tb, groupBitOrIf(bitShiftLeft(toUInt64(1), toUInt64(greatest(p, 0))), r) AS rb
                FROM (
                    SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                        intDiv(toInt64(toRelativeDayNum(e.timestamp, {tz:String})) - toInt64(toRelativeDayNum({p3:Date})), 7) AS p,
                        e.event = {p0:String} AS t,
                        e.event = {p1:String} AND e.mat_browser = {p2:String} AS r
                    FROM events AS e
                    LEFT JOIN (
                        SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                        FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                    ) AS po ON e.person_id = po.old_person_id
                    WHERE e.team_id = {team:Int64}
                      AND e.timestamp < {p5:DateTime64(6, 'UTC')}
                      AND e.timestamp >= {p4:DateTime64(6, 'UTC')}
                      AND ((e.event = {p0:String}) OR (e.event = {p1:String} AND e.mat_browser = {p2:String}))
                )
                GROUP BY a
            )
        )
        GROUP BY cohort, r
    )
)
GROUP BY breakdown, cohort, interval
-- intervals = 6
-- p0 = "signup"
-- p1 = "$pageview"
-- p2 = "Chrome"
-- p3 = "2026-01-19"
-- p4 = time.Date(2026, time.January, 18, 23, 0, 0, 0, time.UTC)
-- p5 = time.Date(2026, time.March, 1, 23, 0, 0, 0, time.UTC)
-- team = 42
-- tz = "Europe/Berlin"
