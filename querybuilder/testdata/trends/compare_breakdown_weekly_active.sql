SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, if(ts_bucket >= toDate({p3:String}), 0, 1) AS period, breakdown, toString(ts_bucket) AS bucket, toFloat64(uniqExact(actor)) AS value
    FROM (
        SELECT breakdown, actor, end_unit, toStartOfWeek(end_unit, {week_mode:UInt8}) AS ts_bucket
        FROM (
            SELECT breakdown, actor, arrayJoin(arrayMap(i -> addDays(u, i), range(7))) AS end_unit
            FROM (
                SELECT DISTINCT toDate(e.timestamp, {tz:String}) AS u,
                    if(if(empty(e.mat_os), {breakdown_null:String}, e.mat_os) IN (
                        SELECT if(empty(e.mat_os), {breakdown_null:String}, e.mat_os) AS breakdown_value
                        FROM events AS e
                        WHERE e.team_id = {team:Int64}
                          AND e.event = {p0:String}
                          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                        GROUP BY breakdown_value
                        ORDER BY count() DESC, breakdown_value
                        LIMIT {breakdown_limit:UInt32}
                    ), if(empty(e.mat_os), {breakdown_null:String}, e.mat_os), {breakdown_other:String}) AS breakdown,
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
    WHERE end_unit = addDays(ts_bucket, 6) AND ts_bucket >= toDate({p1:String}) AND ts_bucket <= toDate({p2:String})
    GROUP BY period, breakdown, ts_bucket
)
-- active_from = time.Date(2026, time.January, 25, 23, 0, 0, 0, time.UTC)
-- breakdown_limit = 25
-- breakdown_null = "$$_posthog_breakdown_null_$$"
-- breakdown_other = "$$_posthog_breakdown_other_$$"
-- date_from = time.Date(2026, time.February, 22, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 15, 22, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- p1 = "2026-02-02"
-- p2 = "2026-03-09"
-- p3 = "2026-02-23"
-- prev_date_from = time.Date(2026, time.February, 1, 23, 0, 0, 0, time.UTC)
-- prev_date_to = time.Date(2026, time.February, 22, 22, 59, 59, 999999000, time.UTC)
-- team = 42
-- tz = "Europe/Berlin"
-- week_mode = 1
