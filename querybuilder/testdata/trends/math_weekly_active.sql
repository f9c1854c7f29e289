SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, 0 AS period, breakdown, toString(ts_bucket) AS bucket, toFloat64(uniqExact(actor)) AS value
    FROM (
        SELECT breakdown, actor, end_unit, end_unit AS ts_bucket
        FROM (
            SELECT breakdown, actor, arrayJoin(arrayMap(i -> addDays(u, i), range(7))) AS end_unit
            FROM (
                SELECT DISTINCT toDate(e.timestamp, {tz:String}) AS u,
                    '' AS breakdown,
                    if(empty(po.override_person_id), e.person_id, po.override_person_id) AS actor
                FROM events AS e
                LEFT JOIN (
                    SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                    FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                ) AS po ON e.person_id = po.old_person_id
                WHERE e.team_id = {team:Int64}
                  AND e.event = {p0:String}
                  AND e.timestamp >= {active_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
            )
        )
    )
    WHERE ts_bucket >= toDate({p1:String}) AND ts_bucket <= toDate({p2:String})
    GROUP BY period, breakdown, ts_bucket
)
-- active_from = time.Date(2026, time.February, 21, 23, 0, 0, 0, time.UTC)
-- date_from = time.Date(2026, time.February, 28, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 7, 22, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- p1 = "2026-03-01"
-- p2 = "2026-03-07"
-- team = 42
-- tz = "Europe/Berlin"
