SELECT bucket, status, sum(c) AS actors
FROM (
    SELECT c, arrayJoin(arrayFilter(b -> bitAnd(bitShiftRight(act, b), 1) = 1 OR bitAnd(bitShiftRight(act, b - 1), 1) = 1, range(1, toUInt64({buckets:Int64} + 1)))) AS bucket,
        multiIf(NOT bitAnd(bitShiftRight(act, bucket), 1) = 1, 'dormant', bucket = cp, 'new', bitAnd(bitShiftRight(act, bucket - 1), 1) = 1, 'returning', 'resurrecting') AS status
    FROM (
        SELECT act, cp, count() AS c
        FROM (
            SELECT a, act, if(pc.c >= {active_from:DateTime64(6, 'UTC')}, intDiv(toInt64(toRelativeDayNum(pc.c, {tz:String})) - toInt64(toRelativeDayNum({p3:Date})), 7), -1) AS cp
            FROM (
                SELECT a, groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(p))) AS act
                FROM (
                    SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                        intDiv(toInt64(toRelativeDayNum(e.timestamp, {tz:String})) - toInt64(toRelativeDayNum({p3:Date})), 7) AS p
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
                      AND positionCaseInsensitiveUTF8(pp.pp_0, {p2:String}) = 0
                )
                GROUP BY a
            ) AS x
            LEFT JOIN (
                SELECT id, created_at AS c FROM persons FINAL WHERE team_id = {team:Int64}
            ) AS pc ON x.a = pc.id
        )
        GROUP BY act, cp
    )
)
GROUP BY bucket, status
-- active_from = time.Date(2026, time.January, 4, 23, 0, 0, 0, time.UTC)
-- active_to = time.Date(2026, time.March, 15, 23, 0, 0, 0, time.UTC)
-- buckets = 9
-- p0 = "signup"
-- p1 = "email"
-- p2 = "@example.com"
-- p3 = "2026-01-05"
-- team = 42
-- tz = "Europe/Berlin"
