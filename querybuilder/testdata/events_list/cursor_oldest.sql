SELECT e.uuid,
    e.event,
    e.distinct_id,
    e.properties,
    e.timestamp,
    if(empty(po.override_person_id), e.person_id, po.override_person_id) AS person_id
FROM events AS e
LEFT JOIN (
    SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
    FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
) AS po ON e.person_id = po.old_person_id
WHERE e.team_id = {team:Int64}
  AND e.timestamp >= {p0:DateTime64(6, 'UTC')}
  AND (e.timestamp, e.uuid) > ({p0:DateTime64(6, 'UTC')}, {p1:UUID})
ORDER BY e.timestamp ASC, e.uuid ASC
LIMIT {limit:UInt32}
-- limit = 0x65
-- p0 = time.Date(2026, time.March, 4, 5, 6, 7, 123456000, time.UTC)
-- p1 = "0190d6a2-5b7e-7c3a-9f1e-2d4b6a8c0e12"
-- team = 42
-- tz = "Europe/Berlin"
