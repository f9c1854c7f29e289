#!/usr/bin/env bash
# make bench-dashboards: 32 clients opening the same 12-tile dashboard
# (trends with breakdowns, funnels, retention; 9 distinct computations) on
# the loaded 100-million-event project, cold then warm, against its
# distinct tiles computed one by one (benchmarks/dashload). CLIENTS (32)
# and WARM (20 retrieves per client) go to the program; the other
# settings (BENCH_DIR, RUNS, DAYS, END, PROJECT): scripts/bench-analysis.sh.
# RUNS defaults to 3 here: each round computes the dashboard twice.
export RUNS=${RUNS:-3}
exec "$(dirname "$0")/bench-analysis.sh" dashload -clients "${CLIENTS:-32}" -warm "${WARM:-20}"
