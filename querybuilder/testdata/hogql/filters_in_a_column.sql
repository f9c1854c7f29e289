SELECT countIf(hq_t_a.filters_match) AS hq_col_a, count() AS hq_col_b
FROM (
    SELECT e.uuid AS uuid, e.event AS event, e.timestamp AS timestamp, e.distinct_id AS distinct_id, e.properties AS properties, e.created_at AS created_at, e.mat_current_url AS mat_current_url, e.mat_pathname AS mat_pathname, e.mat_screen_name AS mat_screen_name, e.mat_session_id AS mat_session_id, e.mat_browser AS mat_browser, e.mat_os AS mat_os, e.mat_device_type AS mat_device_type, e.mat_group_0 AS mat_group_0, e.mat_group_1 AS mat_group_1, e.mat_group_2 AS mat_group_2, e.mat_group_3 AS mat_group_3, e.mat_group_4 AS mat_group_4, (positionCaseInsensitiveUTF8(e.mat_os, {p0:String}) > 0) AS filters_match
    FROM events AS e
    WHERE e.team_id = {team:Int64}
) AS hq_t_a
LIMIT {p1:UInt64}
-- p0 = "Mac"
-- p1 = 0x65
-- team = 42
-- tz = "Europe/Berlin"
