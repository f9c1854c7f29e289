#!/usr/bin/env bash
# make bench-trends: trends on the loaded 100-million-event project, timed
# end to end over HTTP (refresh=true: no result cache), as the generated
# statement straight on the engine, and as hand-written ClickHouse SQL, in
# one run (benchmarks/trendload). Settings (BENCH_DIR, RUNS, DAYS, END,
# PROJECT): scripts/bench-analysis.sh.
exec "$(dirname "$0")/bench-analysis.sh" trendload
