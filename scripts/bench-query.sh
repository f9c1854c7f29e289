#!/usr/bin/env bash
# make bench-query: the query API on the loaded 100-million-event project
# (benchmarks/queryload): a TrendsQuery and a FunnelsQuery through POST
# query/ against their legacy requests, and a HogQL daily count against
# its hand-written ClickHouse SQL, in one interleaved run. The other
# settings (BENCH_DIR, RUNS, DAYS, END, PROJECT): scripts/bench-analysis.sh.
# RUNS defaults to 7 here.
export RUNS=${RUNS:-7}
exec "$(dirname "$0")/bench-analysis.sh" queryload
