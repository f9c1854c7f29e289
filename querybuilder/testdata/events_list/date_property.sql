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
  AND ifNull(parseDateTime64BestEffortOrNull(JSONExtractString(e.properties, {p0:String}), 6, {tz:String}) > {p1:DateTime64(6, 'UTC')}, 0)
ORDER BY e.timestamp DESC, e.uuid DESC
LIMIT {limit:UInt32}
-- limit = 0x65
-- p0 = "signed_up"
-- p1 = time.Date(2026, time.February, 28, 23, 0, 0, 0, time.UTC)
-- team = 42
-- tz = "Europe/Berlin"
