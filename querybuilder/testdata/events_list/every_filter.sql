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
  AND e.event = {p0:String}
  AND e.distinct_id = {p1:String}
  AND if(empty(po.override_person_id), e.person_id, po.override_person_id) = {p2:UUID}
  AND e.timestamp > {p3:DateTime64(6, 'UTC')}
  AND e.timestamp < {p4:DateTime64(6, 'UTC')}
ORDER BY e.timestamp DESC, e.uuid DESC
LIMIT {limit:UInt32}
-- limit = 0x33
-- p0 = "$pageview"
-- p1 = "ada"
-- p2 = "0190d6a2-5b7e-7c3a-9f1e-2d4b6a8c0e12"
-- p3 = time.Date(2026, time.February, 28, 23, 0, 0, 0, time.UTC)
-- p4 = time.Date(2026, time.March, 9, 15, 30, 0, 0, time.UTC)
-- team = 42
-- tz = "Europe/Berlin"
