SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, 0 AS period, '' AS breakdown, formatDateTime(ts_bucket, '%Y-%m-%d %H:%i:%S', 'UTC') AS bucket, toFloat64(count()) AS value
    FROM (
        SELECT toStartOfHour(e.timestamp, {tz:String}) AS ts_bucket
        FROM events AS e
        WHERE e.team_id = {team:Int64}
          AND e.event = {p0:String}
          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
    )
    GROUP BY ts_bucket
)
-- date_from = time.Date(2026, time.March, 28, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 29, 4, 0, 0, 0, time.UTC)
-- p0 = "$pageview"
-- team = 42
-- tz = "Europe/Berlin"
