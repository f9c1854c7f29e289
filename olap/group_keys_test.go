package olap

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/migrations"
	"github.com/insightd/insightd/querybuilder/chsql"
)

// The group lookup (querybuilder/groups.go) is exact only if group_keys
// holds every group key events and groups carry: each insert into events
// or groups adds its keys (materialized views), and the migration
// back-fills the keys stored before the views existed.
func TestGroupKeysHoldEveryKeyOfEventsAndGroups(t *testing.T) {
	ctx := context.Background()
	team := time.Now().UnixNano()
	ts := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	insertPropertyEvents(t, team, ts, []string{
		`{"$group_0": "acme", "$group_2": "eu"}`,
		`{"$group_0": "acme"}`,
		`{"$group_0": "beta", "$group_4": "x'; DROP TABLE events; --"}`,
		`{"$group_1": ""}`, // empty: no group
		`{"$group_0": 7}`,  // a number: what mat_group_0 reads of it is the key
		`{"$browser": "Firefox"}`,
		`{"$group_3": "Ünïcode 🚀"}`,
	})
	// Two groups: one no event names (yet), one that events name too.
	for _, key := range []string{"gamma", "acme"} {
		if err := engine.Insert(ctx, Table{"groups", groupsColumns},
			[][]any{{team, uint8(0), key, `{}`, `{}`, ts, uint64(1)}}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(sql string) [][]any {
		t.Helper()
		rows, err := engine.Query(ctx, chsql.Statement{SQL: sql, Params: map[string]any{"team": team}})
		if err != nil {
			t.Fatal(err)
		}
		return rows.Data
	}
	// What analyses read as each event's key of each type, and the
	// groups' keys.
	seen := `SELECT DISTINCT t, key FROM (
    SELECT toUInt8(k.1) AS t, k.2 AS key FROM events
    ARRAY JOIN [(0, mat_group_0), (1, mat_group_1), (2, mat_group_2), (3, mat_group_3), (4, mat_group_4)] AS k
    WHERE team_id = {team:Int64} AND key != ''
    UNION ALL
    SELECT group_type_index, group_key FROM groups WHERE team_id = {team:Int64}
) ORDER BY t, key`
	kept := `SELECT group_type_index, group_key FROM group_keys FINAL WHERE team_id = {team:Int64} ORDER BY group_type_index, group_key`
	want := read(seen)
	if len(want) != 7 {
		t.Fatalf("the events and groups carry %d keys, want 7: %v", len(want), want)
	}
	t.Run("an insert into events or groups adds its keys at once", func(t *testing.T) {
		if got := read(kept); !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v\nwant %v", got, want)
		}
	})
	t.Run("the migration back-fills the keys stored before it", func(t *testing.T) {
		if err := engine.Exec(ctx, chsql.Statement{SQL: `DELETE FROM group_keys WHERE team_id = {team:Int64}`,
			Params: map[string]any{"team": team}}); err != nil {
			t.Fatal(err)
		}
		if got := read(kept); len(got) != 0 {
			t.Fatalf("keys left after the delete: %v", got)
		}
		for range 2 { // a retried migration changes nothing
			rerunMigration(ctx, t, "group_keys")
			if got := read(kept); !reflect.DeepEqual(got, want) {
				t.Fatalf("got %v\nwant %v", got, want)
			}
		}
	})
}

// Breakdowns by a group property read each event's key hash from
// mat_group_N_hash (migration 0011) where the group lookup hashes the
// groups' keys with cityHash64: the two must agree for every key an event
// can carry, inserted now or before the migration (its statements run
// again over stored events, as on a data set that predates it).
func TestStoredGroupKeyHashesAreTheKeysCityHash64(t *testing.T) {
	ctx := context.Background()
	team := time.Now().UnixNano()
	ts := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	insertPropertyEvents(t, team, ts, []string{
		`{"$group_0": "acme", "$group_2": "eu"}`,
		`{"$group_0": "x'; DROP TABLE events; --", "$group_4": "\u0000\n"}`,
		`{"$group_1": ""}`,
		`{"$group_0": 7, "$group_1": {"a": [1]}}`,
		`{"$group_3": "Ünïcode 🚀"}`,
		`{}`,
	})
	check := func(t *testing.T) {
		t.Helper()
		rows, err := engine.Query(ctx, chsql.Statement{SQL: `SELECT count(),
    countIf(mat_group_0_hash != cityHash64(mat_group_0) OR mat_group_1_hash != cityHash64(mat_group_1)
        OR mat_group_2_hash != cityHash64(mat_group_2) OR mat_group_3_hash != cityHash64(mat_group_3)
        OR mat_group_4_hash != cityHash64(mat_group_4)),
    countIf(mat_group_0_hash != cityHash64(''))
FROM events WHERE team_id = {team:Int64}`, Params: map[string]any{"team": team}})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(rows.Data[0]...); got != "6 0 3" {
			t.Fatalf("events, events whose stored hashes differ from their keys', events with a $group_0: %s, want 6 0 3", got)
		}
	}
	t.Run("inserted events carry their keys' hashes", check)
	t.Run("the migration run again over stored events changes none", func(t *testing.T) {
		rerunMigration(ctx, t, "group_key_hashes")
		check(t)
	})
}

// rerunMigration runs the ClickHouse migration named name once more, as
// on a data set written before it (or a retried migration).
func rerunMigration(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	ms, err := migrations.ClickHouse()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Name != name {
			continue
		}
		for _, s := range m.Statements() {
			if err := engine.Exec(Maintenance(ctx), chsql.Statement{SQL: s}); err != nil {
				t.Fatalf("%v\n%s", err, s)
			}
		}
		return
	}
	t.Fatalf("no migration named %s", name)
}

// insertPropertyEvents stores one event "e" of team at ts per properties
// document, each of its own distinct id and person.
func insertPropertyEvents(t *testing.T, team int64, ts time.Time, props []string) {
	t.Helper()
	var events []Event
	for i, p := range props {
		events = append(events, Event{UUID: uuid.New(), TeamID: team, Event: "e", DistinctID: fmt.Sprint("d", i),
			PersonID: uuid.New(), Timestamp: ts, Properties: p, CreatedAt: ts})
	}
	if err := engine.InsertEvents(context.Background(), events); err != nil {
		t.Fatal(err)
	}
}
