SELECT toString(a.actor) AS id,
    toString(a.actor) AS uuid,
    multiIf(JSONExtractString(x.properties, {p5:String}) != '', JSONExtractString(x.properties, {p5:String}), JSONExtractString(x.properties, {p6:String}) != '', JSONExtractString(x.properties, {p6:String}), notEmpty(x.distinct_ids), x.distinct_ids[1], toString(a.actor)) AS name,
    toJSONString(x.distinct_ids) AS distinct_ids,
    if(x.properties = '', '{}', x.properties) AS properties,
    if(empty(x.distinct_ids), '', formatDateTime(x.created_at, '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC')) AS created_at,
    if(x.is_identified = 1, 'true', 'false') AS is_identified,
    toJSONString(a.appearances) AS appearances
FROM (
    SELECT p.id AS id, p.properties AS properties, p.created_at AS created_at, p.is_identified AS is_identified, d.distinct_ids AS distinct_ids
    FROM (
        SELECT id, argMax(properties, version) AS properties, argMax(created_at, version) AS created_at,
            argMax(is_identified, version) AS is_identified
        FROM persons WHERE team_id = {team:Int64}
        GROUP BY id HAVING argMax(is_deleted, version) = 0
    ) AS p
    INNER JOIN (
        SELECT person_id, arraySort(groupArray(distinct_id)) AS distinct_ids
        FROM (
            SELECT distinct_id, argMax(person_id, version) AS person_id
            FROM person_distinct_id WHERE team_id = {team:Int64}
            GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0
        )
        GROUP BY person_id
    ) AS d ON d.person_id = p.id
) AS x
RIGHT JOIN (
    SELECT a AS actor, arrayMap(j -> toUInt8(j = 0 OR bitAnd(bitShiftRight(rb, {p0:UInt32} + j), 1) = 1), range(toUInt64({intervals:UInt32} - {p0:UInt32}))) AS appearances
    FROM (
        SELECT a, '' AS bd, groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(greatest(p, 0)))) AS tb, groupBitOr(bitShiftLeft(toUInt64(1), toUInt64(greatest(p, 0)))) AS rb
        FROM (
            SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                toInt64(toRelativeDayNum(e.timestamp, {tz:String})) - toInt64(toRelativeDayNum({p2:Date})) AS p
            FROM events AS e
            LEFT JOIN (
                SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
            ) AS po ON e.person_id = po.old_person_id
            WHERE e.team_id = {team:Int64}
              AND e.timestamp < {p4:DateTime64(6, 'UTC')}
              AND e.timestamp >= {p3:DateTime64(6, 'UTC')}
              AND e.event = {p1:String}
        )
        GROUP BY a
    )
    WHERE bitAnd(bitShiftRight(tb, {p0:UInt32}), 1) = 1
) AS a ON x.id = a.actor
ORDER BY id
-- intervals = 4
-- p0 = 0x0
-- p1 = "$pageview"
-- p2 = "2026-03-07"
-- p3 = time.Date(2026, time.March, 6, 23, 0, 0, 0, time.UTC)
-- p4 = time.Date(2026, time.March, 10, 23, 0, 0, 0, time.UTC)
-- p5 = "email"
-- p6 = "name"
-- team = 42
-- tz = "Europe/Berlin"
