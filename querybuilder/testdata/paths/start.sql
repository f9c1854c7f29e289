SELECT source, target, count() AS value, avg(dt) AS average_conversion_time
FROM (
    SELECT concat(toString(i), '_', p[i]) AS source, concat(toString(i + 1), '_', p[i + 1]) AS target,
        (pt[i + 1] - pt[i]) / 1000 AS dt
    FROM (
        SELECT indexOf(items, {p1:String}) AS si,
            arraySlice(items, si, {p0:UInt64}) AS p,
            arraySlice(times, si, {p0:UInt64}) AS pt
        FROM (
            SELECT arrayFilter((x, i) -> i = length(path) OR x.3 != path[i + 1].3, path, arrayEnumerate(path)) AS c,
                arrayMap(x -> x.3, c) AS items, arrayMap(x -> x.1, c) AS times
            FROM (
                SELECT arrayJoin(arraySplit((x, d) -> d >= 1800000000, evs, arrayDifference(arrayMap(x -> x.1, evs)))) AS path
                FROM (
                    SELECT a, arraySort(groupArray((t, u, item))) AS evs
                    FROM (
                        SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                            toUnixTimestamp64Micro(e.timestamp) AS t,
                            toUInt128(e.uuid) AS u,
                            multiIf(e.event = '$pageview', if(length(e.mat_current_url) > 1 AND endsWith(e.mat_current_url, '/'), substring(e.mat_current_url, 1, length(e.mat_current_url) - 1), e.mat_current_url),
                                    e.event = '$screen', e.mat_screen_name, e.event) AS item
                        FROM events AS e
                        LEFT JOIN (
                            SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                            FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                        ) AS po ON e.person_id = po.old_person_id
                        WHERE e.team_id = {team:Int64}
                          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                          AND (e.event = '$pageview' OR e.event = '$screen')
                    )
                    GROUP BY a
                )
            )
        )
        WHERE si > 0
    )
    ARRAY JOIN arrayEnumerate(arrayPopBack(p)) AS i
)
GROUP BY source, target
ORDER BY value DESC, source, target
LIMIT {p2:UInt64}
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = 0xa
-- p1 = "https://shop.test/home"
-- p2 = 0x32
-- team = 42
-- tz = "Europe/Berlin"
