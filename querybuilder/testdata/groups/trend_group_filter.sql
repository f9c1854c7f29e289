SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, 0 AS period, '' AS breakdown, toString(ts_bucket) AS bucket, toFloat64(count()) AS value
    FROM (
        SELECT toDate(e.timestamp, {tz:String}) AS ts_bucket
        FROM events AS e
        LEFT JOIN (
            SELECT group_key,
                argMax(JSONExtractString(group_properties, {p1:String}), version) AS gp_0,
                argMax(JSONExtractString(group_properties, {p4:String}), version) AS gp_1
            FROM groups WHERE team_id = {team:Int64} AND group_type_index = {p6:UInt8}
            GROUP BY group_key
        ) AS g0 ON g0.group_key = e.mat_group_0
        LEFT JOIN (
            SELECT group_key,
                argMax(JSONType(group_properties, {p3:String}) != 'Null', version) AS gp_0
            FROM groups WHERE team_id = {team:Int64} AND group_type_index = {p7:UInt8}
            GROUP BY group_key
        ) AS g1 ON g1.group_key = e.mat_group_1
        WHERE e.team_id = {team:Int64}
          AND e.event = {p0:String}
          AND (g0.gp_0 = {p2:String} AND g1.gp_0 = 1 AND g0.gp_1 = {p5:String})
          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
    )
    GROUP BY ts_bucket
)
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- p1 = "industry"
-- p2 = "finance"
-- p3 = "size"
-- p4 = "plan"
-- p5 = "pro"
-- p6 = 0
-- p7 = 1
-- team = 42
-- tz = "Europe/Berlin"
