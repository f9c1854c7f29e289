#!/usr/bin/env bash
# make test: the same set-up as make run, then every test against the real
# services (a private PostgreSQL cluster kept apart from make run's, and the
# embedded ClickHouse).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
PG_DIR=$DATA_DIR/postgres-test

export INSIGHTD_CHDB_LIB=${INSIGHTD_CHDB_LIB:-$ROOT/.deps/chdb/libchdb.so}
trap 'pg_stop "$PG_DIR"' EXIT
PG_FSYNC=off pg_start "$PG_DIR" insightd_test
go vet ./...
go test -count=1 -timeout 12m ${GOTESTFLAGS:-} ./...

# The client flow end to end with curl, against a real server on a fresh
# database and data directory.
log "end-to-end: the projects flow with curl against insightd serve"
smoke_dir=$(mktemp -d)
server=
stop_smoke() {
  [ -n "$server" ] && kill -INT "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  rm -rf "$smoke_dir"
  pg_stop "$PG_DIR"
}
trap stop_smoke EXIT
psql=$(command -v psql || echo "$(pg_bin_dir)/psql")
"$psql" "$DATABASE_URL" -qc "DROP DATABASE IF EXISTS insightd_smoke" -c "CREATE DATABASE insightd_smoke" >/dev/null
export DATABASE_URL=$(echo "$DATABASE_URL" | sed -E 's#^([^?]*/)[^/?]*(\?.*)?$#\1insightd_smoke\2#')
export INSIGHTD_DATA_DIR=$smoke_dir INSIGHTD_ADDR=127.0.0.1:$(free_port 18000)
go build -o "$smoke_dir/insightd" ./cmd/insightd
"$smoke_dir/insightd" migrate 2>/dev/null
key=$("$smoke_dir/insightd" admin bootstrap --email smoke@example.com --org Smoke | sed -E 's/.*"personal_api_key":"([^"]+)".*/\1/')
"$smoke_dir/insightd" serve --migrate=false 2>"$smoke_dir/serve.log" &
server=$!
for _ in $(seq 1 100); do curl -sf "http://$INSIGHTD_ADDR/_ready" >/dev/null && break; sleep 0.1; done
scripts/smoke-projects.sh "http://$INSIGHTD_ADDR" "$key" || { tail -n 20 "$smoke_dir/serve.log" >&2; exit 1; }
scripts/smoke-insights.sh "http://$INSIGHTD_ADDR" "$key" || { tail -n 20 "$smoke_dir/serve.log" >&2; exit 1; }
scripts/smoke-capture.sh "http://$INSIGHTD_ADDR" "$key" || { tail -n 20 "$smoke_dir/serve.log" >&2; exit 1; }
