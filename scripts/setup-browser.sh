#!/usr/bin/env bash
# ReplayWeb.page and headless Chromium for the WACZ replay test (tests/export_wacz/replay.py),
# idempotently (run as root on Debian):
#   - Debian's chromium, and node/npm when missing;
#   - ReplayWeb.page 2.5.3 as its published npm tarball (the built app: index.html, ui.js,
#     sw.js; `npm install replaywebpage` fails on a dependency version the registry lacks) and
#     http-server 14 (serves HTTP Range requests, which ReplayWeb.page reads a WACZ with), both
#     in .browser/ (not in the repository).
# Re-running it on a machine that has everything does nothing but check.
set -euo pipefail
cd "$(dirname "$0")/.."

RWP_VERSION=2.5.3
HTTP_SERVER_VERSION=14.1.1

command -v chromium >/dev/null || bash scripts/apt-install.sh chromium
command -v npm >/dev/null || bash scripts/apt-install.sh nodejs npm

mkdir -p .browser
cd .browser
if [ ! -f "replaywebpage/sw.js" ] || ! grep -q "\"version\": \"$RWP_VERSION\"" replaywebpage/package.json 2>/dev/null; then
  echo "setup-browser: fetching replaywebpage@$RWP_VERSION" >&2
  rm -rf replaywebpage package "replaywebpage-$RWP_VERSION.tgz"
  npm pack -q "replaywebpage@$RWP_VERSION" >/dev/null
  tar xzf "replaywebpage-$RWP_VERSION.tgz"
  mv package replaywebpage
  rm -f "replaywebpage-$RWP_VERSION.tgz"
fi
[ -f package.json ] || echo '{"private": true}' > package.json
if [ ! -x node_modules/.bin/http-server ]; then
  echo "setup-browser: installing http-server@$HTTP_SERVER_VERSION" >&2
  npm install -q --no-audit --no-fund "http-server@$HTTP_SERVER_VERSION" >/dev/null
fi
test -f replaywebpage/index.html && test -f replaywebpage/sw.js && test -f replaywebpage/ui.js
command -v chromium >/dev/null
