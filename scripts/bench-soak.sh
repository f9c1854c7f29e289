#!/usr/bin/env bash
# make bench-soak: the reliability soak (benchmarks/soak). A private
# PostgreSQL made for the run, a fresh data directory, `insightd serve` on
# 127.0.0.1:8110 under 32 clients mixing captures, cached retrieves,
# trends and funnels for DURATION (default 10m), killed with SIGKILL and
# restarted every KILL_EVERY (default 2m), PostgreSQL stopped for OUTAGE_FOR
# (default 60s; 0: none) from 45% of the run; then every acknowledged event
# must be stored exactly once. Prints markdown for
# benchmarks/results/reliability.md.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
DURATION=${DURATION:-10m}
KILL_EVERY=${KILL_EVERY:-2m}
CLIENTS=${CLIENTS:-32}
OUTAGE_FOR=${OUTAGE_FOR:-60s}
PG_DIR=$DATA_DIR/postgres-bench
SOAK_DATA=$(mktemp -d -p "$DATA_DIR" soak.XXXXXX)
export INSIGHTD_CHDB_LIB=${INSIGHTD_CHDB_LIB:-$ROOT/.deps/chdb/libchdb.so}
export INSIGHTD_LOG_LEVEL=${INSIGHTD_LOG_LEVEL:-warn}

cleanup() {
  pg_stop "$PG_DIR"
  [ -n "${KEEP:-}" ] || rm -rf "$SOAK_DATA"
}
trap cleanup EXIT
unset DATABASE_URL
step "starting a private PostgreSQL"
pg_start "$PG_DIR" "insightd_soak_$(date +%s)"
step "building insightd and benchmarks/soak"
go build -o bin/insightd ./cmd/insightd
go build -o bin/soak ./benchmarks/soak
step "migrating and bootstrapping a project in $SOAK_DATA"
bin/insightd migrate --data-dir "$SOAK_DATA" 2>/dev/null
boot=$(bin/insightd admin bootstrap --email "soak-$(date +%s%N)@example.com" --org Soak --project Soak)
key=$(echo "$boot" | sed -E 's/.*"personal_api_key":"([^"]+)".*/\1/')
token=$(echo "$boot" | sed -E 's/.*"project_api_token":"([^"]+)".*/\1/')
pid=$(echo "$boot" | sed -E 's/.*"project_id":([0-9]+).*/\1/')
echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
pg=$(pg_bin_dir)
port=$(cat "$PG_DIR.port")
as=""
is_root && as="runuser -u postgres --"
pg_stop_cmd="$as $pg/pg_ctl -D $PG_DIR -m fast -w stop"
pg_start_cmd="$as $pg/pg_ctl -D $PG_DIR -l $PG_DIR/server.log -w -t 60 -o '-p $port -k $PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=${PG_FSYNC:-on}' start"
outage=()
[ "$OUTAGE_FOR" = 0 ] || outage=(-pg-stop "$pg_stop_cmd" -pg-start "$pg_start_cmd" -outage-for "$OUTAGE_FOR")
step "soaking: $CLIENTS clients for $DURATION, a SIGKILL and restart every $KILL_EVERY, PostgreSQL stopped for $OUTAGE_FOR"
bin/soak -bin bin/insightd -data-dir "$SOAK_DATA" -chdb-lib "$INSIGHTD_CHDB_LIB" -project "$pid" -key "$key" -token "$token" \
  -clients "$CLIENTS" -duration "$DURATION" -kill-every "$KILL_EVERY" "${outage[@]}"
echo
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
