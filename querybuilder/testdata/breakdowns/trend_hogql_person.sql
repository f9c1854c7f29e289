SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, 0 AS period, breakdown AS breakdown, toString(ts_bucket) AS bucket, toFloat64(uniqExact(actor)) AS value
    FROM (
        SELECT toDate(e.timestamp, {tz:String}) AS ts_bucket,
            if(if(empty(ifNull(toString(coalesce(nullIf(pp.pp_0, ''), {p2:String})), '')), {breakdown_null:String}, ifNull(toString(coalesce(nullIf(pp.pp_0, ''), {p2:String})), '')) IN (
                SELECT if(empty(ifNull(toString(coalesce(nullIf(pp.pp_0, ''), {p2:String})), '')), {breakdown_null:String}, ifNull(toString(coalesce(nullIf(pp.pp_0, ''), {p2:String})), '')) AS breakdown_value
                FROM events AS e
                LEFT JOIN (
                    SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                    FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                ) AS po ON e.person_id = po.old_person_id
                LEFT JOIN (
                    SELECT id,
                        argMax(JSONExtractString(properties, {p1:String}), version) AS pp_0
                    FROM persons WHERE team_id = {team:Int64}
                    GROUP BY id HAVING argMax(is_deleted, version) = 0
                ) AS pp ON pp.id = if(empty(po.override_person_id), e.person_id, po.override_person_id)
                WHERE e.team_id = {team:Int64}
                  AND e.event = {p0:String}
                  AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                GROUP BY breakdown_value
                ORDER BY count() DESC, breakdown_value
                LIMIT {breakdown_limit:UInt32}
            ), if(empty(ifNull(toString(coalesce(nullIf(pp.pp_0, ''), {p2:String})), '')), {breakdown_null:String}, ifNull(toString(coalesce(nullIf(pp.pp_0, ''), {p2:String})), '')), {breakdown_other:String}) AS breakdown,
            if(empty(po.override_person_id), e.person_id, po.override_person_id) AS actor
        FROM events AS e
        LEFT JOIN (
            SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
            FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
        ) AS po ON e.person_id = po.old_person_id
        LEFT JOIN (
            SELECT id,
                argMax(JSONExtractString(properties, {p1:String}), version) AS pp_0
            FROM persons WHERE team_id = {team:Int64}
            GROUP BY id HAVING argMax(is_deleted, version) = 0
        ) AS pp ON pp.id = if(empty(po.override_person_id), e.person_id, po.override_person_id)
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
-- p1 = "plan"
-- p2 = "none"
-- team = 42
-- tz = "Europe/Berlin"
