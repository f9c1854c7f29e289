package olap

import (
	"context"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// clusterSettings are the session settings of a server backend on a
// cluster (Config.Cluster), sent with every statement:
//
//   - distributed_foreground_insert: an insert into the Distributed events
//     table returns once every shard has its rows, not when they are
//     queued on the node that took them, so ingestion's "stored, then
//     recorded in event_uuids" order and its crash recovery hold as on
//     one node.
//   - distributed_product_mode=global: a subquery over a Distributed table
//     inside a statement over one runs once for the whole cluster, as
//     GLOBAL: exact, where "local" would run it on each shard's part. The
//     builder writes GLOBAL itself where it knows one is needed
//     (querybuilder's globalIn, globalJoin); this covers the HogQL a user writes.
//   - distributed_ddl_task_timeout / output mode throw: a migration's ON
//     CLUSTER statement waits up to ddlTimeout seconds for every node and
//     fails otherwise, so the migration is not recorded and is run again
//     (its statements are idempotent; the DDL queue still brings the late
//     node up to date when it returns).
func clusterSettings(s clickhouse.Settings) {
	s["distributed_foreground_insert"] = 1
	s["distributed_product_mode"] = "global"
	s["distributed_ddl_task_timeout"] = ddlTimeout
	s["distributed_ddl_output_mode"] = "throw"
}

// ddlTimeout is how long, in seconds, an ON CLUSTER statement waits for
// every node.
const ddlTimeout = 300

// killOnCluster stops the statements of query id on every node: the
// statement the node that took it runs and the parts its shards run for
// it (their initial_query_id is id). It looks first, through every
// replica's system.processes, because KILL ... ON CLUSTER answers a row
// per node whether or not anything was running, and each one is a task
// in the cluster's DDL queue.
func (s *Server) killOnCluster(ctx context.Context, id string) (bool, error) {
	params, err := EncodeParams(map[string]any{"id": id})
	if err != nil {
		return false, err
	}
	rows, err := s.conn.Query(queryContext(ctx, params),
		"SELECT count() FROM clusterAllReplicas('"+s.schema.Cluster+"', system.processes) WHERE initial_query_id = {id:String}")
	if err != nil {
		return false, err
	}
	var n uint64
	for rows.Next() {
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return false, err
		}
	}
	if err := rows.Close(); err != nil {
		return false, err
	}
	if n == 0 {
		return false, nil
	}
	return true, s.conn.Exec(queryContext(ctx, params),
		"KILL QUERY ON CLUSTER "+s.schema.Cluster+" WHERE initial_query_id = {id:String} ASYNC")
}
