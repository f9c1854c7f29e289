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
  AND (e.mat_browser = {p0:String} AND ifNull(toFloat64OrNull(JSONExtractString(e.properties, {p1:String})) > {p2:Float64}, 0))
ORDER BY e.timestamp DESC, e.uuid DESC
LIMIT {limit:UInt32}
-- limit = 0x65
-- p0 = "Chrome"
-- p1 = "amount"
-- p2 = 10
-- team = 42
-- tz = "Europe/Berlin"
