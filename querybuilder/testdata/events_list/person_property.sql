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
LEFT JOIN (
    SELECT id,
        argMax(JSONExtractString(properties, {p0:String}), version) AS pp_0
    FROM persons WHERE team_id = {team:Int64}
    GROUP BY id HAVING argMax(is_deleted, version) = 0
) AS pp ON pp.id = if(empty(po.override_person_id), e.person_id, po.override_person_id)
WHERE e.team_id = {team:Int64}
  AND (pp.pp_0 = {p1:String} OR e.mat_os = {p2:String})
ORDER BY e.timestamp DESC, e.uuid DESC
LIMIT {limit:UInt32}
-- limit = 0x65
-- p0 = "plan"
-- p1 = "pro"
-- p2 = "Mac"
-- team = 42
-- tz = "Europe/Berlin"
