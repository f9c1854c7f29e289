#!/usr/bin/env bash
# make run: set up, start PostgreSQL and the embedded ClickHouse, migrate,
# bootstrap a default organization/project/key on first run, serve.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
BIN=$ROOT/bin/insightd
PG_DIR=$DATA_DIR/postgres

export INSIGHTD_DATA_DIR=$DATA_DIR
export INSIGHTD_CHDB_LIB=${INSIGHTD_CHDB_LIB:-$ROOT/.deps/chdb/libchdb.so}
export INSIGHTD_ADDR=${INSIGHTD_ADDR:-127.0.0.1:8000}

server_pid=
cleanup() {
  trap - EXIT INT TERM
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -INT "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  pg_stop "$PG_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pg_start "$PG_DIR" insightd
"$BIN" migrate

boot=$DATA_DIR/bootstrap.json
if [ ! -s "$boot" ]; then
  (umask 077; "$BIN" admin bootstrap --email "${INSIGHTD_ADMIN_EMAIL:-admin@localhost}" --org "Default" --project "Default project" >"$boot.tmp")
  mv "$boot.tmp" "$boot"
  log "bootstrapped a default organization, project and personal API key (kept in $boot):"
else
  log "default organization, project and personal API key (from $boot):"
fi
cat "$boot"
echo
log "serving on http://$INSIGHTD_ADDR (Ctrl-C stops the server and PostgreSQL)"
"$BIN" serve --migrate=false &
server_pid=$!
wait "$server_pid"
