package chsql

// ClusterSchema is the layout the migrations compile for the ClickHouse
// cluster named cluster (migrations.ClickHouseCluster, olap/cluster.md):
// the same names as one node's, events and sessions being Distributed
// tables over per-shard local tables and every other table a full
// replicated copy on each node. Statements read the same tables; what
// differs is which subqueries are GLOBAL (the compiler's choice,
// querybuilder/schema.go) and where mutations run (MutationTarget).
func ClusterSchema(cluster string) Schema {
	s := DefaultSchema()
	s.Cluster = cluster
	return s
}

// localSuffix names a sharded table's per-shard table
// (migrations.LocalSuffix).
const localSuffix = "_local"

// sharded reports whether table is one of the schema's Distributed
// tables: on a cluster, the events and sessions.
func (s Schema) sharded(table string) bool {
	s = s.OrDefault()
	return s.Cluster != "" && table != "" && (table == s.Events || table == s.Sessions)
}

// MutationTarget is what an ALTER TABLE ... DELETE or a DELETE FROM of
// table's rows names: on a cluster, a sharded table's local tables on
// every node (a Distributed table takes no mutation); elsewhere the
// table itself (a replicated full copy replicates its mutations). The
// names come from the schema and the cluster name is an identifier
// (olap.Config.Validate), never input.
func (s Schema) MutationTarget(table string) string {
	if s.sharded(table) {
		return table + localSuffix + " ON CLUSTER " + s.Cluster
	}
	return table
}
