SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, 0 AS period, breakdown AS breakdown, toString(t) AS bucket, toFloat64(sum(delta)) AS value
    FROM (
        SELECT breakdown, arrayJoin(arrayConcat(arrayMap(x -> (x, toInt8(1)), starts), arrayMap(x -> (x + 7, toInt8(-1)), lasts))) AS edge, edge.1 AS t, edge.2 AS delta
        FROM (
            SELECT actor, breakdown, arraySort(groupArray(u)) AS us,
                arrayFilter((x, i) -> i = 1 OR x - us[i - 1] >= 7, us, arrayEnumerate(us)) AS starts,
                arrayFilter((x, i) -> i = length(us) OR us[i + 1] - x >= 7, us, arrayEnumerate(us)) AS lasts
            FROM (
                SELECT DISTINCT toDate(e.timestamp, {tz:String}) AS u,
                    if(empty(po.override_person_id), e.person_id, po.override_person_id) AS actor,
                    if(if(empty(e.mat_os), {breakdown_null:String}, e.mat_os) IN (
                        SELECT if(empty(e.mat_os), {breakdown_null:String}, e.mat_os) AS breakdown_value
                        FROM events AS e
                        WHERE e.team_id = {team:Int64}
                          AND e.event = {p0:String}
                          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                        GROUP BY breakdown_value
                        ORDER BY count() DESC, breakdown_value
                        LIMIT {breakdown_limit:UInt32}
                    ), if(empty(e.mat_os), {breakdown_null:String}, e.mat_os), {breakdown_other:String}) AS breakdown
                FROM events AS e
                LEFT JOIN (
                    SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                    FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                ) AS po ON e.person_id = po.old_person_id
                WHERE e.team_id = {team:Int64}
                  AND e.event = {p0:String}
                  AND e.timestamp >= {active_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
            )
            GROUP BY actor, breakdown
        )
    )
    GROUP BY t, breakdown
)
-- active_from = time.Date(2026, time.January, 25, 23, 0, 0, 0, time.UTC)
-- breakdown_limit = 25
-- breakdown_null = "$$_posthog_breakdown_null_$$"
-- breakdown_other = "$$_posthog_breakdown_other_$$"
-- date_from = time.Date(2026, time.February, 22, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 15, 22, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- prev_date_from = time.Date(2026, time.February, 1, 23, 0, 0, 0, time.UTC)
-- prev_date_to = time.Date(2026, time.February, 22, 22, 59, 59, 999999000, time.UTC)
-- team = 42
-- tz = "Europe/Berlin"
