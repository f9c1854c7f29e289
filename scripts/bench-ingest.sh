#!/usr/bin/env bash
# Event ingestion throughput: HTTP /batch/ against the direct engine insert
# (the ceiling), in one process and one run (benchmarks/ingestload), on a
# private PostgreSQL and a fresh embedded ClickHouse. Flags after the
# script go to ingestload, e.g. scripts/bench-ingest.sh -rounds 5 -uuids=false.
# PROGRAM names another capture benchmark of benchmarks/ run the same way
# (scripts/bench-geoip.sh: geoipload).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
PROGRAM=${PROGRAM:-ingestload}
PG_DIR=$DATA_DIR/postgres-bench-$PROGRAM
BENCH_DATA=$(mktemp -d)
export INSIGHTD_CHDB_LIB=${INSIGHTD_CHDB_LIB:-$ROOT/.deps/chdb/libchdb.so}
export INSIGHTD_DATA_DIR=$BENCH_DATA
cleanup() { pg_stop "$PG_DIR"; rm -rf "$BENCH_DATA"; }
trap cleanup EXIT
unset DATABASE_URL
step "starting a private PostgreSQL"
pg_start "$PG_DIR" "insightd_bench_$PROGRAM"
step "building benchmarks/$PROGRAM"
go build -o "bin/$PROGRAM" "./benchmarks/$PROGRAM"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
step "running $PROGRAM${*:+ ($*)}"
"bin/$PROGRAM" "$@"
