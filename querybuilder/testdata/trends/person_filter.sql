SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, 0 AS period, '' AS breakdown, toString(ts_bucket) AS bucket, toFloat64(count()) AS value
    FROM (
        SELECT toDate(e.timestamp, {tz:String}) AS ts_bucket
        FROM events AS e
        LEFT JOIN (
            SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
            FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
        ) AS po ON e.person_id = po.old_person_id
        WHERE e.team_id = {team:Int64}
          AND e.event = {p0:String}
          AND if(empty(po.override_person_id), e.person_id, po.override_person_id) IN (
              SELECT id FROM persons FINAL
              WHERE team_id = {team:Int64} AND is_deleted = 0 AND ((JSONExtractString(properties, {p1:String})) = {p2:String})
          )
          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
    )
    GROUP BY ts_bucket
)
-- date_from = time.Date(2026, time.February, 28, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 7, 22, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- p1 = "plan"
-- p2 = "pro"
-- team = 42
-- tz = "Europe/Berlin"
