#!/usr/bin/env bash
# What idle and slow clients cost a normal one (benchmarks/slowclients):
# `insightd serve` with its default limits on 127.0.0.1:8101, on a private
# PostgreSQL and a fresh embedded ClickHouse; 10 000 idle keep-alive
# connections and 300 slow-body senders against a normal client, 7 rounds.
# Both processes get a file descriptor limit of 65536 when root can raise
# it (the server's default cap is then its 10 000). Flags after the script
# go to slowclients, e.g. scripts/bench-slow-clients.sh -rounds 3 -idle 2000
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
PG_DIR=$DATA_DIR/postgres-bench-slow
BENCH_DATA=$(mktemp -d)
export INSIGHTD_CHDB_LIB=${INSIGHTD_CHDB_LIB:-$ROOT/.deps/chdb/libchdb.so}
export INSIGHTD_DATA_DIR=$BENCH_DATA INSIGHTD_ADDR=127.0.0.1:8101 INSIGHTD_LOG_LEVEL=${INSIGHTD_LOG_LEVEL:-warn}
server=
cleanup() {
  [ -n "$server" ] && kill -INT "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  pg_stop "$PG_DIR"
  rm -rf "$BENCH_DATA"
}
trap cleanup EXIT
unset DATABASE_URL
if is_root; then ulimit -Hn 65536 2>/dev/null || true; ulimit -Sn "$(ulimit -Hn)"; fi
step "starting a private PostgreSQL"
pg_start "$PG_DIR" insightd_bench_slow
step "building insightd and benchmarks/slowclients"
go build -o bin/insightd ./cmd/insightd
go build -o bin/slowclients ./benchmarks/slowclients
step "migrating, bootstrapping and starting insightd serve on $INSIGHTD_ADDR"
bin/insightd migrate 2>/dev/null
boot=$(bin/insightd admin bootstrap --email "bench-$(date +%s%N)@example.com" --org Bench --project Slow)
token=$(echo "$boot" | sed -E 's/.*"project_api_token":"([^"]+)".*/\1/')
bin/insightd serve --migrate=false 2>"$BENCH_DATA/serve.log" &
server=$!
for _ in $(seq 1 100); do curl -sf "http://$INSIGHTD_ADDR/_ready" >/dev/null && break; sleep 0.2; done
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); file limit $(ulimit -n); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
step "running slowclients${*:+ ($*)}"
bin/slowclients -addr "$INSIGHTD_ADDR" -token "$token" -server-pid "$server" "$@"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "server error lines: $(grep -c '"level":"ERROR"' "$BENCH_DATA/serve.log" || true)"
grep '"level":"ERROR"' "$BENCH_DATA/serve.log" | head -n 3 || true
