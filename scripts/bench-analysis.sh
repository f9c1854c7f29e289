#!/usr/bin/env bash
# scripts/bench-analysis.sh PROGRAM [ARGS...]: runs an analysis benchmark
# (benchmarks/PROGRAM: trendload, funnelload) on the loaded project, as
# make bench-trends and make bench-funnels do. BENCH_DIR (default
# .data/bench100m, made by make bench-load) must hold project PROJECT (1);
# a fresh private PostgreSQL cluster is made for the run so that
# bootstrapping gives that project id. RUNS (7) rounds, DAYS (30) days
# ending the day before END (default: the data set's own, the last day
# make bench-load wrote as its BENCH_DIR.summary.json says, so counts
# match the results files; else today, UTC); ARGS go to the program.
# Only one process may open the engine's directory: the script refuses to
# start while another one has it open.
set -euo pipefail
PROGRAM=$1
shift
BENCH_DIR=${BENCH_DIR:-}
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
BENCH_DIR=${BENCH_DIR:-$ROOT/.data/bench100m}
RUNS=${RUNS:-7}
DAYS=${DAYS:-30}
PROJECT=${PROJECT:-1}
if [ -z "${END:-}" ] && [ -f "$BENCH_DIR.summary.json" ]; then
  # The summary's end is the first instant after the data: the load's END.
  loaded_end=$(sed -n 's/.*"end":"\([0-9-]*\)T.*/\1/p' "$BENCH_DIR.summary.json")
  [ -n "$loaded_end" ] && END=$(date -u -d "$loaded_end - 1 day" +%F)
fi
END=${END:-$(date -u +%F)}
export INSIGHTD_CHDB_LIB=${INSIGHTD_CHDB_LIB:-$ROOT/.deps/chdb/libchdb.so}
unset INSIGHTD_DATA_DIR DATABASE_URL

[ -d "benchmarks/$PROGRAM" ] || die "no benchmark benchmarks/$PROGRAM"
[ -d "$BENCH_DIR/olap" ] || die "$BENCH_DIR/olap does not exist: run make bench-load first"
if pgrep -f -- "$BENCH_DIR/olap" >/dev/null; then
  pgrep -af -- "$BENCH_DIR/olap" >&2
  die "another process has $BENCH_DIR/olap open; wait for it to finish"
fi

PG_DIR=$(mktemp -d "$ROOT/.data/postgres-bench-$PROGRAM.XXXXXX")
rmdir "$PG_DIR"
cleanup() { step "cleaning up"; pg_stop "$PG_DIR"; rm -rf "$PG_DIR" "$PG_DIR.port"; }
trap cleanup EXIT
step "starting a private PostgreSQL for $PROGRAM"
PG_FSYNC=off pg_start "$PG_DIR" "insightd_bench_$PROGRAM"

step "building benchmarks/$PROGRAM"
go build -o "bin/$PROGRAM" "./benchmarks/$PROGRAM"
echo "machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB, $(uname -sr); data: $(du -sh "$BENCH_DIR/olap" | cut -f1) in $BENCH_DIR/olap"
echo
step "running $PROGRAM: $RUNS rounds, $DAYS days before $END, project $PROJECT of $BENCH_DIR${*:+ ($*)}"
"bin/$PROGRAM" -data-dir "$BENCH_DIR" -chdb-lib "$INSIGHTD_CHDB_LIB" -database-url "$DATABASE_URL" \
  -project "$PROJECT" -runs "$RUNS" -days "$DAYS" -end "$END" "$@"
