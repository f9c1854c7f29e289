SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, period AS period, if(volume > 0 AND value_rank <= {breakdown_limit:UInt32}, breakdown_value, {breakdown_other:String}) AS breakdown, toString(ts_bucket) AS bucket, toFloat64(uniqExactMerge(u)) AS value
    FROM (
        SELECT *, dense_rank() OVER (ORDER BY volume DESC, breakdown_value) AS value_rank
        FROM (
            SELECT *, sumIf(c, period = 0) OVER (PARTITION BY breakdown_value) AS volume
            FROM (
                SELECT *, if(empty(breakdown_raw), {breakdown_null:String}, breakdown_raw) AS breakdown_value
                FROM (
                    SELECT ts_bucket, period, breakdown_raw, count() AS c, uniqExactState(actor) AS u
                    FROM (
                        SELECT toDate(e.timestamp, {tz:String}) AS ts_bucket,
                            if(e.timestamp >= {date_from:DateTime64(6, 'UTC')}, 0, 1) AS period,
                            e.mat_browser AS breakdown_raw,
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
                    GROUP BY ts_bucket, period, breakdown_raw
                )
            )
        )
    )
    GROUP BY ts_bucket, period, breakdown
)
-- breakdown_limit = 25
-- breakdown_null = "$$_posthog_breakdown_null_$$"
-- breakdown_other = "$$_posthog_breakdown_other_$$"
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- prev_date_from = time.Date(2026, time.February, 22, 23, 0, 0, 0, time.UTC)
-- prev_date_to = time.Date(2026, time.March, 2, 22, 59, 59, 999999000, time.UTC)
-- team = 42
-- tz = "Europe/Berlin"
