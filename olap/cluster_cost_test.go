package olap

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/insightd/insightd/olap/chdb"
	"github.com/insightd/insightd/querybuilder/chsql"
)

// TestTwoShardFunnelMergesToTheSingleNodeAnswer simulates a 3-step
// funnel on the cluster layout (olap/cluster.md) inside the one embedded
// engine a process may have: the events split into two shard tables by
// the sharding key, cityHash64(person_id), with 2% of persons merged into
// another person (half of them across shards). Each "shard" computes
// what a shard sends for the Distributed read, its per-person partial
// funnel states (windowFunnelState, in the Native format the servers
// exchange), and the "initiator" merges them. The merged answer must be
// the single-node one, exactly; the figures it logs (rows and bytes each
// shard reads, bytes it sends) are the numbers olap/cluster.md quotes.
func TestTwoShardFunnelMergesToTheSingleNodeAnswer(t *testing.T) {
	const persons, events = 50000, 1000000
	ctx := context.Background()
	exec := func(sql string) {
		t.Helper()
		if err := engine.Exec(ctx, chsql.Statement{SQL: sql}); err != nil {
			t.Fatalf("%v\n%s", err, sql)
		}
	}
	// native runs sql and returns its Native output and what it read.
	native := func(sql string) *chdb.Result {
		t.Helper()
		var res *chdb.Result
		err := engine.run(ctx, func(c *chdb.Conn, tag string) error {
			var err error
			res, err = c.Query(tag+sql, "Native", nil)
			return err
		})
		if err != nil {
			t.Fatalf("%v\n%s", err, sql)
		}
		return res
	}
	cols := `(uuid UUID, team_id Int64, event LowCardinality(String), distinct_id String, person_id UUID, timestamp DateTime64(6, 'UTC'))
ENGINE = MergeTree ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid))`
	for _, name := range []string{"sim_all", "sim_shard_0", "sim_shard_1"} {
		exec("DROP TABLE IF EXISTS " + name)
		exec("CREATE TABLE " + name + " " + cols)
	}
	exec("DROP TABLE IF EXISTS sim_overrides")
	exec("CREATE TABLE sim_overrides (old_person_id UUID, override_person_id UUID) ENGINE = MergeTree ORDER BY old_person_id")
	exec("DROP TABLE IF EXISTS sim_states")
	exec("CREATE TABLE sim_states (person UUID, st AggregateFunction(windowFunnel(86400000000), UInt64, UInt8, UInt8, UInt8)) ENGINE = Memory")
	person := fmt.Sprintf("reinterpretAsUUID(MD5(toString(number %% %d)))", persons)
	exec(fmt.Sprintf(`INSERT INTO sim_all SELECT generateUUIDv4(number), 1,
    ['a', 'b', 'c', 'x', 'y'][1 + cityHash64(number, 1) %% 5], toString(number %% %d), %s,
    toDateTime64('2026-03-01 00:00:00', 6, 'UTC') + toIntervalMicrosecond(cityHash64(number, 2) %% (7 * 86400000000))
FROM numbers(%d)`, persons, person, events))
	for k := range 2 {
		exec(fmt.Sprintf("INSERT INTO sim_shard_%d SELECT * FROM sim_all WHERE cityHash64(person_id) %% 2 = %d", k, k))
	}
	// Every 50th person merged into the next one.
	exec(fmt.Sprintf(`INSERT INTO sim_overrides SELECT reinterpretAsUUID(MD5(toString(number))), reinterpretAsUUID(MD5(toString(number + 1)))
FROM numbers(0, %d, 50)`, persons))

	perPerson := func(table, fn string) string {
		return `SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS person,
    ` + fn + `(86400000000)(toUInt64(toUnixTimestamp64Micro(e.timestamp)), e.event = 'a', e.event = 'b', e.event = 'c') AS st
FROM ` + table + ` AS e
LEFT JOIN (SELECT old_person_id, override_person_id FROM sim_overrides) AS po ON e.person_id = po.old_person_id
WHERE e.team_id = 1 AND e.timestamp >= '2026-03-01 00:00:00' AND e.timestamp < '2026-03-08 00:00:00' AND e.event IN ('a', 'b', 'c')
GROUP BY person`
	}
	levels := func(inner string) string {
		return "SELECT st AS level, count() AS persons FROM (" + inner + ") GROUP BY level ORDER BY level"
	}
	rowsOf := func(sql string) string {
		t.Helper()
		r, err := engine.Query(ctx, chsql.Statement{SQL: sql})
		if err != nil {
			t.Fatalf("%v\n%s", err, sql)
		}
		return fmt.Sprint(r.Data)
	}

	single := native(levels(perPerson("sim_all", "windowFunnel")))
	want := rowsOf(levels(perPerson("sim_all", "windowFunnel")))
	var sent [2]int
	var read [2]*chdb.Result
	for k := range 2 {
		shard := fmt.Sprintf("sim_shard_%d", k)
		read[k] = native(perPerson(shard, "windowFunnelState"))
		sent[k] = len(read[k].Data)
		exec("INSERT INTO sim_states " + perPerson(shard, "windowFunnelState"))
	}
	got := rowsOf(levels("SELECT person, windowFunnelMerge(86400000000)(st) AS st FROM sim_states GROUP BY person"))
	if got != want {
		t.Fatalf("two shards merged answer %s, one node %s", got, want)
	}
	// Without the initiator's merge (each shard's levels counted alone)
	// the merged persons that span shards would count twice or at the
	// wrong level: the reason states, not levels, cross the network.
	var alone []string
	for k := range 2 {
		alone = append(alone, rowsOf(levels(perPerson(fmt.Sprintf("sim_shard_%d", k), "windowFunnel"))))
	}
	crossing := rowsOf(`SELECT count() FROM sim_overrides AS o
WHERE cityHash64(o.old_person_id) % 2 != cityHash64(o.override_person_id) % 2`)
	hot := native("SELECT DISTINCT person_id FROM sim_all WHERE team_id = 1 AND event = 'b'")
	levelsOut := native(levels("SELECT person, windowFunnelMerge(86400000000)(st) AS st FROM sim_states GROUP BY person"))
	var b strings.Builder
	fmt.Fprintf(&b, "%d events, %d persons, merged persons across shards %s\n", events, persons, crossing)
	fmt.Fprintf(&b, "one node: read %d rows, %d bytes\n", single.StorageRowsRead, single.StorageBytesRead)
	for k := range 2 {
		fmt.Fprintf(&b, "shard %d: read %d rows, %d bytes; sends %d bytes of per-person states\n", k, read[k].StorageRowsRead, read[k].StorageBytesRead, sent[k])
	}
	fmt.Fprintf(&b, "GLOBAL IN set of step-2 persons: %d bytes to each shard; final levels: %d bytes\n", len(hot.Data), len(levelsOut.Data))
	fmt.Fprintf(&b, "exact: %s; shards alone: %v", want, alone)
	t.Log(b.String())
	// Each shard reads about half: whole granules at the edges of each
	// (day, event) range make it a little more.
	for k := range 2 {
		if r := float64(read[k].StorageRowsRead) / float64(single.StorageRowsRead); r < 0.4 || r > 0.6 {
			t.Fatalf("shard %d read %d rows, %.2f of one node's %d", k, read[k].StorageRowsRead, r, single.StorageRowsRead)
		}
	}
	for _, name := range []string{"sim_all", "sim_shard_0", "sim_shard_1", "sim_overrides", "sim_states"} {
		exec("DROP TABLE IF EXISTS " + name)
	}
}
