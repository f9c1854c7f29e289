SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, 0 AS period, '' AS breakdown, toString(ts_bucket) AS bucket, toFloat64(uniqExact(actor)) AS value
    FROM (
        SELECT toDate(e.timestamp, {tz:String}) AS ts_bucket,
            if(empty(po.override_person_id), e.person_id, po.override_person_id) AS actor
        FROM events AS e
        LEFT JOIN (
            SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
            FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
        ) AS po ON e.person_id = po.old_person_id
        LEFT JOIN (
            SELECT session_key,
                dateDiff('second', min(min_timestamp), max(max_timestamp)) AS sp_0
            FROM sessions
            WHERE team_id = {team:Int64} AND day >= toDate({p2:DateTime64(6, 'UTC')}) AND day <= toDate({p3:DateTime64(6, 'UTC')})
            GROUP BY session_key
        ) AS ss ON ss.session_key = sipHash128(e.mat_session_id)
        WHERE e.team_id = {team:Int64}
          AND e.event = {p0:String}
          AND ifNull(toFloat64OrNull(if(e.mat_session_id = '', '', toString(ss.sp_0))) > {p1:Float64}, 0)
          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
    )
    GROUP BY ts_bucket
)
SETTINGS query_plan_join_swap_table = 'false'
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- p1 = 60
-- p2 = time.Date(2026, time.March, 1, 23, 0, 0, 0, time.UTC)
-- p3 = time.Date(2026, time.March, 11, 22, 59, 59, 999999000, time.UTC)
-- team = 42
-- tz = "Europe/Berlin"
