#!/usr/bin/env bash
# make bench-paths: paths on the loaded 100-million-event project, over
# HTTP (refresh=true: no result cache), as the generated statement and as
# hand-written SQL, with the floor (the 7 days' (time, url) pairs grouped
# by person), in one interleaved run (benchmarks/pathload), with each
# statement's peak memory. The other settings (BENCH_DIR, RUNS, DAYS, END,
# PROJECT): scripts/bench-analysis.sh. RUNS defaults to 7 here.
export RUNS=${RUNS:-7}
exec "$(dirname "$0")/bench-analysis.sh" pathload
