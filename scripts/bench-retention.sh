#!/usr/bin/env bash
# make bench-retention: retention, lifecycle and stickiness on the loaded
# 100-million-event project, each over HTTP (refresh=true: no result
# cache), as the generated statement and as hand-written SQL, both run on
# the engine with their results discarded, in one interleaved run
# (benchmarks/retentionload). The other settings (BENCH_DIR, RUNS, DAYS,
# END, PROJECT): scripts/bench-analysis.sh. RUNS defaults to 7 here.
export RUNS=${RUNS:-7}
exec "$(dirname "$0")/bench-analysis.sh" retentionload
