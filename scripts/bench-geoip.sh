#!/usr/bin/env bash
# What GeoIP at capture costs (benchmarks/geoipload): a server with a GeoIP
# database against one without, same bodies, interleaved rounds, on a
# private PostgreSQL and a fresh embedded ClickHouse. Flags after the
# script go to geoipload, e.g. scripts/bench-geoip.sh -event-ip
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
PG_DIR=$DATA_DIR/postgres-bench-geoip
BENCH_DATA=$(mktemp -d)
export INSIGHTD_CHDB_LIB=${INSIGHTD_CHDB_LIB:-$ROOT/.deps/chdb/libchdb.so}
export INSIGHTD_DATA_DIR=$BENCH_DATA
cleanup() { pg_stop "$PG_DIR"; rm -rf "$BENCH_DATA"; }
trap cleanup EXIT
unset DATABASE_URL
step "starting a private PostgreSQL"
pg_start "$PG_DIR" insightd_bench_geoip
step "building benchmarks/geoipload"
go build -o bin/geoipload ./benchmarks/geoipload
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
step "running geoipload${*:+ ($*)}"
bin/geoipload "$@"
