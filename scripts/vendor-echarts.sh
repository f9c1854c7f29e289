#!/usr/bin/env bash
# Vendors Apache ECharts for the web console (api/console): fetches the
# pinned release from npm, checks it, and writes its minified build
# gzipped (reproducibly: gzip -n) to api/console/vendor/, where go:embed
# takes it. The output is committed, so building insightd needs no npm;
# run this only to change the version (then update the pins here and in
# api/console_test.go).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ECHARTS_VERSION=5.6.0
ECHARTS_TARBALL_SHA256=e1b82487dd7f8d9f0438eec1f1433051148e0095ac7a15d4db890afda45cf610
ECHARTS_MIN_SHA256=bf4a223524e40b77c304bec67e1222cf551f14880cf42c69dc046558e11c07b1

command -v npm >/dev/null 2>&1 || die "npm is needed to fetch echarts: install Node.js and npm"
out=$ROOT/api/console/vendor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log "fetching echarts $ECHARTS_VERSION"
(cd "$tmp" && npm pack --silent "echarts@$ECHARTS_VERSION" >/dev/null)
echo "$ECHARTS_TARBALL_SHA256  $tmp/echarts-$ECHARTS_VERSION.tgz" | sha256sum -c --quiet - || die "checksum mismatch for the echarts package"
tar -xzf "$tmp/echarts-$ECHARTS_VERSION.tgz" -C "$tmp" package/dist/echarts.min.js package/LICENSE
echo "$ECHARTS_MIN_SHA256  $tmp/package/dist/echarts.min.js" | sha256sum -c --quiet - || die "checksum mismatch for echarts.min.js"
mkdir -p "$out"
rm -f "$out"/echarts-*.min.js.gz
gzip -9 -n -c "$tmp/package/dist/echarts.min.js" >"$out/echarts-$ECHARTS_VERSION.min.js.gz"
cp "$tmp/package/LICENSE" "$out/ECHARTS_LICENSE.txt"
log "wrote $out/echarts-$ECHARTS_VERSION.min.js.gz ($(wc -c <"$out/echarts-$ECHARTS_VERSION.min.js.gz") bytes)"
