#!/usr/bin/env bash
# make bench: the Go benchmarks in benchmarks/, repeated for medians.
# BENCH selects benchmarks (default all), COUNT repetitions (default 10).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
export INSIGHTD_CHDB_LIB=${INSIGHTD_CHDB_LIB:-$ROOT/.deps/chdb/libchdb.so}
step "go test -bench ${BENCH:-.} -count ${COUNT:-10} ./benchmarks/..."
go test -run '^$' -bench "${BENCH:-.}" -count "${COUNT:-10}" -benchtime "${BENCHTIME:-1s}" ./benchmarks/... | tee "${OUT:-/dev/stdout}"
