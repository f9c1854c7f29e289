SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, period AS period, '' AS breakdown, formatDateTime(ts_bucket, '%Y-%m-%d %H:%i:%S', 'UTC') AS bucket, toFloat64(uniqExact(actor)) AS value
    FROM (
        SELECT toStartOfHour(e.timestamp, {tz:String}) AS ts_bucket,
            if(e.timestamp >= {date_from:DateTime64(6, 'UTC')}, 0, 1) AS period,
            if(empty(po.override_person_id), e.person_id, po.override_person_id) AS actor
        FROM events AS e
        LEFT JOIN (
            SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
            FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
        ) AS po ON e.person_id = po.old_person_id
        WHERE e.team_id = {team:Int64}
          AND e.event = {p0:String}
          AND ((e.timestamp >= {prev_date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {prev_date_to:DateTime64(6, 'UTC')}) OR (e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}))
    )
    GROUP BY ts_bucket, period
)
-- date_from = time.Date(2026, time.March, 10, 9, 30, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 15, 30, 0, 0, time.UTC)
-- p0 = "$pageview"
-- prev_date_from = time.Date(2026, time.March, 10, 2, 30, 0, 0, time.UTC)
-- prev_date_to = time.Date(2026, time.March, 10, 8, 30, 0, 0, time.UTC)
-- team = 42
-- tz = "Europe/Berlin"
