#!/usr/bin/env bash
# make bench-persons: the people behind numbers on the loaded
# 100-million-event project, each next to its analysis, over HTTP
# (refresh=true: no result cache), in one interleaved run
# (benchmarks/personload): the first page of step 2 of the 3-step 30-day
# funnel ($pageview, signup, purchase), the full CSV export of its step 1
# (rows/s), the first page of one retention cell and of one trend day.
# The other settings (BENCH_DIR, RUNS, DAYS, END, PROJECT):
# scripts/bench-analysis.sh. RUNS defaults to 7 here.
export RUNS=${RUNS:-7}
exec "$(dirname "$0")/bench-analysis.sh" personload
