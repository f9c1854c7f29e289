SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, 0 AS period, breakdown AS breakdown, toString(ts_bucket) AS bucket, toFloat64(uniqExact(actor)) AS value
    FROM (
        SELECT toDate(e.timestamp, {tz:String}) AS ts_bucket,
            if(if(empty(g0.gp_0), {breakdown_null:String}, g0.gp_0) IN (
                SELECT if(empty(g0.gp_0), {breakdown_null:String}, g0.gp_0) AS breakdown_value
                FROM events AS e
                LEFT JOIN (
                    SELECT group_key,
                        argMax(JSONExtractString(group_properties, {p1:String}), version) AS gp_0
                    FROM groups WHERE team_id = {team:Int64} AND group_type_index = {p2:UInt8}
                    GROUP BY group_key
                ) AS g0 ON g0.group_key = e.mat_group_0
                WHERE e.team_id = {team:Int64}
                  AND e.event = {p0:String}
                  AND e.mat_group_1 != ''
                  AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                GROUP BY breakdown_value
                ORDER BY count() DESC, breakdown_value
                LIMIT {breakdown_limit:UInt32}
            ), if(empty(g0.gp_0), {breakdown_null:String}, g0.gp_0), {breakdown_other:String}) AS breakdown,
            e.mat_group_1 AS actor
        FROM events AS e
        LEFT JOIN (
            SELECT group_key,
                argMax(JSONExtractString(group_properties, {p1:String}), version) AS gp_0
            FROM groups WHERE team_id = {team:Int64} AND group_type_index = {p2:UInt8}
            GROUP BY group_key
        ) AS g0 ON g0.group_key = e.mat_group_0
        WHERE e.team_id = {team:Int64}
          AND e.event = {p0:String}
          AND e.mat_group_1 != ''
          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
    )
    GROUP BY ts_bucket, breakdown
)
-- breakdown_limit = 25
-- breakdown_null = "$$_posthog_breakdown_null_$$"
-- breakdown_other = "$$_posthog_breakdown_other_$$"
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- p1 = "industry"
-- p2 = 0
-- team = 42
-- tz = "Europe/Berlin"
