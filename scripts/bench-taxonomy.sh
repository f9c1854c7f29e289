#!/usr/bin/env bash
# make bench-taxonomy: event_definitions/ and property_definitions/ on
# the loaded 100-million-event project over HTTP, p99 per round
# (benchmarks/taxonomyload); the first run on a data set loaded before
# migration 0012 times its back-fill. The other settings (BENCH_DIR,
# RUNS, PROJECT): scripts/bench-analysis.sh.
export RUNS=${RUNS:-7}
exec "$(dirname "$0")/bench-analysis.sh" taxonomyload "$@"
