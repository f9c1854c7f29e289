SELECT 0 AS series, period, buckets, count() AS actors
FROM (
    SELECT a, 0 AS period, uniqExact(p) AS buckets
    FROM (
        SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
            intDiv(toInt64(toUnixTimestamp(e.timestamp)) - {p1:Int64}, 3600) AS p
        FROM events AS e
        LEFT JOIN (
            SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
            FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
        ) AS po ON e.person_id = po.old_person_id
        WHERE e.team_id = {team:Int64}
          AND e.event = {p2:String}
          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
    )
    GROUP BY a
)
GROUP BY period, buckets
-- date_from = time.Date(2026, time.March, 6, 15, 30, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 15, 30, 0, 0, time.UTC)
-- p0 = "2026-03-06"
-- p1 = 1772809200
-- p2 = "$pageview"
-- team = 42
-- tz = "Europe/Berlin"
