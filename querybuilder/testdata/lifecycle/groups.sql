SELECT bucket, status, sum(c) AS actors
FROM (
    SELECT c, arrayJoin(arrayFilter(b -> bitAnd(bitShiftRight(act, b), 1) = 1 OR bitAnd(bitShiftRight(act, b - 1), 1) = 1, range(1, toUInt64({buckets:Int64} + 1)))) AS bucket,
        multiIf(NOT bitAnd(bitShiftRight(act, bucket), 1) = 1, 'dormant', bucket = cp, 'new', bitAnd(bitShiftRight(act, bucket - 1), 1) = 1, 'returning', 'resurrecting') AS status
    FROM (
        SELECT act, cp, count() AS c
        FROM (
            SELECT a, act, if(pc.c >= {active_from:DateTime64(6, 'UTC')}, toInt64(toRelativeDayNum(pc.c, {tz:String})) - toInt64(toRelativeDayNum({p1:Date})), -1) AS cp
            FROM (
                SELECT a, groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(p))) AS act
                FROM (
                    SELECT e.mat_group_1 AS a,
                        toInt64(toRelativeDayNum(e.timestamp, {tz:String})) - toInt64(toRelativeDayNum({p1:Date})) AS p
                    FROM events AS e
                    WHERE e.team_id = {team:Int64}
                      AND e.timestamp >= {active_from:DateTime64(6, 'UTC')}
                      AND e.timestamp < {active_to:DateTime64(6, 'UTC')}
                      AND e.event = {p0:String}
                      AND e.mat_group_1 != ''
                )
                GROUP BY a
            ) AS x
            LEFT JOIN (
                SELECT mat_group_1 AS id, min(timestamp) AS c FROM events WHERE team_id = {team:Int64} AND mat_group_1 != '' AND timestamp < {active_to:DateTime64(6, 'UTC')} GROUP BY id
            ) AS pc ON x.a = pc.id
        )
        GROUP BY act, cp
    )
)
GROUP BY bucket, status
-- active_from = time.Date(2026, time.March, 1, 23, 0, 0, 0, time.UTC)
-- active_to = time.Date(2026, time.March, 10, 23, 0, 0, 0, time.UTC)
-- buckets = 8
-- p0 = "$pageview"
-- p1 = "2026-03-02"
-- team = 42
-- tz = "Europe/Berlin"
