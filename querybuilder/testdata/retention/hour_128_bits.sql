SELECT breakdown, cohort, interval, sum(c) AS actors
FROM (
    SELECT '' AS breakdown, cohort, c,
        arrayJoin(arrayFilter(j -> j = 0 OR bitAnd(bitShiftRight(r, j), 1) = 1, range(toUInt64({intervals:UInt32} - cohort)))) AS interval
    FROM (
        SELECT cohort, r, count() AS c
        FROM (
            SELECT bd, arrayJoin(arrayFilter(k -> bitAnd(bitShiftRight(tb, k), 1) = 1, range({intervals:UInt32}))) AS cohort, bitShiftRight(rb, cohort) AS r
            FROM (
                SELECT a, '' AS bd, groupBitOr(bitShiftLeft(toUInt128(1), toUInt64(greatest(p, 0)))) AS tb, groupBitOr(bitShiftLeft(toUInt128(1), toUInt64(greatest(p, 0)))) AS rb
                FROM (
                    SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                        intDiv(toInt64(toUnixTimestamp(e.timestamp)) - {p2:Int64}, 3600) AS p
                    FROM events AS e
                    LEFT JOIN (
                        SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                        FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                    ) AS po ON e.person_id = po.old_person_id
                    LEFT JOIN (
                        SELECT id,
                            argMax(JSONExtractString(properties, {p5:String}), version) AS pp_0,
                            argMax(JSONExtractString(properties, {p7:String}), version) AS pp_1
                        FROM persons WHERE team_id = {team:Int64}
                        GROUP BY id HAVING argMax(is_deleted, version) = 0
                    ) AS pp ON pp.id = if(empty(po.override_person_id), e.person_id, po.override_person_id)
                    WHERE e.team_id = {team:Int64}
                      AND e.timestamp < {p4:DateTime64(6, 'UTC')}
                      AND e.timestamp >= {p3:DateTime64(6, 'UTC')}
                      AND e.event = {p0:String}
                      AND (pp.pp_0 = {p6:String} AND positionCaseInsensitiveUTF8(pp.pp_1, {p8:String}) = 0)
                )
                GROUP BY a
            )
        )
        GROUP BY cohort, r
    )
)
GROUP BY breakdown, cohort, interval
-- intervals = 100
-- p0 = "$pageview"
-- p1 = "2026-03-06"
-- p2 = 1772798400
-- p3 = time.Date(2026, time.March, 6, 12, 0, 0, 0, time.UTC)
-- p4 = time.Date(2026, time.March, 10, 16, 0, 0, 0, time.UTC)
-- p5 = "plan"
-- p6 = "pro"
-- p7 = "email"
-- p8 = "@example.com"
-- team = 42
-- tz = "Europe/Berlin"
