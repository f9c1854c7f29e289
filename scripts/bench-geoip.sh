#!/usr/bin/env bash
# What GeoIP at capture costs (benchmarks/geoipload): a server with a GeoIP
# database against one without, same bodies, interleaved rounds, on a
# private PostgreSQL and a fresh embedded ClickHouse, as the ingestion
# benchmark runs. Flags after the script go to geoipload, e.g.
# scripts/bench-geoip.sh -event-ip
PROGRAM=geoipload exec "$(dirname "$0")/bench-ingest.sh" "$@"
