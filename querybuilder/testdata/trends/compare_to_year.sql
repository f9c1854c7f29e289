SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, period AS period, '' AS breakdown, toString(ts_bucket) AS bucket, toFloat64(count()) AS value
    FROM (
        SELECT toDate(e.timestamp, {tz:String}) AS ts_bucket,
            if(e.timestamp >= {date_from:DateTime64(6, 'UTC')}, 0, 1) AS period
        FROM events AS e
        WHERE e.team_id = {team:Int64}
          AND e.event = {p0:String}
          AND ((e.timestamp >= {prev_date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {prev_date_to:DateTime64(6, 'UTC')}) OR (e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}))
    )
    GROUP BY ts_bucket, period
)
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- prev_date_from = time.Date(2025, time.March, 2, 23, 0, 0, 0, time.UTC)
-- prev_date_to = time.Date(2025, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- team = 42
-- tz = "Europe/Berlin"
