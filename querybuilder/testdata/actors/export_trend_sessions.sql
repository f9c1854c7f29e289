SELECT toString(a.actor) AS id,
    toString(a.actor) AS session_id,
    'session' AS type
FROM (
    SELECT DISTINCT e.mat_session_id AS actor
    FROM events AS e
    WHERE e.team_id = {team:Int64}
      AND e.event = {p0:String}
      AND e.mat_session_id != ''
      AND e.timestamp >= {p1:DateTime64(6, 'UTC')}
      AND e.timestamp <= {p2:DateTime64(6, 'UTC')}
) AS a
ORDER BY id
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- p1 = time.Date(2026, time.March, 7, 23, 0, 0, 0, time.UTC)
-- p2 = time.Date(2026, time.March, 8, 22, 59, 59, 999999000, time.UTC)
-- team = 42
-- tz = "Europe/Berlin"
