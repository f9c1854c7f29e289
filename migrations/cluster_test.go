package migrations

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// goldenCluster is the cluster name the golden DDL is rendered with.
const goldenCluster = "insightd_cluster"

func TestClusterMigrationsMatchTheirGoldenDDL(t *testing.T) {
	ms, err := ClickHouseCluster(goldenCluster)
	if err != nil {
		t.Fatal(err)
	}
	single, err := ClickHouse()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != len(single) {
		t.Fatalf("%d cluster migrations for %d single-node ones", len(ms), len(single))
	}
	for i, m := range ms {
		name := fmt.Sprintf("%04d_%s.sql", m.Version, m.Name)
		t.Run(name+" renders as its golden file", func(t *testing.T) {
			if m.Version != single[i].Version || m.Name != single[i].Name {
				t.Fatalf("cluster migration %s out of step with %04d_%s", name, single[i].Version, single[i].Name)
			}
			path := filepath.Join("testdata", "cluster", name)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(m.SQL), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if m.SQL != string(want) {
				t.Fatalf("cluster DDL differs from %s (run with -update and read the diff):\n%s", path, m.SQL)
			}
			again, err := single[i].ForCluster(goldenCluster)
			if err != nil || again.SQL != m.SQL {
				t.Fatalf("rendering twice gave different DDL: %v", err)
			}
		})
	}
}

// createdTables are the tables and views the single-node migrations
// create, in order.
func createdTables(t *testing.T) []string {
	t.Helper()
	ms, err := ClickHouse()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		for _, s := range m.Statements() {
			toks := lex(s)
			if toks.is(0, "CREATE", "TABLE", "IF", "NOT", "EXISTS") {
				out = append(out, toks.ident(5))
			}
		}
	}
	return out
}

func TestEverySingleNodeTableHasItsClusterCounterpart(t *testing.T) {
	tables := createdTables(t)
	if len(tables) < 8 {
		t.Fatalf("found only %d tables in the migrations: %v", len(tables), tables)
	}
	ms, err := ClickHouseCluster(goldenCluster)
	if err != nil {
		t.Fatal(err)
	}
	created := map[string]string{} // name -> engine of its CREATE on the cluster
	for _, m := range ms {
		for _, s := range m.Statements() {
			toks := lex(s)
			if !toks.is(0, "CREATE", "TABLE", "IF", "NOT", "EXISTS") {
				continue
			}
			if !toks.is(6, "ON", "CLUSTER", goldenCluster) {
				t.Errorf("%s is not created ON CLUSTER:\n%s", toks.ident(5), s)
			}
			e := toks.find(6, "ENGINE", "=")
			created[toks.ident(5)] = toks.ident(e + 2)
		}
	}
	for _, name := range tables {
		t.Run(name+" exists on every node in its cluster layout", func(t *testing.T) {
			place, ok := ClusterTables[name]
			if !ok {
				t.Fatalf("%s has no placement in ClusterTables", name)
			}
			if !place.Sharded {
				if e := created[name]; !strings.HasPrefix(e, "Replicated") {
					t.Fatalf("full copy %s has engine %q, want a Replicated one", name, e)
				}
				return
			}
			if e := created[name+LocalSuffix]; !strings.HasPrefix(e, "Replicated") {
				t.Fatalf("sharded %s's local table has engine %q, want a Replicated one", name, e)
			}
			if e := created[name]; e != "Distributed" {
				t.Fatalf("sharded %s is read through engine %q, want Distributed", name, e)
			}
		})
	}
}

func TestClusterStatementsOfEachForm(t *testing.T) {
	cases := []struct {
		name, stmt string
		want       []string
	}{
		{"a full copy keeps its engine's arguments after the replication path",
			"CREATE TABLE IF NOT EXISTS persons (id UUID, version UInt64) ENGINE = ReplacingMergeTree(version) ORDER BY id",
			[]string{"CREATE TABLE IF NOT EXISTS persons ON CLUSTER c (id UUID, version UInt64) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/insightd/persons', '{replica}', version) ORDER BY id"}},
		{"a sharded table is a local table per shard and a Distributed table by the sharding key",
			"-- note\nCREATE TABLE IF NOT EXISTS events (person_id UUID) ENGINE = ReplacingMergeTree ORDER BY person_id",
			[]string{"-- note\nCREATE TABLE IF NOT EXISTS events_local ON CLUSTER c (person_id UUID) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/insightd/events', '{replica}') ORDER BY person_id",
				"CREATE TABLE IF NOT EXISTS events ON CLUSTER c AS events_local\nENGINE = Distributed('c', currentDatabase(), 'events_local', cityHash64(person_id))"}},
		{"a column change reaches the local and the Distributed table",
			"ALTER TABLE events ADD COLUMN IF NOT EXISTS x String, MODIFY COLUMN y MATERIALIZED f(properties, 'a,b')",
			[]string{"ALTER TABLE events_local ON CLUSTER c ADD COLUMN IF NOT EXISTS x String, MODIFY COLUMN y MATERIALIZED f(properties, 'a,b')",
				"ALTER TABLE events ON CLUSTER c ADD COLUMN IF NOT EXISTS x String, MODIFY COLUMN y MATERIALIZED f(properties, 'a,b')"}},
		{"an index is the local tables' alone",
			"ALTER TABLE events ADD INDEX IF NOT EXISTS i created_at TYPE minmax GRANULARITY 1",
			[]string{"ALTER TABLE events_local ON CLUSTER c ADD INDEX IF NOT EXISTS i created_at TYPE minmax GRANULARITY 1"}},
		{"a materialized view reads each shard's local events into the local target",
			"CREATE MATERIALIZED VIEW IF NOT EXISTS sessions_mv TO sessions AS SELECT e.mat_session_id AS s FROM events AS e LEFT JOIN persons AS p ON 1 WHERE e.event IN (SELECT 'events' FROM events)",
			[]string{"CREATE MATERIALIZED VIEW IF NOT EXISTS sessions_mv ON CLUSTER c TO sessions_local AS SELECT e.mat_session_id AS s FROM events_local AS e LEFT JOIN persons AS p ON 1 WHERE e.event IN (SELECT 'events' FROM events_local)"}},
		{"a sharded table is truncated on every shard",
			"TRUNCATE TABLE IF EXISTS sessions",
			[]string{"TRUNCATE TABLE IF EXISTS sessions_local ON CLUSTER c"}},
		{"an insert goes through the cluster's names unchanged",
			"INSERT INTO event_uuids (team_id, uuid) SELECT team_id, uuid FROM events",
			[]string{"INSERT INTO event_uuids (team_id, uuid) SELECT team_id, uuid FROM events"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ClusterStatements(c.stmt, "c")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

func TestClusterCompilerRefusesWhatItCannotRetryOrPlace(t *testing.T) {
	cases := map[string]string{
		"a CREATE without IF NOT EXISTS":                         "CREATE TABLE persons (id UUID) ENGINE = MergeTree ORDER BY id",
		"a table without a placement":                            "CREATE TABLE IF NOT EXISTS mystery (id UUID) ENGINE = MergeTree ORDER BY id",
		"an engine with no replicated form":                      "CREATE TABLE IF NOT EXISTS persons (id UUID) ENGINE = Memory",
		"an ADD COLUMN without IF NOT EXISTS":                    "ALTER TABLE persons ADD COLUMN x String",
		"a DROP COLUMN without IF EXISTS":                        "ALTER TABLE persons DROP COLUMN x",
		"an ALTER mixing columns and indexes on a sharded table": "ALTER TABLE events ADD COLUMN IF NOT EXISTS x String, ADD INDEX IF NOT EXISTS i x TYPE minmax GRANULARITY 1",
		"an ALTER operation with no cluster form":                "ALTER TABLE events DELETE WHERE 1",
		"a materialized view without a TO table":                 "CREATE MATERIALIZED VIEW IF NOT EXISTS v ENGINE = MergeTree ORDER BY x AS SELECT 1 AS x FROM events",
		"a statement of an unknown kind":                         "DROP TABLE events",
		"an insert into a table without a placement":             "INSERT INTO mystery SELECT 1",
	}
	for name, stmt := range cases {
		t.Run(name+" is refused", func(t *testing.T) {
			if got, err := ClusterStatements(stmt, "c"); err == nil {
				t.Fatalf("compiled to %q", got)
			}
		})
	}
	t.Run("a cluster name that is not an identifier is refused", func(t *testing.T) {
		for _, bad := range []string{"", "a b", "c'; DROP", "1c", strings.Repeat("x", 65)} {
			if _, err := ClickHouseCluster(bad); err == nil {
				t.Errorf("cluster name %q accepted", bad)
			}
		}
	})
}
