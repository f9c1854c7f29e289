#!/usr/bin/env bash
# make bench-breakdowns: a 30-day trend of $pageview on the loaded
# 100-million-event project broken down by session duration bins, session
# entry URL, a group property, two event properties and an expression,
# each against the same trend by a plain event property ($browser), all
# over HTTP (refresh=true: no result cache) in one interleaved run
# (benchmarks/breakdownload). Its first run writes one group per $group_0
# key of the loaded events (with an industry property) into the groups
# table; later runs find them. The other settings (BENCH_DIR, RUNS, DAYS,
# END, PROJECT): scripts/bench-analysis.sh. RUNS defaults to 7 here.
# Arguments go to the program (-cases REGEXP times only some cases).
export RUNS=${RUNS:-7}
exec "$(dirname "$0")/bench-analysis.sh" breakdownload "$@"
