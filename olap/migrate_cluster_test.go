package olap

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/insightd/insightd/migrations"
	"github.com/insightd/insightd/querybuilder/chsql"
)

// parses runs the engine's parser over stmt (formatQuery), the statement
// a bound parameter: no ON CLUSTER statement can run on the embedded
// engine (no Keeper, no cluster), but every one must parse on the real
// ClickHouse parser here rather than on a cluster.
func parses(t *testing.T, stmt string) error {
	t.Helper()
	_, err := engine.Query(context.Background(), chsql.Statement{
		SQL: "SELECT formatQuery({q:String})", Params: map[string]any{"q": stmt}})
	return err
}

func TestEveryClusterStatementParsesOnTheEngine(t *testing.T) {
	ms, err := migrations.ClickHouseCluster("insightd_cluster")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range ms {
		for i, s := range m.Statements() {
			if err := parses(t, s); err != nil {
				t.Errorf("migration %04d_%s statement %d does not parse: %v\n%s", m.Version, m.Name, i+1, err, s)
			}
			n++
		}
	}
	ledger, err := migrations.ClusterStatements("CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32) ENGINE = ReplacingMergeTree ORDER BY version", "insightd_cluster")
	if err != nil {
		t.Fatal(err)
	}
	schema := chsql.ClusterSchema("insightd_cluster")
	others := append(ledger,
		"KILL QUERY ON CLUSTER insightd_cluster WHERE initial_query_id = {id:String} ASYNC",
		"SELECT count() FROM clusterAllReplicas('insightd_cluster', system.processes) WHERE initial_query_id = {id:String}",
		"ALTER TABLE "+schema.MutationTarget(schema.Events)+" DELETE WHERE team_id = {team:Int64}",
		"DELETE FROM "+schema.MutationTarget(schema.Events)+" WHERE team_id = {team:Int64}")
	for _, s := range others {
		if err := parses(t, s); err != nil {
			t.Errorf("does not parse: %v\n%s", err, s)
		}
	}
	if n < 20 {
		t.Fatalf("only %d cluster statements", n)
	}
	t.Run("a statement with a syntax error is caught", func(t *testing.T) {
		if err := parses(t, "CREATE TABLE IF NOT EXISTS x ON CLUSTER (a UInt8) ENGINE = MergeTree ORDER BY a"); err == nil {
			t.Fatal("the parser accepted ON CLUSTER without a name")
		}
	})
}

func TestClusterConfiguration(t *testing.T) {
	base := Config{ClickHouseURL: "clickhouse://h:9000/db", QueryTimeout: time.Second}
	t.Run("a cluster needs a server and a plain name", func(t *testing.T) {
		for name, c := range map[string]Config{
			"no server":     {QueryTimeout: time.Second, ChDBLib: "x", DataDir: "y", Connections: 1, Cluster: "c"},
			"quoted name":   {ClickHouseURL: base.ClickHouseURL, QueryTimeout: time.Second, Cluster: "c'x"},
			"spaced name":   {ClickHouseURL: base.ClickHouseURL, QueryTimeout: time.Second, Cluster: "my cluster"},
			"leading digit": {ClickHouseURL: base.ClickHouseURL, QueryTimeout: time.Second, Cluster: "1c"},
		} {
			if err := c.Validate(); err == nil || !strings.Contains(strings.ToLower(err.Error()), "cluster") {
				t.Errorf("%s: got %v", name, err)
			}
		}
		c := base
		c.Cluster = "insightd_cluster"
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the schema of a cluster names it, over the same tables", func(t *testing.T) {
		c := base
		c.Cluster = "insightd_cluster"
		got := c.schema()
		if got != chsql.ClusterSchema("insightd_cluster") {
			t.Fatalf("schema %+v", got)
		}
		if base.schema() != chsql.DefaultSchema() {
			t.Fatalf("one server's schema %+v", base.schema())
		}
		if got.MutationTarget(got.Events) != "events"+migrations.LocalSuffix+" ON CLUSTER insightd_cluster" ||
			got.MutationTarget(got.Persons) != "persons" || base.schema().MutationTarget("events") != "events" {
			t.Fatalf("mutation targets: %q %q", got.MutationTarget(got.Events), got.MutationTarget(got.Persons))
		}
	})
	t.Run("clusterSettings make inserts wait for the shards and subqueries global", func(t *testing.T) {
		s := map[string]any{}
		clusterSettings(s)
		if s["distributed_foreground_insert"] != 1 || s["distributed_product_mode"] != "global" || s["distributed_ddl_output_mode"] != "throw" {
			t.Fatalf("settings %v", s)
		}
	})
}
