-- Daily recurring retention of $pageview, 11 days (2026-11-11 to 2026-11-21,
-- UTC), written with ClickHouse's retention() aggregate: one retention()
-- per cohort day k, as retentionForEach over arrays indexed by k. For
-- cohort k, r[k][1] says the person did $pageview on day k (is in the
-- cohort) and r[k][1 + j] that they did on day k and on day k + j. The
-- same cells as generated.sql: (breakdown '', cohort, interval, actors).
SELECT '' AS breakdown, cohort, interval, sum(c) AS actors
FROM (
    SELECT cohort, c, arrayJoin(arrayFilter(j -> rk[j + 1] = 1, range(toUInt64(11 - cohort)))) AS interval
    FROM (
        SELECT ki - 1 AS cohort, rk, count() AS c
        FROM (
            SELECT retentionForEach(
                arrayMap(k -> p = k, range(11)),
                arrayMap(k -> p = k + 1, range(11)),
                arrayMap(k -> p = k + 2, range(11)),
                arrayMap(k -> p = k + 3, range(11)),
                arrayMap(k -> p = k + 4, range(11)),
                arrayMap(k -> p = k + 5, range(11)),
                arrayMap(k -> p = k + 6, range(11)),
                arrayMap(k -> p = k + 7, range(11)),
                arrayMap(k -> p = k + 8, range(11)),
                arrayMap(k -> p = k + 9, range(11)),
                arrayMap(k -> p = k + 10, range(11))) AS r
            FROM (
                SELECT person_id, toRelativeDayNum(timestamp) - toRelativeDayNum(toDate('2026-11-11')) AS p
                FROM events
                WHERE team_id = {team:Int64} AND event = '$pageview' AND timestamp >= '2026-11-11' AND timestamp < '2026-11-22'
            )
            GROUP BY person_id
        )
        ARRAY JOIN r AS rk, arrayEnumerate(r) AS ki
        WHERE rk[1] = 1
        GROUP BY cohort, rk
    )
)
GROUP BY cohort, interval
