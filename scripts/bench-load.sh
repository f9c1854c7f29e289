#!/usr/bin/env bash
# make bench-load: time `insightd load` writing EVENTS events (default 100
# million) of PERSONS persons (1 million) over DAYS days (90) into project
# PROJECT (1) of DATA_DIR (default .data/bench100m, kept for the query
# benchmarks; the data lands in its olap/ subdirectory), then report the
# data: counts by event, persons, table sizes, a timed 3-step funnel.
#
#   SEED (1), END (YYYY-MM-DD, default today), CHUNK (rows per statement,
#   default the command's) pass through. FRESH=1 first deletes
#   DATA_DIR/olap. A project that already has events is refused.
#   OPTIMIZE=1 (the default) then merges the tables' parts (timed) and
#   reports again, so later benchmarks do not share the machine with
#   background merges; OPTIMIZE=0 leaves the parts as the load wrote them.
#
# Chunk tuning: CHUNKS="2500000 5000000 10000000" RUNS=3 loads EVENTS into
# a fresh temporary directory RUNS times per chunk size (deleted after each
# run) and prints each run's wall time and the median per chunk size.
set -euo pipefail
# lib.sh sets DATA_DIR from INSIGHTD_DATA_DIR; ours is DATA_DIR.
BENCH_DIR=${DATA_DIR:-}
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
BENCH_DIR=${BENCH_DIR:-$ROOT/.data/bench100m}
EVENTS=${EVENTS:-100000000}
PERSONS=${PERSONS:-1000000}
DAYS=${DAYS:-90}
PROJECT=${PROJECT:-1}
SEED=${SEED:-1}
export INSIGHTD_CHDB_LIB=${INSIGHTD_CHDB_LIB:-$ROOT/.deps/chdb/libchdb.so}
unset INSIGHTD_DATA_DIR

step "building insightd"
go build -o bin/insightd ./cmd/insightd
args=(--project "$PROJECT" --events "$EVENTS" --persons "$PERSONS" --days "$DAYS" --seed "$SEED")
[ -n "${END:-}" ] && args+=(--end "$END")

# timed runs one load and prints its wall and CPU (user + system) seconds;
# it keeps the command's summary in $dir.summary.json and its log, with
# /usr/bin/time's last line (wall, user, system, peak RSS), in $dir.log.
# CPU seconds say more than wall time on a machine shared with others.
timed() {
  local dir=$1; shift
  /usr/bin/time -f 'time wall %e user %U system %S max_rss_kib %M' bin/insightd load --data-dir "$dir" "${args[@]}" "$@" \
    >"$dir.summary.json" 2>"$dir.log" || { tail -n 20 "$dir.log" >&2; die "load failed"; }
  tail -n 1 "$dir.log" | awk '{print $3, $5 + $7}'
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

if [ -n "${CHUNKS:-}" ]; then
  RUNS=${RUNS:-3}
  echo "| chunk | wall s per run | CPU s per run | median wall s | median CPU s | events/s (median wall) |"
  echo "|---|---|---|---|---|---|"
  for chunk in $CHUNKS; do
    walls=() cpus=()
    for r in $(seq 1 "$RUNS"); do
      step "chunk $chunk: run $r of $RUNS, loading $EVENTS events"
      dir=$(mktemp -d "$ROOT/.data/bench-load.XXXXXX")
      read -r wall cpu < <(timed "$dir" --chunk "$chunk")
      walls+=("$wall") cpus+=("$cpu")
      rm -rf "$dir" "$dir.summary.json" "$dir.log"
    done
    mw=$(printf '%s\n' "${walls[@]}" | median)
    mc=$(printf '%s\n' "${cpus[@]}" | median)
    printf '| %s | %s| %s| %.1f | %.1f | %.0f |\n' "$chunk" "$(printf '%.1f ' "${walls[@]}")" "$(printf '%.1f ' "${cpus[@]}")" \
      "$mw" "$mc" "$(echo "$EVENTS / $mw" | bc -l)"
  done
  exit 0
fi

[ "${FRESH:-0}" = 1 ] && { step "deleting $BENCH_DIR/olap"; rm -rf "$BENCH_DIR/olap"; }
mkdir -p "$BENCH_DIR"
[ -n "${CHUNK:-}" ] && args+=(--chunk "$CHUNK")
step "loading $EVENTS events, $PERSONS persons, $DAYS days into $BENCH_DIR (project $PROJECT)"
read -r secs cpu < <(timed "$BENCH_DIR")
echo "wall seconds: $secs, CPU seconds: $cpu"
echo "events/s: $(echo "$EVENTS / $secs" | bc)"
tail -n 1 "$BENCH_DIR.log"
echo "summary: $(cat "$BENCH_DIR.summary.json")"
step "report (a new process: background merges resume while it runs)"
bin/insightd load --data-dir "$BENCH_DIR" --project "$PROJECT" --report 2>/dev/null
if [ "${OPTIMIZE:-1}" = 1 ]; then
  step "optimize (OPTIMIZE TABLE ... FINAL), then report again"
  bin/insightd load --data-dir "$BENCH_DIR" --project "$PROJECT" --optimize --report 2>/dev/null
fi
