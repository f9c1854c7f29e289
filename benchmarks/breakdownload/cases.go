package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/insightd/insightd/benchmarks/loaded"
	"github.com/insightd/insightd/querybuilder"
)

// benchCase is one 30-day trend of $pageview broken down one way; target
// is the ratio to the plain breakdown the issue asks for (0: none).
type benchCase struct {
	name      string
	breakdown map[string]any
	target    float64
}

// plainName names the reference case: the same trend by an event property.
const plainName = "plain: $browser (event property)"

// benchCases are the cases, the plain one first. The expression
// reads the same property as the plain breakdown (same values, same
// number of series), so the ratio is the cost of going through the
// expression compiler; the two-property breakdown is the plain one with
// $os beside it.
func benchCases() []benchCase {
	return []benchCase{
		{name: plainName, breakdown: map[string]any{"breakdown": "$browser", "breakdown_type": "event"}},
		{name: "session duration, 10 bins", target: 2,
			breakdown: map[string]any{"breakdown": "$session_duration", "breakdown_type": "session", "breakdown_histogram_bin_count": 10}},
		{name: "session entry URL", target: 2,
			breakdown: map[string]any{"breakdown": "$entry_current_url", "breakdown_type": "session"}},
		{name: "group property: industry of $group_0", target: 1.3,
			breakdown: map[string]any{"breakdown": "industry", "breakdown_type": "group", "breakdown_group_type_index": 0}},
		{name: "two properties: $browser, $os", // the issue sets no target for it
			breakdown: map[string]any{"breakdowns": []any{
				map[string]any{"property": "$browser", "type": "event"}, map[string]any{"property": "$os", "type": "event"}}}},
		{name: "expression: lower(properties.$browser)", target: 1.3,
			breakdown: map[string]any{"breakdown": "lower(properties.$browser)", "breakdown_type": "hogql"}},
	}
}

// body is the trend request of c over [from, to] (daily buckets).
func (c benchCase) body(from, to string) []byte {
	b := map[string]any{"insight": "TRENDS", "events": []any{map[string]any{"id": "$pageview", "type": "events"}},
		"date_from": from, "date_to": to, "interval": "day"}
	for k, v := range c.breakdown {
		b[k] = v
	}
	out, err := json.Marshal(b)
	loaded.Check(err)
	return out
}

// seriesOf reads a trend answer: its number of series and the sum of
// their counts (every event lands in exactly one series, the rest folded
// into the "other" one, so the sum is the number of $pageview events
// whatever the breakdown).
func seriesOf(raw json.RawMessage) (int, float64) {
	var series []struct {
		Count float64 `json:"count"`
	}
	loaded.Check(json.Unmarshal(raw, &series))
	var total float64
	for _, s := range series {
		total += s.Count
	}
	return len(series), total
}

// industries are the values of the group property the set-up writes.
var industries = []string{"SaaS", "Fintech", "Healthcare", "E-commerce", "Education", "Media", "Manufacturing", "Logistics"}

// ensureGroups gives the group case something to read. insightd load puts
// an organization key on every event ($group_0, mat_group_0: one of about
// persons/20 keys) but writes no groups, so the first run writes one
// version-1 row per distinct key into the groups table, straight through
// the engine, with an industry chosen by a hash of the key, created at
// the key's first event; it writes no event. A later run finds rows of
// group type 0 and writes nothing. The group type is registered in the
// (fresh) metadata database as index 0, "organization", each run.
func ensureGroups(ctx context.Context, env *loaded.Env) {
	idx, err := env.Store.EnsureGroupType(ctx, env.Project.ID, "organization")
	loaded.Check(err)
	if idx != 0 {
		loaded.Check(fmt.Errorf("group type organization got index %d, not 0", idx))
	}
	schema := env.Engine.Schema()
	params := map[string]any{"team": env.Project.ID, "industries": industries}
	count := func(sql string) uint64 {
		rows, err := env.Engine.Query(ctx, querybuilder.Statement{SQL: sql, Params: params})
		loaded.Check(err)
		n, _ := rows.Data[0][0].(uint64)
		return n
	}
	keys := count(`SELECT uniqExact(mat_group_0) FROM ` + schema.Events + ` WHERE team_id = {team:Int64} AND mat_group_0 != ''`)
	if keys == 0 {
		loaded.Check(fmt.Errorf("the loaded events carry no $group_0: the group case has nothing to break down (load with a newer insightd load)"))
	}
	groupsSQL := `SELECT count() FROM ` + schema.Groups + ` WHERE team_id = {team:Int64} AND group_type_index = 0`
	if have := count(groupsSQL); have > 0 {
		fmt.Printf("groups: %d groups of type 0 already in the groups table (%d distinct $group_0 keys on events), none written\n", have, keys)
		return
	}
	loaded.Check(env.Engine.Exec(ctx, querybuilder.Statement{Params: params, SQL: `INSERT INTO ` + schema.Groups + `
    (team_id, group_type_index, group_key, group_properties, property_times, created_at, version)
SELECT {team:Int64}, 0, k, concat('{"industry":"', ind, '"}'),
    concat('{"industry":{"s":{"t":', toString(toUnixTimestamp64Micro(first)), ',"v":"', ind, '"}}}'), first, 1
FROM (
    SELECT k, first, {industries:Array(String)}[1 + cityHash64(k) % length({industries:Array(String)})] AS ind
    FROM (
        SELECT mat_group_0 AS k, min(timestamp) AS first
        FROM ` + schema.Events + ` WHERE team_id = {team:Int64} AND mat_group_0 != ''
        GROUP BY k
    )
)`}))
	fmt.Printf("groups: set-up wrote %d groups of type 0 (one per distinct $group_0 key on events) with an industry property among %d values\n",
		count(groupsSQL), len(industries))
}
