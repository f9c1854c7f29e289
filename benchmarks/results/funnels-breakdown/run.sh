#!/usr/bin/env bash
# benchmarks/results/funnels-breakdown/run.sh: times the 3-step funnel
# (0-funnel.json), its $browser breakdown (1-breakdown.json), both as
# BuildFunnel writes them now, and the breakdown edited one way at a
# time, against each other in one run (funnels.md, "what the exact
# attribution costs"). BENCH_DIR (default .data/bench100m, made by
# make bench-load), ROUNDS (7).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$root"
go run ./benchmarks/sqlfiles -write "$out" "$here/0-funnel.json" "$here/1-breakdown.json"

# variant NAME FROM OLD NEW [OLD NEW ...]: FROM with each OLD text
# replaced by NEW (literally; an OLD that is not there stops the run).
variant() {
  local name=$1 from=$2
  shift 2
  cp "$out/$from" "$out/$name"
  cp "$out/${from%.sql}.params.json" "$out/${name%.sql}.params.json"
  while [ $# -gt 0 ]; do
    OLD=$1 NEW=$2 perl -0pi -e '$n = s/\Q$ENV{OLD}\E/$ENV{NEW}/g; die "$ENV{OLD}: not found\n" unless $n' "$out/$name"
    shift 2
  done
}
exact_key='bitOr(bitShiftLeft(toUInt256(toUnixTimestamp64Micro(e.timestamp) + 1), 128), toUInt256(toUInt128(e.uuid))) AS at'
time_key='toUnixTimestamp64Micro(e.timestamp) AS at'
# A cold actor's latest entry by time alone: entries at one microsecond in arbitrary order.
variant 2-cold-ties-by-time-only.sql 1-breakdown.sql "$exact_key" "$time_key"
# A cold actor's value from any entry (wrong: a lower bound).
variant 3-cold-any-entry.sql 2-cold-ties-by-time-only.sql \
  'argMaxIf(bd, at, bitAnd(m, 1) != 0 AND NOT hot)' 'anyIf(bd, bitAnd(m, 1) != 0 AND NOT hot)'
# Values carried as hashes (the answers are hashes: mapping them back is not included).
variant 4-hashed-values.sql 1-breakdown.sql \
  'if(empty(e.mat_browser), {breakdown_null:String}, e.mat_browser) AS bd' 'cityHash64(e.mat_browser) AS bd' \
  'keys[p_1])], {breakdown_null:String})' 'keys[p_1])], 0)' \
  'raw_value, {breakdown_other:String})' 'toString(raw_value), {breakdown_other:String})'
# Both.
variant 5-hashed-values-cold-ties-by-time-only.sql 4-hashed-values.sql "$exact_key" "$time_key"

go run ./benchmarks/sqlfiles -data-dir "${BENCH_DIR:-$root/.data/bench100m}" \
  -chdb-lib "${INSIGHTD_CHDB_LIB:-$root/.deps/chdb/libchdb.so}" -rounds "${ROUNDS:-7}" "$out"/*.sql
