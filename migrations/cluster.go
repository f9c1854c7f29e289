package migrations

import (
	"fmt"
	"regexp"
	"strings"
)

// A cluster's schema is the single-node migrations compiled statement by
// statement, not a second set of files: a column added to a table once
// reaches both layouts, and a statement whose cluster form is not known
// (a new kind of DDL, a table without a placement) stops the compilation
// with an error naming it, so the golden test fails until someone
// decides. The compiler reads the statement's head and engine clause
// with a lexer (strings, quoted names and comments skipped), never by
// searching for text in it.
//
// Layout (olap/cluster.md): a sharded table is a table <name>_local on
// every node, ReplicatedXMergeTree under a path with {shard}, and a
// Distributed table <name> over it, so statements read and write the
// same names as on one node. Every other table is a full copy: one
// Replicated table whose path has no {shard}, a replica on every node,
// so that joins with it stay on the node that reads the events.
//
// Every DDL statement runs ON CLUSTER, so a node that is down takes the
// statement from the DDL queue when it comes back; every statement is
// idempotent (IF NOT EXISTS / IF EXISTS, refused otherwise), so a
// migration that failed half-way, or timed out waiting for a node
// (distributed_ddl_task_timeout), is run again whole.

// ClusterTable is how one table is laid out on a cluster.
type ClusterTable struct {
	// Sharded: <name>_local on every shard plus a Distributed <name>.
	// Otherwise a full copy on every node.
	Sharded bool
	// ShardingKey is the Distributed table's sharding expression, for the
	// rows written through it; empty leaves inserts to the local tables
	// (a materialized view on each shard).
	ShardingKey string
}

// ClusterTables places every table the migrations create (and the
// migrations ledger). Events are sharded by the person they were written
// with: one person's events, all of their distinct ids' and sessions',
// land on one shard, and only the persons merged later span two.
var ClusterTables = map[string]ClusterTable{
	"events":               {Sharded: true, ShardingKey: "cityHash64(person_id)"},
	"sessions":             {Sharded: true, ShardingKey: "rand()"},
	"persons":              {},
	"person_distinct_id":   {},
	"person_overrides":     {},
	"event_uuids":          {},
	"ingest_checkpoint":    {},
	"cohort_people":        {},
	"groups":               {},
	"group_keys":           {},
	"event_definitions":    {},
	"event_volume":         {},
	"property_definitions": {},
	"event_properties":     {},
	"schema_migrations":    {},
}

// LocalSuffix names a sharded table's per-shard table.
const LocalSuffix = "_local"

// ReplicationPath is the Keeper path of a table's replicas: per shard for
// a sharded table's local table, one for all nodes for a full copy.
func ReplicationPath(table string) string {
	if ClusterTables[table].Sharded {
		return "/clickhouse/tables/{shard}/insightd/" + table
	}
	return "/clickhouse/tables/all/insightd/" + table
}

var clusterName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// ValidClusterName reports whether name can name a cluster here: it is
// written into DDL (ON CLUSTER, Distributed), so only a plain identifier.
func ValidClusterName(name string) bool { return clusterName.MatchString(name) }

// ClickHouseCluster returns the ClickHouse migrations compiled for the
// cluster named cluster, in version order, with the same versions.
func ClickHouseCluster(cluster string) ([]Migration, error) {
	ms, err := ClickHouse()
	if err != nil {
		return nil, err
	}
	out := make([]Migration, len(ms))
	for i, m := range ms {
		if out[i], err = m.ForCluster(cluster); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ForCluster compiles the migration's statements for the cluster.
func (m Migration) ForCluster(cluster string) (Migration, error) {
	if !ValidClusterName(cluster) {
		return Migration{}, fmt.Errorf("cluster name %q: want letters, digits and _", cluster)
	}
	var out []string
	for i, s := range m.Statements() {
		c, err := ClusterStatements(s, cluster)
		if err != nil {
			return Migration{}, fmt.Errorf("clickhouse migration %04d_%s statement %d: %w", m.Version, m.Name, i+1, err)
		}
		out = append(out, c...)
	}
	return Migration{Version: m.Version, Name: m.Name, SQL: strings.Join(out, ";\n\n") + ";\n"}, nil
}

// ClusterStatements compiles one single-node statement into the
// statements that do the same on the cluster.
func ClusterStatements(stmt, cluster string) ([]string, error) {
	if !ValidClusterName(cluster) {
		return nil, fmt.Errorf("cluster name %q: want letters, digits and _", cluster)
	}
	toks := lex(stmt)
	switch {
	case toks.is(0, "CREATE", "TABLE"):
		return createTable(stmt, toks, cluster)
	case toks.is(0, "CREATE", "MATERIALIZED", "VIEW"):
		return createView(stmt, toks, cluster)
	case toks.is(0, "ALTER", "TABLE"):
		return alterTable(stmt, toks, cluster)
	case toks.is(0, "TRUNCATE", "TABLE"):
		return truncateTable(stmt, toks, cluster)
	case toks.is(0, "INSERT", "INTO"):
		// Data moves through the cluster's names as they are: into a
		// Distributed table by its sharding key, into a full copy on the
		// node migrating (replication brings it to the others). A rerun
		// inserts the same rows, which the Replacing engines collapse.
		if _, ok := ClusterTables[toks.ident(2)]; !ok {
			return nil, fmt.Errorf("INSERT INTO %q: the table has no cluster placement (migrations.ClusterTables)", toks.ident(2))
		}
		return []string{stmt}, nil
	}
	return nil, fmt.Errorf("no cluster form for a statement beginning %q", head(toks))
}

// createTable: a full copy gets ON CLUSTER and the replicated engine; a
// sharded table becomes its local table and a Distributed table over it.
func createTable(stmt string, toks tokens, cluster string) ([]string, error) {
	if !toks.is(2, "IF", "NOT", "EXISTS") {
		return nil, fmt.Errorf("CREATE TABLE without IF NOT EXISTS cannot be retried")
	}
	name := toks.ident(5)
	t, ok := ClusterTables[name]
	if name == "" || !ok {
		return nil, fmt.Errorf("table %q has no cluster placement (migrations.ClusterTables)", name)
	}
	e := toks.find(6, "ENGINE", "=")
	if e < 0 || toks[e+2].kind != tokIdent {
		return nil, fmt.Errorf("CREATE TABLE %s: no ENGINE = clause", name)
	}
	engine := toks[e+2].text
	if !strings.HasSuffix(engine, "MergeTree") || strings.HasPrefix(engine, "Replicated") {
		return nil, fmt.Errorf("CREATE TABLE %s: engine %s has no replicated form here", name, engine)
	}
	args := []string{quote(ReplicationPath(name)), "'{replica}'"}
	end := toks[e+2].end
	if toks.is(e+3, "(") {
		closeAt := toks.closing(e + 3)
		if closeAt < 0 {
			return nil, fmt.Errorf("CREATE TABLE %s: unbalanced engine arguments", name)
		}
		if inner := strings.TrimSpace(stmt[toks[e+3].end:toks[closeAt].start]); inner != "" {
			args = append(args, inner)
		}
		end = toks[closeAt].end
	}
	local := name
	if t.Sharded {
		local = name + LocalSuffix
	}
	nameTok := toks[5]
	sql := stmt[:nameTok.start] + local + " ON CLUSTER " + cluster + stmt[nameTok.end:toks[e+2].start] +
		"Replicated" + engine + "(" + strings.Join(args, ", ") + ")" + stmt[end:]
	if !t.Sharded {
		return []string{sql}, nil
	}
	dist := "CREATE TABLE IF NOT EXISTS " + name + " ON CLUSTER " + cluster + " AS " + local +
		"\nENGINE = Distributed(" + quote(cluster) + ", currentDatabase(), " + quote(local)
	if t.ShardingKey != "" {
		dist += ", " + t.ShardingKey
	}
	return []string{sql, dist + ")"}, nil
}

// createView puts a materialized view on every node, reading the local
// table of each sharded table it selects from, so that each shard's
// inserts feed its own part of the target.
func createView(stmt string, toks tokens, cluster string) ([]string, error) {
	if !toks.is(3, "IF", "NOT", "EXISTS") {
		return nil, fmt.Errorf("CREATE MATERIALIZED VIEW without IF NOT EXISTS cannot be retried")
	}
	if !toks.is(7, "TO") || toks.ident(8) == "" {
		return nil, fmt.Errorf("a materialized view needs TO <table>: its target is placed as a table (migrations.ClusterTables)")
	}
	var b strings.Builder
	last := 0
	for i := 6; i < len(toks); i++ {
		tk := toks[i]
		replace := ""
		switch {
		case i == 6:
			replace = tk.text + " ON CLUSTER " + cluster
		case i == 8 || (i > 8 && (toks.is(i-1, "FROM") || toks.is(i-1, "JOIN"))):
			if tk.kind != tokIdent {
				continue // a subquery: its own FROM comes later
			}
			t, ok := ClusterTables[tk.text]
			if !ok {
				return nil, fmt.Errorf("materialized view: table %q has no cluster placement (migrations.ClusterTables)", tk.text)
			}
			if !t.Sharded {
				continue
			}
			replace = tk.text + LocalSuffix
		default:
			continue
		}
		b.WriteString(stmt[last:tk.start])
		b.WriteString(replace)
		last = tk.end
	}
	b.WriteString(stmt[last:])
	return []string{b.String()}, nil
}

// columnOps are the ALTER operations a Distributed table takes too: its
// columns must stay those of its local table.
var columnOps = map[string]bool{"ADD COLUMN": true, "MODIFY COLUMN": true, "DROP COLUMN": true,
	"RENAME COLUMN": true, "COMMENT COLUMN": true}

// idempotent are the forms of ALTER operations that a second run leaves
// as the first did; anything else is refused.
var idempotentOps = map[string]string{"ADD COLUMN": "IF NOT EXISTS", "ADD INDEX": "IF NOT EXISTS",
	"ADD PROJECTION": "IF NOT EXISTS", "DROP COLUMN": "IF EXISTS", "DROP INDEX": "IF EXISTS",
	"DROP PROJECTION": "IF EXISTS", "MODIFY COLUMN": "", "MATERIALIZE COLUMN": "", "MATERIALIZE INDEX": "", "MATERIALIZE PROJECTION": "",
	"COMMENT COLUMN": ""}

// alterTable runs the ALTER on every node: on a sharded table's local
// tables, and for column changes on its Distributed table as well.
func alterTable(stmt string, toks tokens, cluster string) ([]string, error) {
	name := toks.ident(2)
	t, ok := ClusterTables[name]
	if name == "" || !ok {
		return nil, fmt.Errorf("ALTER TABLE %q: the table has no cluster placement (migrations.ClusterTables)", name)
	}
	columns, others := 0, 0
	for _, at := range toks.topLevel(3) {
		op := toks.ident(at) + " " + toks.ident(at+1)
		guard, ok := idempotentOps[op]
		if !ok {
			return nil, fmt.Errorf("ALTER TABLE %s: no cluster form for %s", name, op)
		}
		if guard != "" && !toks.is(at+2, strings.Fields(guard)...) {
			return nil, fmt.Errorf("ALTER TABLE %s: %s without %s cannot be retried", name, op, guard)
		}
		if columnOps[op] {
			columns++
		} else {
			others++
		}
	}
	on := func(table string) string {
		return stmt[:toks[2].start] + table + " ON CLUSTER " + cluster + stmt[toks[2].end:]
	}
	if !t.Sharded {
		return []string{on(name)}, nil
	}
	if columns > 0 && others > 0 {
		return nil, fmt.Errorf("ALTER TABLE %s mixes column and other operations: write them as two statements", name)
	}
	out := []string{on(name + LocalSuffix)}
	if columns > 0 {
		out = append(out, on(name))
	}
	return out, nil
}

// truncateTable empties the table on every node: a sharded table's
// local tables (truncating a Distributed table only drops its queue).
func truncateTable(stmt string, toks tokens, cluster string) ([]string, error) {
	at := 2
	if toks.is(2, "IF", "EXISTS") {
		at = 4
	}
	name := toks.ident(at)
	t, ok := ClusterTables[name]
	if name == "" || !ok || at+1 != len(toks) {
		return nil, fmt.Errorf("TRUNCATE TABLE %q: the table has no cluster placement (migrations.ClusterTables)", name)
	}
	local := name
	if t.Sharded {
		local += LocalSuffix
	}
	return []string{stmt[:toks[at].start] + local + " ON CLUSTER " + cluster + stmt[toks[at].end:]}, nil
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

func head(t tokens) string {
	var w []string
	for i := 0; i < len(t) && i < 4; i++ {
		w = append(w, t[i].text)
	}
	return strings.Join(w, " ")
}
