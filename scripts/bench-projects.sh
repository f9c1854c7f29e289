#!/usr/bin/env bash
# Projects API latency under concurrent clients, against the real server:
# a private PostgreSQL cluster and database made for the run, the embedded
# ClickHouse, `insightd serve` on 127.0.0.1:8100. Loads it with the Go load
# generator (benchmarks/projectload) and with wrk (Debian's package,
# installed when missing and root), RUNS times each (default 3).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
RUNS=${RUNS:-3}
DURATION=${DURATION:-10}
PG_DIR=$DATA_DIR/postgres-bench
BENCH_DATA=$(mktemp -d)
export INSIGHTD_CHDB_LIB=${INSIGHTD_CHDB_LIB:-$ROOT/.deps/chdb/libchdb.so}
export INSIGHTD_DATA_DIR=$BENCH_DATA INSIGHTD_ADDR=127.0.0.1:8100 INSIGHTD_LOG_LEVEL=${INSIGHTD_LOG_LEVEL:-info}

if ! command -v wrk >/dev/null 2>&1; then
  is_root || die "wrk is not installed (apt-get install wrk)"
  step "installing wrk"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null 2>&1 \
    || { DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
fi

server=
cleanup() {
  [ -n "$server" ] && kill -INT "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  pg_stop "$PG_DIR"
  rm -rf "$BENCH_DATA"
}
trap cleanup EXIT
unset DATABASE_URL
step "starting a private PostgreSQL"
pg_start "$PG_DIR" insightd_bench
step "building insightd and benchmarks/projectload"
go build -o bin/insightd ./cmd/insightd
go build -o bin/projectload ./benchmarks/projectload
step "migrating, bootstrapping and starting insightd serve on 127.0.0.1:8100"
bin/insightd migrate 2>/dev/null
boot=$(bin/insightd admin bootstrap --email "bench-$(date +%s%N)@example.com" --org Bench --project "Bench 0")
key=$(echo "$boot" | sed -E 's/.*"personal_api_key":"([^"]+)".*/\1/')
org=$(echo "$boot" | sed -E 's/.*"organization_id":"([^"]+)".*/\1/')
pid=$(echo "$boot" | sed -E 's/.*"project_id":([0-9]+).*/\1/')
bin/insightd serve --migrate=false 2>/dev/null &
server=$!
for _ in $(seq 1 50); do curl -sf http://127.0.0.1:8100/_health >/dev/null && break; sleep 0.2; done

echo "## Go load generator (32 clients, ${DURATION}s per endpoint)"
echo
for r in $(seq 1 "$RUNS"); do
  step "Go load generator: run $r of $RUNS"
  projects=0; [ "$r" = 1 ] && projects=9   # 10 projects in the organization
  bin/projectload -url http://127.0.0.1:8100 -key "$key" -org "$org" -project "$pid" -clients 32 \
    -duration "${DURATION}s" -projects "$projects" | { [ "$r" = 1 ] && cat || tail -n 2; }
done
echo
echo "## wrk -t2 -c32 -d${DURATION}s --latency"
echo
echo "| endpoint | run | req/s | p50 ms | p90 ms | p99 ms | non-2xx |"
echo "|---|---|---|---|---|---|---|"
base=http://127.0.0.1:8100/api/organizations/$org/projects
for r in $(seq 1 "$RUNS"); do
  for ep in retrieve list; do
    step "wrk: $ep, run $r of $RUNS"
    url=$base/; [ "$ep" = retrieve ] && url=$base/$pid/
    out=$(wrk -t2 -c32 -d"${DURATION}s" --latency -H "Authorization: Bearer $key" "$url")
    ms() { echo "$out" | awk -v q="$1" '$1==q {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; printf "%.2f", v}'; }
    rps=$(echo "$out" | awk '/Requests\/sec/ {printf "%.0f", $2}')
    bad=$(echo "$out" | awk '/Non-2xx/ {print $5}'); bad=${bad:-0}
    echo "| $ep | $r | $rps | $(ms 50%) | $(ms 90%) | $(ms 99%) | $bad |"
  done
done
