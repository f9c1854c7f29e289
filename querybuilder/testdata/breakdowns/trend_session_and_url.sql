SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, 0 AS period, if(volume > 0 AND value_rank <= {breakdown_limit:UInt32}, breakdown_value, {breakdown_other:String}) AS breakdown, toString(ts_bucket) AS bucket, toFloat64(sum(c)) AS value
    FROM (
        SELECT *, dense_rank() OVER (ORDER BY volume DESC, breakdown_value) AS value_rank
        FROM (
            SELECT *, sum(c) OVER (PARTITION BY breakdown_value) AS volume
            FROM (
                SELECT *, toJSONString([if(empty(breakdown_raw), {breakdown_null:String}, breakdown_raw), if(empty(if(empty(trim(TRAILING '/?#' FROM breakdown_raw_1)), if(empty(breakdown_raw_1), '', '/'), trim(TRAILING '/?#' FROM breakdown_raw_1))), {breakdown_null:String}, if(empty(trim(TRAILING '/?#' FROM breakdown_raw_1)), if(empty(breakdown_raw_1), '', '/'), trim(TRAILING '/?#' FROM breakdown_raw_1)))]) AS breakdown_value
                FROM (
                    SELECT ts_bucket, breakdown_hash, breakdown_hash_1, any(breakdown_key) AS breakdown_raw, min(breakdown_check) AS breakdown_check_min, max(breakdown_check) AS breakdown_check_max, any(breakdown_key_1) AS breakdown_raw_1, min(breakdown_check_1) AS breakdown_check_min_1, max(breakdown_check_1) AS breakdown_check_max_1, count() AS c
                    FROM (
                        SELECT toDate(e.timestamp, {tz:String}) AS ts_bucket,
                            if(e.mat_session_id = '', '', toString(ss.sp_0)) AS breakdown_key,
                            cityHash64(breakdown_key) AS breakdown_hash,
                            sipHash64(breakdown_key) AS breakdown_check,
                            e.mat_current_url AS breakdown_key_1,
                            cityHash64(breakdown_key_1) AS breakdown_hash_1,
                            sipHash64(breakdown_key_1) AS breakdown_check_1
                        FROM events AS e
                        LEFT JOIN (
                            SELECT session_key,
                                argMinIfMerge(entry_url) AS sp_0
                            FROM sessions
                            WHERE team_id = {team:Int64} AND day >= toDate({p1:DateTime64(6, 'UTC')}) AND day <= toDate({p2:DateTime64(6, 'UTC')})
                            GROUP BY session_key
                        ) AS ss ON ss.session_key = sipHash128(e.mat_session_id)
                        WHERE e.team_id = {team:Int64}
                          AND e.event = {p0:String}
                          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                    )
                    GROUP BY ts_bucket, breakdown_hash, breakdown_hash_1
                )
                WHERE throwIf(breakdown_check_min != breakdown_check_max OR breakdown_check_min_1 != breakdown_check_max_1, 'two breakdown values share a 64-bit hash') = 0
            )
        )
    )
    GROUP BY ts_bucket, breakdown
)
SETTINGS query_plan_join_swap_table = 'false'
-- breakdown_limit = 25
-- breakdown_null = "$$_posthog_breakdown_null_$$"
-- breakdown_other = "$$_posthog_breakdown_other_$$"
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- p1 = time.Date(2026, time.March, 1, 23, 0, 0, 0, time.UTC)
-- p2 = time.Date(2026, time.March, 11, 22, 59, 59, 999999000, time.UTC)
-- team = 42
-- tz = "Europe/Berlin"
