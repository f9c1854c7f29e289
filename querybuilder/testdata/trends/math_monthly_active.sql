SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, 0 AS period, '' AS breakdown, toString(t) AS bucket, toFloat64(sum(delta)) AS value
    FROM (
        SELECT arrayJoin(arrayConcat(arrayMap(x -> (x, toInt8(1)), starts), arrayMap(x -> (x + 30, toInt8(-1)), lasts))) AS edge, edge.1 AS t, edge.2 AS delta
        FROM (
            SELECT actor, arraySort(groupArray(u)) AS us,
                arrayFilter((x, i) -> i = 1 OR x - us[i - 1] >= 30, us, arrayEnumerate(us)) AS starts,
                arrayFilter((x, i) -> i = length(us) OR us[i + 1] - x >= 30, us, arrayEnumerate(us)) AS lasts
            FROM (
                SELECT DISTINCT toDate(e.timestamp, {tz:String}) AS u,
                    if(empty(po.override_person_id), e.person_id, po.override_person_id) AS actor
                FROM events AS e
                LEFT JOIN (
                    SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                    FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                ) AS po ON e.person_id = po.old_person_id
                WHERE e.team_id = {team:Int64}
                  AND e.event = {p0:String}
                  AND e.timestamp >= {active_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
            )
            GROUP BY actor
        )
    )
    GROUP BY t
)
-- active_from = time.Date(2026, time.January, 29, 23, 0, 0, 0, time.UTC)
-- date_from = time.Date(2026, time.February, 28, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 7, 22, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- team = 42
-- tz = "Europe/Berlin"
