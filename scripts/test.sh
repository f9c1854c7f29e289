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
