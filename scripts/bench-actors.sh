#!/usr/bin/env bash
# make bench-actors: an ActorsQuery against the persons/* endpoint
# listing the same number's actors (first pages: a funnel step, a
# retention cohort, a trend day, a correlation item's failures) on the
# loaded 100-million-event project,
# over HTTP, interleaved (benchmarks/actorsload). The other settings
# (BENCH_DIR, RUNS, DAYS, END, PROJECT): scripts/bench-analysis.sh.
export RUNS=${RUNS:-7}
exec "$(dirname "$0")/bench-analysis.sh" actorsload
