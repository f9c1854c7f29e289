package olap

import (
	"context"
	"fmt"
	"time"

	"github.com/insightd/insightd/migrations"
	"github.com/insightd/insightd/querybuilder/chsql"
)

// Migrate applies the ClickHouse migrations not yet recorded in
// schema_migrations and returns the versions it applied. Statements are
// written to be idempotent (IF NOT EXISTS), so two processes migrating at
// once, or a crash between a statement and its record, are harmless.
//
// On a cluster (Schema().Cluster) the migrations are compiled for it
// (migrations.ClickHouseCluster): DDL runs ON CLUSTER and waits for every
// node, up to distributed_ddl_task_timeout (OpenServer); a node that does
// not answer in time fails the migration, which is then not recorded, and
// running it again is safe because every statement is idempotent. The
// ledger is a replicated full copy, so any node knows what was applied.
func Migrate(ctx context.Context, e Engine) ([]int, error) {
	// A migration may fill a table from every event: no query timeout.
	ctx = Maintenance(ctx)
	ms, err := migrations.ClickHouse()
	if err != nil {
		return nil, err
	}
	ledger := []string{`CREATE TABLE IF NOT EXISTS schema_migrations
(
    version UInt32,
    name String,
    applied_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree
ORDER BY version`}
	if cluster := e.Schema().Cluster; cluster != "" {
		if ms, err = migrations.ClickHouseCluster(cluster); err != nil {
			return nil, err
		}
		if ledger, err = migrations.ClusterStatements(ledger[0], cluster); err != nil {
			return nil, err
		}
	}
	for _, s := range ledger {
		if err := e.Exec(ctx, chsql.Statement{SQL: s}); err != nil {
			return nil, fmt.Errorf("create schema_migrations: %w", err)
		}
	}
	rows, err := e.Query(ctx, chsql.Statement{SQL: "SELECT DISTINCT version FROM schema_migrations"})
	if err != nil {
		return nil, err
	}
	done := map[int]bool{}
	for _, r := range rows.Data {
		done[int(r[0].(uint64))] = true
	}
	applied := []int{}
	for _, m := range ms {
		if done[m.Version] {
			continue
		}
		for i, s := range m.Statements() {
			if err := e.Exec(ctx, chsql.Statement{SQL: s}); err != nil {
				return applied, fmt.Errorf("clickhouse migration %04d_%s statement %d: %w", m.Version, m.Name, i+1, err)
			}
		}
		if err := e.Exec(ctx, chsql.Statement{
			SQL:    "INSERT INTO schema_migrations (version, name, applied_at) VALUES ({v:UInt32}, {n:String}, {t:DateTime64(3, 'UTC')})",
			Params: map[string]any{"v": m.Version, "n": m.Name, "t": time.Now()},
		}); err != nil {
			return applied, err
		}
		applied = append(applied, m.Version)
	}
	return applied, nil
}
