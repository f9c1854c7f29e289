SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, 0 AS period, breakdown AS breakdown, toString(ts_bucket) AS bucket, toFloat64(count()) AS value
    FROM (
        SELECT toDate(e.timestamp, {tz:String}) AS ts_bucket,
            if(toFloat64OrNull(JSONExtractString(e.properties, {p1:String})) IS NULL, {breakdown_null:String}, concat('[', toString(round((
                SELECT quantilesExactInclusive(0, 0.25, 0.5, 0.75, 1)(toFloat64OrNull(JSONExtractString(e.properties, {p1:String})))
                FROM events AS e
                WHERE e.team_id = {team:Int64}
                  AND e.event = {p0:String}
                  AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
            )[greatest(1, arrayFirstIndex(q -> toFloat64OrNull(JSONExtractString(e.properties, {p1:String})) <= q, arrayPopFront((
                SELECT quantilesExactInclusive(0, 0.25, 0.5, 0.75, 1)(toFloat64OrNull(JSONExtractString(e.properties, {p1:String})))
                FROM events AS e
                WHERE e.team_id = {team:Int64}
                  AND e.event = {p0:String}
                  AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
            ))))], 2)), ',', toString(round((
                SELECT quantilesExactInclusive(0, 0.25, 0.5, 0.75, 1)(toFloat64OrNull(JSONExtractString(e.properties, {p1:String})))
                FROM events AS e
                WHERE e.team_id = {team:Int64}
                  AND e.event = {p0:String}
                  AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
            )[greatest(1, arrayFirstIndex(q -> toFloat64OrNull(JSONExtractString(e.properties, {p1:String})) <= q, arrayPopFront((
                SELECT quantilesExactInclusive(0, 0.25, 0.5, 0.75, 1)(toFloat64OrNull(JSONExtractString(e.properties, {p1:String})))
                FROM events AS e
                WHERE e.team_id = {team:Int64}
                  AND e.event = {p0:String}
                  AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
            )))) + 1], 2)), ']')) AS breakdown
        FROM events AS e
        WHERE e.team_id = {team:Int64}
          AND e.event = {p0:String}
          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
    )
    GROUP BY ts_bucket, breakdown
)
-- breakdown_null = "$$_posthog_breakdown_null_$$"
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = "purchase"
-- p1 = "amount"
-- team = 42
-- tz = "Europe/Berlin"
