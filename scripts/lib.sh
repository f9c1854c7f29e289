# Shared shell functions for insightd's setup, run and test scripts.
# Sourced, not executed. Every install step lives here so a fresh Debian
# machine (Go, Node/npm, root) needs nothing done by hand.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DATA_DIR=${INSIGHTD_DATA_DIR:-$ROOT/.data}

# chDB (ClickHouse as a library), pinned. The tarball checksum is npm's
# sha512 integrity re-expressed as sha256 of the file we verified; the
# library checksum guards the one file we keep.
CHDB_PACKAGE=@chdb/lib-linux-x64-gnu
CHDB_VERSION=26.7.3-stable.1
CHDB_TARBALL_SHA256=c0d32b129e988f2b9a9a31c9141aecf5e1e2453f9a079efc4d36ab8e3f92b2ad
CHDB_LIB_SHA256=36ad4e999882821ef13cf2d0f52c93f48e6ee1b4498b35a201c23ce4b8d15bf5
CHDB_DIR=$ROOT/.deps/chdb

log() { printf '==> %s\n' "$*" >&2; }
# step names the phase a long script (the benchmarks) starts, with the
# time, on stderr: stdout stays the script's result.
step() { printf '==> [%s] %s\n' "$(date -u +%T)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" = 0 ]; }

ensure_go() {
  command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || die "Go is not installed: install Go 1.24 or newer (https://go.dev/dl/)"
  command -v go >/dev/null 2>&1 || export PATH=/usr/local/go/bin:$PATH
}

ensure_curl() {
  command -v curl >/dev/null 2>&1 && return 0
  if is_root && command -v apt-get >/dev/null 2>&1; then
    log "installing curl (Debian package curl)"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null
  else
    die "curl is needed by the end-to-end checks: install it (Debian: sudo apt-get install curl)"
  fi
}

# pg_bin_dir prints the newest installed PostgreSQL server's bin directory.
pg_bin_dir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$d" ] && [ -x "$d/pg_ctl" ] && echo "$d"
}

ensure_postgres() {
  [ -n "${DATABASE_URL:-}" ] && return 0
  [ -n "$(pg_bin_dir)" ] && return 0
  if is_root && command -v apt-get >/dev/null 2>&1; then
    log "installing PostgreSQL (Debian package postgresql)"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    # The package may start its own cluster on 5432; insightd runs a private one.
  else
    die "PostgreSQL server is not installed. Install it (Debian: sudo apt-get install postgresql) or set DATABASE_URL to an existing database."
  fi
  [ -n "$(pg_bin_dir)" ] || die "PostgreSQL was installed but no server binaries were found under /usr/lib/postgresql"
}

# fetch_chdb puts libchdb.so under .deps/chdb, verified, unless it is there already.
fetch_chdb() {
  [ -n "${CLICKHOUSE_URL:-}" ] && return 0
  local stamp="$CHDB_DIR/VERSION"
  if [ -f "$CHDB_DIR/libchdb.so" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$CHDB_VERSION $CHDB_LIB_SHA256" ]; then
    return 0
  fi
  command -v npm >/dev/null 2>&1 || die "npm is needed to fetch chDB ($CHDB_PACKAGE): install Node.js and npm"
  log "fetching chDB $CHDB_VERSION ($CHDB_PACKAGE, ~180 MB)"
  mkdir -p "$CHDB_DIR"
  local tmp
  tmp=$(mktemp -d "$CHDB_DIR/fetch.XXXXXX")
  (cd "$tmp" && npm pack --silent "$CHDB_PACKAGE@$CHDB_VERSION" >/dev/null 2>"$tmp/npm.log") \
    || { cat "$tmp/npm.log" >&2; rm -rf "$tmp"; die "npm pack $CHDB_PACKAGE@$CHDB_VERSION failed"; }
  local tgz
  tgz=$(ls "$tmp"/*.tgz)
  echo "$CHDB_TARBALL_SHA256  $tgz" | sha256sum -c --quiet - || { rm -rf "$tmp"; die "checksum mismatch for the chDB package"; }
  tar -xzf "$tgz" -C "$tmp" package/libchdb.so
  echo "$CHDB_LIB_SHA256  $tmp/package/libchdb.so" | sha256sum -c --quiet - || { rm -rf "$tmp"; die "checksum mismatch for libchdb.so"; }
  mv "$tmp/package/libchdb.so" "$CHDB_DIR/libchdb.so"
  rm -rf "$tmp"
  echo "$CHDB_VERSION $CHDB_LIB_SHA256" >"$stamp"
}

# The official PostHog Node SDK for the client tests (api/sdk_test.go),
# pinned by scripts/sdk/node/package-lock.json and installed with npm ci
# into scripts/sdk/node/node_modules (ignored by git) when the lock changed.
NODE_SDK_DIR=$ROOT/scripts/sdk/node
install_node_sdk() {
  command -v node >/dev/null 2>&1 || die "node is needed by the client tests: install Node.js and npm"
  command -v npm >/dev/null 2>&1 || die "npm is needed to install the PostHog Node SDK: install Node.js and npm"
  local stamp="$NODE_SDK_DIR/node_modules/.insightd-lock"
  local want
  want=$(sha256sum "$NODE_SDK_DIR/package-lock.json" | cut -c1-64)
  [ -d "$NODE_SDK_DIR/node_modules/posthog-node" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && return 0
  log "installing the PostHog Node SDK for the client tests (npm ci in scripts/sdk/node)"
  (cd "$NODE_SDK_DIR" && npm ci --no-audit --no-fund --silent >/dev/null 2>"$NODE_SDK_DIR/npm.log") \
    || { cat "$NODE_SDK_DIR/npm.log" >&2; die "npm ci in scripts/sdk/node failed"; }
  rm -f "$NODE_SDK_DIR/npm.log"
  echo "$want" >"$stamp"
}

free_port() {
  local p
  for p in $(seq "$1" $(($1 + 200))); do
    (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
  done
  die "no free port from $1"
}

# as_pg runs a command as the postgres system user when we are root
# (PostgreSQL refuses to run as root), else as ourselves.
as_pg() {
  if is_root; then runuser -u postgres -- "$@"; else "$@"; fi
}

# pg_start starts (or reuses) a private cluster in $1 and exports DATABASE_URL
# for database $2. It sets PG_STARTED=1 when this call started the server.
pg_start() {
  local dir=$1 db=$2 bin port
  PG_STARTED=0
  if [ -n "${DATABASE_URL:-}" ]; then return 0; fi
  bin=$(pg_bin_dir)
  mkdir -p "$(dirname "$dir")"
  if [ ! -f "$dir/PG_VERSION" ]; then
    mkdir -p "$dir"
    if is_root; then
      chown postgres: "$dir"
      # The postgres user must be able to reach the data directory; a clone
      # under a private home directory may not allow that, so keep the
      # cluster in a world-traversable place and link it here.
      if ! runuser -u postgres -- test -w "$dir"; then
        local alt="/var/tmp/insightd-$(echo "$dir" | sha256sum | cut -c1-12)"
        log "postgres cannot reach $dir; keeping the cluster in $alt"
        rm -rf "$dir"; mkdir -p "$alt"; chown postgres: "$alt"; chmod 700 "$alt"
        ln -s "$alt" "$dir"
      fi
    fi
    log "creating a PostgreSQL cluster in $dir"
    as_pg "$bin/initdb" -D "$dir" -U insightd --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null \
      || as_pg "$bin/initdb" -D "$dir" -U insightd --auth=trust -E UTF8 --locale=C >/dev/null
  fi
  if as_pg "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    port=$(cat "$dir.port")
  else
    port=$(cat "$dir.port" 2>/dev/null || true)
    if [ -z "$port" ] || (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      port=$(free_port 54320)
    fi
    echo "$port" >"$dir.port"
    log "starting PostgreSQL on 127.0.0.1:$port"
    as_pg "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=${PG_FSYNC:-on}" start >/dev/null \
      || { tail -n 20 "$dir/server.log" >&2; die "PostgreSQL did not start"; }
    PG_STARTED=1
  fi
  if ! as_pg "$bin/psql" -h 127.0.0.1 -p "$port" -U insightd -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname='$db'" | grep -q 1; then
    as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U insightd "$db"
  fi
  export DATABASE_URL="postgres://insightd@127.0.0.1:$port/$db?sslmode=disable"
}

pg_stop() {
  local dir=$1
  [ "${PG_STARTED:-0}" = 1 ] || return 0
  log "stopping PostgreSQL"
  as_pg "$(pg_bin_dir)/pg_ctl" -D "$dir" -m fast -w stop >/dev/null || true
}

# ensure_chromium installs Debian's chromium for the console's end-to-end
# test (api/console_e2e_test.go) when missing and running as root; without
# it that test skips.
ensure_chromium() {
  command -v chromium >/dev/null 2>&1 && return 0
  if is_root && command -v apt-get >/dev/null 2>&1; then
    log "installing Chromium for the console's browser tests (Debian package chromium)"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    log "chromium is not installed: the console's browser test will skip (Debian: sudo apt-get install chromium)"
  fi
}
