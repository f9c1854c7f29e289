#!/usr/bin/env bash
# make bench-import: `insightd import` from one insightd to another on this
# machine. A source project of EVENTS events (default 10 million) of
# PERSONS persons (100 000) over DAYS days (30) is written by `insightd
# load` into its own data directory (SRC_DIR, default
# .data/bench-import/src, kept between runs with its database and reused
# when its stamp matches), served by one `insightd serve`; the target is
# a fresh data directory and database served by another. Then:
#   1. benchmarks/importload: ROUNDS (7) interleaved rounds, each an
#      import of one day of the source and a capture of as many events
#      straight to the target's /batch/ (8 senders), the ratio per round;
#   2. the whole project imported once through by the insightd binary
#      (events and persons) under /usr/bin/time: wall, CPU, peak RSS
#      (WHOLE=0 skips it).
# IMPORT_SENDERS (4) is the import rounds' --senders.
# SRC_PPROF and DST_PPROF (host:port) serve the two servers' Go profilers.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
EVENTS=${EVENTS:-10000000}
PERSONS=${PERSONS:-100000}
DAYS=${DAYS:-30}
ROUNDS=${ROUNDS:-7}
WHOLE=${WHOLE:-1}
IMPORT_SENDERS=${IMPORT_SENDERS:-4}
BENCH=$ROOT/.data/bench-import
SRC_DIR=${SRC_DIR:-$BENCH/src}
DST_DIR=$BENCH/dst
export INSIGHTD_CHDB_LIB=${INSIGHTD_CHDB_LIB:-$ROOT/.deps/chdb/libchdb.so}
unset INSIGHTD_DATA_DIR
mkdir -p "$BENCH"
PG_DIR=$DATA_DIR/postgres-bench-import
pg_start "$PG_DIR" insightd_bench_import_src
base=${DATABASE_URL%%\?*}
base=${base%/*}
SRC_DB=${SRC_DB:-$base/insightd_bench_import_src?sslmode=disable}
DST_DB=$base/insightd_bench_import_dst?sslmode=disable
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pg_stop "$PG_DIR"; }
trap cleanup EXIT

step "building insightd and benchmarks/importload"
go build -o bin/insightd ./cmd/insightd
go build -o bin/importload ./benchmarks/importload

stamp="$EVENTS $PERSONS $DAYS"
if [ "$(cat "$SRC_DIR.stamp" 2>/dev/null)" != "$stamp" ]; then
  step "writing the source: $EVENTS events of $PERSONS persons over $DAYS days"
  rm -rf "$SRC_DIR"
  psql "${base}/postgres" -qc "DROP DATABASE IF EXISTS insightd_bench_import_src" -c "CREATE DATABASE insightd_bench_import_src"
  DATABASE_URL=$SRC_DB bin/insightd migrate --data-dir "$SRC_DIR" 2>/dev/null
  DATABASE_URL=$SRC_DB bin/insightd admin bootstrap --email src@example.com --org Source --project Source >"$SRC_DIR.boot.json"
  proj=$(grep -o "\"project_id\":[0-9]*" "$SRC_DIR.boot.json" | cut -d: -f2)
  /usr/bin/time -f 'time wall %e user %U system %S max_rss_kib %M' bin/insightd load --data-dir "$SRC_DIR" --project "$proj" \
    --events "$EVENTS" --persons "$PERSONS" --days "$DAYS" --optimize >"$SRC_DIR.load.json" 2>"$SRC_DIR.load.log"
  echo "$stamp" >"$SRC_DIR.stamp"
fi
json() { grep -o "\"$1\":[^,}]*" "$2" | head -n 1 | cut -d: -f2- | tr -d '"'; }
src_project=$(json project_id "$SRC_DIR.boot.json")
src_key=$(json personal_api_key "$SRC_DIR.boot.json")

step "starting the source and a fresh target"
rm -rf "$DST_DIR"
psql "${base}/postgres" -qc "DROP DATABASE IF EXISTS insightd_bench_import_dst" -c "CREATE DATABASE insightd_bench_import_dst"
DATABASE_URL=$DST_DB bin/insightd migrate --data-dir "$DST_DIR" 2>/dev/null
DATABASE_URL=$DST_DB bin/insightd admin bootstrap --email dst@example.com --org Target --project Rounds >"$DST_DIR.boot.json"
dst_key=$(json personal_api_key "$DST_DIR.boot.json")
rounds_project=$(json project_id "$DST_DIR.boot.json")
src_port=$(free_port 18100)
DATABASE_URL=$SRC_DB INSIGHTD_PPROF_ADDR=${SRC_PPROF:-} bin/insightd serve --data-dir "$SRC_DIR" --addr "127.0.0.1:$src_port" --log-level warn 2>"$BENCH/src.serve.log" &
pids+=($!)
dst_port=$(free_port $((src_port + 1)))
DATABASE_URL=$DST_DB INSIGHTD_PPROF_ADDR=${DST_PPROF:-} bin/insightd serve --data-dir "$DST_DIR" --addr "127.0.0.1:$dst_port" --log-level warn 2>"$BENCH/dst.serve.log" &
pids+=($!)
for port in "$src_port" "$dst_port"; do
  for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$port/_ready" >/dev/null 2>&1 && break; sleep 0.2; done
done
new_project() {
  curl -fsS -X POST -H "Authorization: Bearer $dst_key" -H 'Content-Type: application/json' \
    --data "{\"name\": \"$1\"}" "http://127.0.0.1:$dst_port/api/organizations/@current/projects/"
}
capture=$(new_project Capture)
capture_token=$(printf '%s' "$capture" | grep -o '"api_token":"[^"]*"' | cut -d'"' -f4)
whole=$(new_project Whole | grep -o '"id":[0-9]*' | head -n 1 | cut -d: -f2)
first_day=$(date -u -d "$((DAYS - 1)) days ago" +%F)

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); source: $EVENTS events, $PERSONS persons, $DAYS days"
step "interleaved rounds: import one day, then capture as many events"
bin/importload -from "http://127.0.0.1:$src_port" -from-key "$src_key" -from-project "$src_project" \
  -to "http://127.0.0.1:$dst_port" -to-key "$dst_key" -to-project "$rounds_project" -capture-token "$capture_token" \
  -start "$(date -u -d "$first_day + 1 day" +%F)" -rounds "$ROUNDS" -import-senders "$IMPORT_SENDERS"

[ "$WHOLE" = 1 ] || exit 0
step "the whole project once through (events and persons)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f 'time wall %e user %U system %S max_rss_kib %M' bin/insightd import \
  --from "http://127.0.0.1:$src_port" --from-key "$src_key" --from-project "$src_project" \
  --to "http://127.0.0.1:$dst_port" --to-key "$dst_key" --to-project "$whole" --only events,persons \
  --checkpoint "$BENCH/whole.checkpoint.json" >"$BENCH/whole.json" 2>"$BENCH/whole.log" || { tail -n 20 "$BENCH/whole.log"; die "import failed"; }
rm -f "$BENCH/whole.checkpoint.json"
cat "$BENCH/whole.json"
tail -n 1 "$BENCH/whole.log"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
