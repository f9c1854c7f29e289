#!/usr/bin/env bash
# benchmarks/results/retention-variants/run.sh: times the 11-day daily
# recurring retention of the benchmark (body.json, the request of
# benchmarks/retentionload) as BuildRetention writes it (generated.sql,
# kept identical to the builder by querybuilder's
# TestRetentionVariantsGiveTheGeneratedCells) against the same cells
# written with ClickHouse's retention() aggregate (retention_*.sql), in
# one run: each round runs every file in turn, generated.sql first and
# the baseline of the ratios. BENCH_DIR (default .data/bench100m, made by
# make bench-load), ROUNDS (7).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cd "$root"
go run ./benchmarks/sqlfiles -data-dir "${BENCH_DIR:-$root/.data/bench100m}" \
  -chdb-lib "${INSIGHTD_CHDB_LIB:-$root/.deps/chdb/libchdb.so}" -rounds "${ROUNDS:-7}" \
  "$here/generated.sql" "$here/retention_foreach.sql" "$here/retention_per_cohort.sql"
