SELECT 0 AS series, period, buckets, count() AS actors
FROM (
    SELECT a, 0 AS period, bitCount(groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(p)))) AS buckets
    FROM (
        SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
            toInt64(toRelativeDayNum(e.timestamp, {tz:String})) - toInt64(toRelativeDayNum({p0:Date})) AS p
        FROM events AS e
        LEFT JOIN (
            SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
            FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
        ) AS po ON e.person_id = po.old_person_id
        WHERE e.team_id = {team:Int64}
          AND e.event = {p1:String}
          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
    )
    GROUP BY a
)
GROUP BY period, buckets
UNION ALL
SELECT 1 AS series, period, buckets, count() AS actors
FROM (
    SELECT a, 0 AS period, bitCount(groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(p)))) AS buckets
    FROM (
        SELECT e.mat_group_0 AS a,
            toInt64(toRelativeDayNum(e.timestamp, {tz:String})) - toInt64(toRelativeDayNum({p0:Date})) AS p
        FROM events AS e
        WHERE e.team_id = {team:Int64}
          AND e.event = {p2:String}
          AND e.mat_group_0 != ''
          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
    )
    GROUP BY a
)
GROUP BY period, buckets
-- date_from = time.Date(2026, time.February, 7, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = "2026-02-08"
-- p1 = "$pageview"
-- p2 = "signup"
-- team = 42
-- tz = "Europe/Berlin"
