SELECT hq_t_a.event AS hq_col_a, count() AS hq_col_b
FROM (
    SELECT e.uuid AS uuid, e.event AS event, e.timestamp AS timestamp, e.distinct_id AS distinct_id, e.properties AS properties, e.created_at AS created_at, e.mat_current_url AS mat_current_url, e.mat_pathname AS mat_pathname, e.mat_screen_name AS mat_screen_name, e.mat_session_id AS mat_session_id, e.mat_browser AS mat_browser, e.mat_os AS mat_os, e.mat_device_type AS mat_device_type, e.mat_group_0 AS mat_group_0, e.mat_group_1 AS mat_group_1, e.mat_group_2 AS mat_group_2, e.mat_group_3 AS mat_group_3, e.mat_group_4 AS mat_group_4, (e.timestamp >= {p0:DateTime64(6, 'UTC')} AND e.timestamp < {p1:DateTime64(6, 'UTC')} AND ((e.mat_browser = {p2:String} AND pp.pf_0 IN {p4:Array(String)}) AND positionCaseInsensitiveUTF8(pp.pf_1, {p6:String}) = 0)) AS filters_match, if(empty(po.override_person_id), e.person_id, po.override_person_id) AS person_id
    FROM events AS e
    LEFT JOIN (
        SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
        FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
    ) AS po ON e.person_id = po.old_person_id
    LEFT JOIN (
        SELECT id, argMax(JSONExtractString(properties, {p3:String}), version) AS pf_0, argMax(JSONExtractString(properties, {p5:String}), version) AS pf_1
        FROM persons WHERE team_id = {team:Int64}
        GROUP BY id HAVING argMax(is_deleted, version) = 0
    ) AS pp ON pp.id = if(empty(po.override_person_id), e.person_id, po.override_person_id)
    WHERE e.team_id = {team:Int64}
) AS hq_t_a
WHERE hq_t_a.filters_match
GROUP BY hq_t_a.event
LIMIT {p7:UInt64}
-- p0 = time.Date(2026, time.February, 28, 23, 0, 0, 0, time.UTC)
-- p1 = time.Date(2026, time.March, 8, 23, 0, 0, 0, time.UTC)
-- p2 = "Chrome"
-- p3 = "plan"
-- p4 = []string{"pro", "team"}
-- p5 = "email"
-- p6 = "@example.com"
-- p7 = 0x65
-- team = 42
-- tz = "Europe/Berlin"
