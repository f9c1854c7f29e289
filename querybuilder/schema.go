package querybuilder

import "github.com/insightd/insightd/querybuilder/chsql"

// Schema names insightd's ClickHouse tables (chsql.Schema); Env hands one
// in, the zero value meaning DefaultSchema.
type Schema = chsql.Schema

// DefaultSchema is the single-node layout migrations/clickhouse creates.
func DefaultSchema() Schema { return chsql.DefaultSchema() }

// ClusterSchema is the layout the migrations compile for the ClickHouse
// cluster named cluster.
func ClusterSchema(cluster string) Schema { return chsql.ClusterSchema(cluster) }

// EventPersonJoin and EventPersonID read an event's current person
// through the overrides of merged persons (chsql.EventPersonJoin), for
// tests and tools that write their own checks.
var EventPersonJoin = chsql.EventPersonJoin

// EventPersonID is an event's person, given EventPersonJoin.
const EventPersonID = chsql.EventPersonID

// globalIn is the IN of a condition, inside a statement that reads
// events, whose subquery reads events too. On a cluster it is GLOBAL IN:
// the subquery runs once over every shard and its result travels to each
// shard, where a plain IN would run it on each shard's events alone and
// miss the persons whose events span two shards (merged persons); the
// engine refuses the plain form anyway (distributed_product_mode=deny).
// A subquery over a full copy (persons, overrides, cohorts) needs no
// GLOBAL: each shard has all of it.
func globalIn(s Schema) string {
	if s.OrDefault().Cluster != "" {
		return "GLOBAL IN"
	}
	return "IN"
}

// globalJoin is join ("LEFT JOIN", ...) for a right side that reads a
// Distributed table inside a statement that reads events: GLOBAL on a
// cluster, for the reason globalIn says.
func globalJoin(s Schema, join string) string {
	if s.OrDefault().Cluster != "" {
		return "GLOBAL " + join
	}
	return join
}
