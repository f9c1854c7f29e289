#!/usr/bin/env bash
# Installs whatever insightd needs that is missing: PostgreSQL (unless
# DATABASE_URL is set), chDB's libchdb.so (unless CLICKHOUSE_URL is set),
# the PostHog Node SDK the client tests drive insightd with and Chromium
# for the web console's browser test.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ensure_go
ensure_postgres
ensure_curl
fetch_chdb
install_node_sdk
ensure_chromium
