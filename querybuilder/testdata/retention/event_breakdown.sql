SELECT breakdown, cohort, interval, sum(c) AS actors
FROM (
    SELECT if(value_rank <= {breakdown_limit:UInt32}, bd, {breakdown_other:String}) AS breakdown, cohort, c,
        arrayJoin(arrayFilter(j -> j = 0 OR bitTest(r, j), range(toUInt64({intervals:UInt32} - cohort)))) AS interval
    FROM (
        SELECT *, dense_rank() OVER (ORDER BY volume DESC, bd) AS value_rank
        FROM (
            SELECT *, sum(c) OVER (PARTITION BY bd) AS volume
            FROM (
                SELECT bd, cohort, r, count() AS c
                FROM (
                    SELECT if(empty(bd), {breakdown_null:String}, bd) AS bd, arrayJoin(arrayFilter(k -> bitTest(tb, k), range({intervals:UInt32}))) AS cohort, bitShiftRight(rb, cohort) AS r
                    FROM (
                        SELECT a, cohort.2 AS bd, bitShiftLeft(toUInt64(1), toUInt64(greatest(cohort.1, 0))) AS tb, rb
                        FROM (
                            SELECT a, groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(greatest(p, 0)))) AS rb, groupArray((p, entry_bd)) AS cohorts
                            FROM (
                                SELECT a, p, argMin(bd, at) AS entry_bd
                                FROM (
                                    SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                                        toInt64(toRelativeDayNum(e.timestamp, {tz:String})) - toInt64(toRelativeDayNum({p1:Date})) AS p,
                                        e.mat_browser AS bd,
                                        bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(e.timestamp)), 128), toUInt256(toUInt128(e.uuid))) AS at
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
                                GROUP BY a, p
                            )
                            GROUP BY a
                        )
                        ARRAY JOIN cohorts AS cohort
                    )
                )
                GROUP BY bd, cohort, r
            )
        )
    )
)
GROUP BY breakdown, cohort, interval
-- breakdown_limit = 5
-- breakdown_null = "$$_posthog_breakdown_null_$$"
-- breakdown_other = "$$_posthog_breakdown_other_$$"
-- intervals = 11
-- p0 = "$pageview"
-- p1 = "2026-02-28"
-- p2 = time.Date(2026, time.February, 27, 23, 0, 0, 0, time.UTC)
-- p3 = time.Date(2026, time.March, 10, 23, 0, 0, 0, time.UTC)
-- team = 42
-- tz = "Europe/Berlin"
