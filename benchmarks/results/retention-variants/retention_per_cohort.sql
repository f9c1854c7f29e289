-- Daily recurring retention of $pageview, 11 days (2026-11-11 to 2026-11-21,
-- UTC), with one retention() per person and cohort day: each person's
-- distinct active days first, each day expanded into the cohorts it can
-- count in (k <= p), then retention(p = k, p = k + 1, ..., p = k + 10)
-- per (person, k), kept where the person is in cohort k. The same cells
-- as generated.sql: (breakdown '', cohort, interval, actors).
SELECT '' AS breakdown, cohort, interval, sum(c) AS actors
FROM (
    SELECT cohort, c, arrayJoin(arrayFilter(j -> r[j + 1] = 1, range(toUInt64(11 - cohort)))) AS interval
    FROM (
        SELECT k AS cohort, r, count() AS c
        FROM (
            SELECT person_id, k, retention(p = k, p = k + 1, p = k + 2, p = k + 3, p = k + 4, p = k + 5, p = k + 6, p = k + 7, p = k + 8, p = k + 9, p = k + 10) AS r
            FROM (
                SELECT person_id, toRelativeDayNum(timestamp) - toRelativeDayNum(toDate('2026-11-11')) AS p
                FROM events
                WHERE team_id = {team:Int64} AND event = '$pageview' AND timestamp >= '2026-11-11' AND timestamp < '2026-11-22'
                GROUP BY person_id, p
            )
            ARRAY JOIN range(toUInt64(p + 1)) AS k
            GROUP BY person_id, k
            HAVING r[1] = 1
        )
        GROUP BY cohort, r
    )
)
GROUP BY cohort, interval
