SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, 0 AS period, breakdown AS breakdown, toString(ts_bucket) AS bucket, toFloat64(count()) AS value
    FROM (
        SELECT toDate(e.timestamp, {tz:String}) AS ts_bucket,
            if(toJSONString([if(empty(if(e.mat_session_id = '', '', toString(ss.sp_0))), {breakdown_null:String}, if(e.mat_session_id = '', '', toString(ss.sp_0))), if(empty(if(empty(trim(TRAILING '/?#' FROM e.mat_current_url)), if(empty(e.mat_current_url), '', '/'), trim(TRAILING '/?#' FROM e.mat_current_url))), {breakdown_null:String}, if(empty(trim(TRAILING '/?#' FROM e.mat_current_url)), if(empty(e.mat_current_url), '', '/'), trim(TRAILING '/?#' FROM e.mat_current_url)))]) IN (
                SELECT toJSONString([if(empty(if(e.mat_session_id = '', '', toString(ss.sp_0))), {breakdown_null:String}, if(e.mat_session_id = '', '', toString(ss.sp_0))), if(empty(if(empty(trim(TRAILING '/?#' FROM e.mat_current_url)), if(empty(e.mat_current_url), '', '/'), trim(TRAILING '/?#' FROM e.mat_current_url))), {breakdown_null:String}, if(empty(trim(TRAILING '/?#' FROM e.mat_current_url)), if(empty(e.mat_current_url), '', '/'), trim(TRAILING '/?#' FROM e.mat_current_url)))]) AS breakdown_value
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
                GROUP BY breakdown_value
                ORDER BY count() DESC, breakdown_value
                LIMIT {breakdown_limit:UInt32}
            ), toJSONString([if(empty(if(e.mat_session_id = '', '', toString(ss.sp_0))), {breakdown_null:String}, if(e.mat_session_id = '', '', toString(ss.sp_0))), if(empty(if(empty(trim(TRAILING '/?#' FROM e.mat_current_url)), if(empty(e.mat_current_url), '', '/'), trim(TRAILING '/?#' FROM e.mat_current_url))), {breakdown_null:String}, if(empty(trim(TRAILING '/?#' FROM e.mat_current_url)), if(empty(e.mat_current_url), '', '/'), trim(TRAILING '/?#' FROM e.mat_current_url)))]), {breakdown_other:String}) AS breakdown
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
    GROUP BY ts_bucket, breakdown
)
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
