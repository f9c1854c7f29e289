#!/usr/bin/env bash
# make bench-correlation: funnel correlation (events, person properties)
# of the 3-step 30-day funnel on the loaded 100-million-event project,
# over HTTP, as the generated statement and as hand-written SQL, next to
# the funnel alone, in one interleaved run (benchmarks/correlationload).
# The other settings (BENCH_DIR, RUNS, DAYS, END, PROJECT):
# scripts/bench-analysis.sh. RUNS defaults to 7 here.
export RUNS=${RUNS:-7}
exec "$(dirname "$0")/bench-analysis.sh" correlationload
