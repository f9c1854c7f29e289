package querybuilder

// ClusterSchema is the layout the migrations compile for the ClickHouse
// cluster named cluster (migrations.ClickHouseCluster, olap/cluster.md):
// the same names as one node's, events and sessions being Distributed
// tables over per-shard local tables and every other table a full
// replicated copy on each node. Statements read the same tables; what
// differs is which subqueries are GLOBAL and where mutations run.
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
	s = s.orDefault()
	return s.Cluster != "" && table != "" && (table == s.Events || table == s.Sessions)
}

// globalIn is the IN of a condition, inside a statement that reads
// events, whose subquery reads events too. On a cluster it is GLOBAL IN:
// the subquery runs once over every shard and its result travels to each
// shard, where a plain IN would run it on each shard's events alone and
// miss the persons whose events span two shards (merged persons); the
// engine refuses the plain form anyway (distributed_product_mode=deny).
// A subquery over a full copy (persons, overrides, cohorts) needs no
// GLOBAL: each shard has all of it.
func (s Schema) globalIn() string {
	if s.orDefault().Cluster != "" {
		return "GLOBAL IN"
	}
	return "IN"
}

// globalJoin is join ("LEFT JOIN", ...) for a right side that reads a
// Distributed table inside a statement that reads events: GLOBAL on a
// cluster, for the reason globalIn says.
func (s Schema) globalJoin(join string) string {
	if s.orDefault().Cluster != "" {
		return "GLOBAL " + join
	}
	return join
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
