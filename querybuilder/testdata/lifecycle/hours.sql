SELECT st.1 AS bucket, st.2 AS status, count() AS actors
FROM (
    SELECT a, ps, if(pc.c >= {active_from:DateTime64(6, 'UTC')}, intDiv(toInt64(toUnixTimestamp(pc.c)) - {p4:Int64}, 3600), -1) AS cp
    FROM (
        SELECT a, arraySort(groupUniqArray(p)) AS ps
        FROM (
            SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                intDiv(toInt64(toUnixTimestamp(e.timestamp)) - {p4:Int64}, 3600) AS p
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
              AND e.timestamp >= {active_from:DateTime64(6, 'UTC')}
              AND e.timestamp < {active_to:DateTime64(6, 'UTC')}
              AND e.event = {p0:String}
              AND pp.pp_0 = {p2:String}
        )
        GROUP BY a
    ) AS x
    LEFT JOIN (
        SELECT id, created_at AS c FROM persons FINAL WHERE team_id = {team:Int64}
    ) AS pc ON x.a = pc.id
)
ARRAY JOIN arrayConcat(
    arrayFilter(x -> x.1 >= 1, arrayMap((b, i) -> (b, multiIf(b = cp, 'new', i > 1 AND ps[i - 1] = b - 1, 'returning', 'resurrecting')), ps, arrayEnumerate(ps))),
    arrayMap(b -> (b + 1, 'dormant'), arrayFilter((b, i) -> b < {buckets:Int64} AND (i = length(ps) OR ps[i + 1] != b + 1), ps, arrayEnumerate(ps)))) AS st
GROUP BY bucket, status
-- active_from = time.Date(2026, time.March, 6, 14, 0, 0, 0, time.UTC)
-- active_to = time.Date(2026, time.March, 10, 16, 0, 0, 0, time.UTC)
-- buckets = 97
-- p0 = "$pageview"
-- p1 = "plan"
-- p2 = "pro"
-- p3 = "2026-03-06"
-- p4 = 1772805600
-- team = 42
-- tz = "Europe/Berlin"
