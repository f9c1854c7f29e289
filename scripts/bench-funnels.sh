#!/usr/bin/env bash
# make bench-funnels: funnels on the loaded 100-million-event project, timed
# end to end over HTTP (refresh=true: no result cache), as the generated
# statement straight on the engine, as the plain windowFunnel query other
# ClickHouse tools run, and as the floor (the same events grouped by
# person), in one run (benchmarks/funnelload). ONLY picks the cases whose
# name contains it; the other settings (BENCH_DIR, RUNS, DAYS, END,
# PROJECT): scripts/bench-analysis.sh.
exec "$(dirname "$0")/bench-analysis.sh" funnelload -only "${ONLY:-}"
