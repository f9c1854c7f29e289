package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/insightd/insightd/benchmarks/loaded"
)

// benchCases are the cases, each ending on the last complete day
// (the project's timezone is UTC, weeks start on Sunday).
func benchCases(last time.Time) []benchCase {
	day := func(t time.Time) string { return t.Format(time.DateOnly) }
	end := day(last.AddDate(0, 0, 1)) // the first instant after the window
	pv := map[string]any{"id": "$pageview", "type": "events"}
	retention := func(n int, extra map[string]any) map[string]any {
		b := map[string]any{"target_entity": pv, "returning_entity": pv, "total_intervals": n, "date_to": day(last)}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	weekStart := last.AddDate(0, 0, -int(last.Weekday())).AddDate(0, 0, -7*11) // 12 weeks, the last holding last
	monthAgo := last.AddDate(0, 0, -29)
	return []benchCase{
		{name: "daily recurring retention, 11 intervals", kind: "retention", route: "retention", body: retention(11, nil),
			hand: handRetention(day(last.AddDate(0, 0, -10)), end, 11), floor: floor(day(last.AddDate(0, 0, -10)), end),
			cells: retentionCells(11)},
		{name: "daily recurring retention, 30 intervals", kind: "retention", route: "retention", body: retention(30, nil),
			hand: handRetention(day(last.AddDate(0, 0, -29)), end, 30), floor: floor(day(last.AddDate(0, 0, -29)), end),
			cells: retentionCells(30)},
		{name: "weekly first-time retention, 12 weeks", kind: "retention", route: "retention",
			body: retention(12, map[string]any{"period": "Week", "retention_type": "retention_first_time"}),
			hand: handFirstTime(day(weekStart), end, 12), floor: floor("", end), cells: retentionCells(12)},
		{name: "daily retention by $browser, 11 intervals", kind: "retention", route: "retention",
			body: retention(11, map[string]any{"breakdown": "$browser"}),
			hand: handRetentionBrowser(day(last.AddDate(0, 0, -10)), end, 11), floor: floor(day(last.AddDate(0, 0, -10)), end),
			cells: retentionCells(11)},
		{name: "lifecycle, 30 days", kind: "lifecycle", route: "trend",
			body: map[string]any{"insight": "LIFECYCLE", "events": []any{pv}, "date_from": day(monthAgo), "date_to": day(last)},
			hand: handLifecycle(day(monthAgo.AddDate(0, 0, -1)), end, 30), floor: floor(day(monthAgo.AddDate(0, 0, -1)), end),
			cells: lifecycleCells},
		{name: "stickiness, 30 days", kind: "stickiness", route: "trend",
			body: map[string]any{"insight": "STICKINESS", "events": []any{pv}, "date_from": day(monthAgo), "date_to": day(last)},
			hand: handStickiness(day(monthAgo), end), floor: floor(day(monthAgo), end), cells: stickinessCells},
	}
}

// The hand-written queries: the same numbers as directly as ClickHouse
// allows, for a UTC project without merged persons (the loaded one).
const pageviews = `FROM events WHERE team_id = {team:Int64} AND event = '$pageview'`

// floor is the least the case must do: read the events it reads (the
// pageviews from first, or from the start when first is empty, to end)
// and group them by person.
func floor(first, end string) string {
	since := ""
	if first != "" {
		since = fmt.Sprintf(" AND timestamp >= '%s'", first)
	}
	return fmt.Sprintf(`SELECT person_id, count() %s%s AND timestamp < '%s' GROUP BY person_id`, pageviews, since, end)
}

func handRetention(first, end string, n int) string {
	return fmt.Sprintf(`SELECT k, j, sum(c)
FROM (
    SELECT k, c, arrayJoin(arrayFilter(j -> j = 0 OR bitTest(r, j), range(%[3]d - k))) AS j
    FROM (
        SELECT k, bitShiftRight(b, k) AS r, count() AS c
        FROM (
            SELECT person_id, groupBitOr(bitShiftLeft(toUInt64(1), toRelativeDayNum(timestamp) - toRelativeDayNum(toDate('%[1]s')))) AS b
            %[4]s AND timestamp >= '%[1]s' AND timestamp < '%[2]s'
            GROUP BY person_id
        )
        ARRAY JOIN arrayFilter(k -> bitTest(b, k), range(%[3]d)) AS k
        GROUP BY k, r
    )
)
GROUP BY k, j`, first, end, n, pageviews)
}

func handFirstTime(first, end string, n int) string {
	return fmt.Sprintf(`SELECT k, j, sum(c)
FROM (
    SELECT k, c, arrayJoin(arrayFilter(j -> j = 0 OR bitTest(r, j), range(%[3]d - k))) AS j
    FROM (
        SELECT k, bitShiftRight(b, k) AS r, count() AS c
        FROM (
            SELECT intDiv(toRelativeDayNum(min(timestamp)) - toRelativeDayNum(toDate('%[1]s')), 7) AS k,
                groupBitOrIf(bitShiftLeft(toUInt64(1), intDiv(toRelativeDayNum(timestamp) - toRelativeDayNum(toDate('%[1]s')), 7)), timestamp >= '%[1]s') AS b
            %[4]s AND timestamp < '%[2]s'
            GROUP BY person_id
            HAVING min(timestamp) >= '%[1]s'
        )
        GROUP BY k, r
    )
)
GROUP BY k, j`, first, end, n, pageviews)
}

func handRetentionBrowser(first, end string, n int) string {
	return fmt.Sprintf(`SELECT if(empty(bd), '$$_posthog_breakdown_null_$$', bd), k, j, sum(c)
FROM (
    SELECT bd, k, c, arrayJoin(arrayFilter(j -> j = 0 OR bitTest(r, j), range(%[3]d - k))) AS j
    FROM (
        SELECT cohort.2 AS bd, cohort.1 AS k, bitShiftRight(b, k) AS r, count() AS c
        FROM (
            SELECT person_id, groupBitOr(bitShiftLeft(toUInt64(1), d)) AS b, groupArray((d, v)) AS cohorts
            FROM (
                SELECT person_id, toRelativeDayNum(timestamp) - toRelativeDayNum(toDate('%[1]s')) AS d,
                    argMin(mat_browser, bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(timestamp)), 128), toUInt256(toUInt128(uuid)))) AS v
                %[4]s AND timestamp >= '%[1]s' AND timestamp < '%[2]s'
                GROUP BY person_id, d
            )
            GROUP BY person_id
        )
        ARRAY JOIN cohorts AS cohort
        GROUP BY bd, k, r
    )
)
GROUP BY bd, k, j`, first, end, n, pageviews)
}

func handLifecycle(before, end string, n int) string {
	return fmt.Sprintf(`SELECT b, st, sum(c)
FROM (
    SELECT c, arrayJoin(arrayFilter(b -> bitTest(act, b) OR bitTest(act, b - 1), range(1, %[3]d + 1))) AS b,
        multiIf(NOT bitTest(act, b), 'dormant', b = cp, 'new', bitTest(act, b - 1), 'returning', 'resurrecting') AS st
    FROM (
        SELECT act, if(p.created_at >= '%[1]s', toRelativeDayNum(p.created_at) - toRelativeDayNum(toDate('%[1]s')), -1) AS cp, count() AS c
        FROM (
            SELECT person_id, groupBitOr(bitShiftLeft(toUInt64(1), toRelativeDayNum(timestamp) - toRelativeDayNum(toDate('%[1]s')))) AS act
            %[4]s AND timestamp >= '%[1]s' AND timestamp < '%[2]s'
            GROUP BY person_id
        ) AS a
        LEFT JOIN (SELECT id, created_at FROM persons FINAL WHERE team_id = {team:Int64}) AS p ON a.person_id = p.id
        GROUP BY act, cp
    )
)
GROUP BY b, st`, before, end, n, pageviews)
}

func handStickiness(first, end string) string {
	return fmt.Sprintf(`SELECT n, count()
FROM (
    SELECT bitCount(groupBitOr(bitShiftLeft(toUInt64(1), toRelativeDayNum(timestamp) - toRelativeDayNum(toDate('%[1]s'))))) AS n
    %[3]s AND timestamp >= '%[1]s' AND timestamp < '%[2]s'
    GROUP BY person_id
)
GROUP BY n`, first, end, pageviews)
}

// retentionCells reads a retention result as cells "[value/]k/j".
func retentionCells(n int) func(json.RawMessage) map[string]float64 {
	return func(raw json.RawMessage) map[string]float64 {
		var rows []struct {
			Values         []struct{ Count float64 } `json:"values"`
			BreakdownValue *string                   `json:"breakdown_value"`
		}
		loaded.Check(json.Unmarshal(raw, &rows))
		out := map[string]float64{}
		for i, r := range rows {
			prefix := ""
			if r.BreakdownValue != nil {
				prefix = *r.BreakdownValue + "/"
			}
			for j, v := range r.Values {
				out[fmt.Sprintf("%s%d/%d", prefix, i%n, j)] += v.Count
			}
		}
		return out
	}
}

// lifecycleCells reads the status series as cells "bucket/status", the
// dormant as the positive number of actors.
func lifecycleCells(raw json.RawMessage) map[string]float64 {
	var series []struct {
		Status string    `json:"status"`
		Data   []float64 `json:"data"`
	}
	loaded.Check(json.Unmarshal(raw, &series))
	out := map[string]float64{}
	for _, s := range series {
		for b, v := range s.Data {
			if v < 0 {
				v = -v
			}
			out[fmt.Sprintf("%d/%s", b+1, strings.TrimSpace(s.Status))] = v
		}
	}
	return out
}

// stickinessCells reads data[k-1] as cell "k".
func stickinessCells(raw json.RawMessage) map[string]float64 {
	var series []struct {
		Data []float64 `json:"data"`
	}
	loaded.Check(json.Unmarshal(raw, &series))
	out := map[string]float64{}
	for k, v := range series[0].Data {
		out[fmt.Sprint(k+1)] = v
	}
	return out
}
