#!/usr/bin/env bash
# make bench-entities: actions and cohorts on the loaded 100-million-event
# project (benchmarks/entityload): a trend and a 3-step funnel of actions
# of two steps next to plain events, a trend filtered by a cohort of about
# 100 000 persons (static, then by property) next to the equivalent inline
# person filter, and the time to recalculate that property cohort. Every
# analysis end to end over HTTP with refresh=true. Settings (BENCH_DIR,
# RUNS, DAYS, END, PROJECT): scripts/bench-analysis.sh.
exec "$(dirname "$0")/bench-analysis.sh" entityload
