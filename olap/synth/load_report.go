package synth

import (
	"context"
	"fmt"
	"time"

	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder/chsql"
)

// Report describes a project's data and times the queries that did so, so
// whoever loads a benchmark data set sees at once that it is usable.
type Report struct {
	Project     int64        `json:"project"`
	Events      int64        `json:"events"`
	Persons     int64        `json:"persons_with_events"`
	DistinctIDs int64        `json:"distinct_ids"`
	First       time.Time    `json:"first_event"`
	Last        time.Time    `json:"last_event"`
	ByEvent     []EventCount `json:"by_event"`
	// ByEventSeconds is how long counting events by name took.
	ByEventSeconds float64 `json:"by_event_seconds"`
	Funnel         Funnel  `json:"funnel"`
	// Tables are the whole tables, every project's rows.
	Tables []TableSize `json:"tables"`
}

// EventCount is how many events of one name a project has.
type EventCount struct {
	Event string `json:"event"`
	Count int64  `json:"count"`
}

// Funnel is a 3-step windowFunnel over the project's whole range: the
// persons reaching each step within 14 days, and how long the query took.
type Funnel struct {
	Steps   []string `json:"steps"`
	Persons []int64  `json:"persons"`
	Seconds float64  `json:"seconds"`
}

// TableSize is a table's active parts, from system.parts.
type TableSize struct {
	Table             string `json:"table"`
	Rows              int64  `json:"rows"`
	Parts             int64  `json:"parts"`
	BytesOnDisk       int64  `json:"bytes_on_disk"`
	BytesUncompressed int64  `json:"bytes_uncompressed"`
}

const (
	reportTotalsSQL = `SELECT count(), uniqExact(person_id), min(timestamp), max(timestamp),
    (SELECT uniqExact(distinct_id) FROM person_distinct_id WHERE team_id = {team:Int64})
FROM events WHERE team_id = {team:Int64}`
	reportByEventSQL = `SELECT event, count() AS n FROM events WHERE team_id = {team:Int64} GROUP BY event ORDER BY n DESC, event`
	reportFunnelSQL  = `SELECT countIf(level >= 1), countIf(level >= 2), countIf(level >= 3)
FROM
(
    SELECT person_id,
        windowFunnel(1209600)(toDateTime(timestamp), event = '$pageview', event = 'signup', event = 'purchase') AS level
    FROM events
    WHERE team_id = {team:Int64} AND event IN ('$pageview', 'signup', 'purchase')
    GROUP BY person_id
)`
	reportTablesSQL = `SELECT table, sum(rows), count(), sum(bytes_on_disk), sum(data_uncompressed_bytes)
FROM system.parts
WHERE active AND database = currentDatabase() AND table IN ('events', 'persons', 'person_distinct_id')
GROUP BY table ORDER BY table`
)

// ProjectReport queries the project's events, persons and the tables' sizes.
func ProjectReport(ctx context.Context, e olap.Engine, project int64) (Report, error) {
	r := Report{Project: project, Funnel: Funnel{Steps: []string{"$pageview", "signup", "purchase"}}}
	p := map[string]any{"team": project}
	rows, err := e.Query(ctx, chsql.Statement{SQL: reportTotalsSQL, Params: p})
	if err != nil {
		return r, fmt.Errorf("report totals: %w", err)
	}
	if len(rows.Data) == 1 {
		d := rows.Data[0]
		r.Events, r.Persons = asInt(d[0]), asInt(d[1])
		r.First, _ = d[2].(time.Time)
		r.Last, _ = d[3].(time.Time)
		r.DistinctIDs = asInt(d[4])
	}

	began := time.Now()
	if rows, err = e.Query(ctx, chsql.Statement{SQL: reportByEventSQL, Params: p}); err != nil {
		return r, fmt.Errorf("report events by name: %w", err)
	}
	r.ByEventSeconds = time.Since(began).Seconds()
	for _, d := range rows.Data {
		name, _ := d[0].(string)
		r.ByEvent = append(r.ByEvent, EventCount{Event: name, Count: asInt(d[1])})
	}

	began = time.Now()
	if rows, err = e.Query(ctx, chsql.Statement{SQL: reportFunnelSQL, Params: p}); err != nil {
		return r, fmt.Errorf("report funnel: %w", err)
	}
	r.Funnel.Seconds = time.Since(began).Seconds()
	if len(rows.Data) == 1 {
		for _, v := range rows.Data[0] {
			r.Funnel.Persons = append(r.Funnel.Persons, asInt(v))
		}
	}

	if rows, err = e.Query(ctx, chsql.Statement{SQL: reportTablesSQL}); err != nil {
		return r, fmt.Errorf("report table sizes: %w", err)
	}
	for _, d := range rows.Data {
		name, _ := d[0].(string)
		r.Tables = append(r.Tables, TableSize{Table: name, Rows: asInt(d[1]), Parts: asInt(d[2]),
			BytesOnDisk: asInt(d[3]), BytesUncompressed: asInt(d[4])})
	}
	return r, nil
}

// asInt reads a count: UInt64 arrives as uint64, Int64 as int64.
func asInt(v any) int64 {
	switch x := v.(type) {
	case uint64:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

// optimizeSQL merges the generated tables' parts, one per partition.
var optimizeSQL = []string{
	"OPTIMIZE TABLE events FINAL",
	"OPTIMIZE TABLE persons FINAL",
	"OPTIMIZE TABLE person_distinct_id FINAL",
}

// Optimize merges every part of the events, persons and person_distinct_id
// tables (all projects) into one per partition and waits for it: a
// benchmark that runs on a freshly loaded table otherwise shares the
// machine with the background merges of its hundreds of parts, and FINAL
// reads get cheap. It rewrites the tables, so it is slow on a large data
// set (benchmarks/results/ingestion.md).
func Optimize(ctx context.Context, e olap.Engine) error {
	for _, sql := range optimizeSQL {
		if err := e.Exec(ctx, chsql.Statement{SQL: sql}); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}
