#!/usr/bin/env bash
# Installs what the test suite needs, idempotently, on a new Debian machine (run as root):
#   - xmllint (libxml2-utils): validates every METS against the official schemas;
#   - a Python venv in .venv/ with warcio (the independent WARC reader the tests compare
#     against) and warctools (a peer tool the benchmarks time).
# Re-running it on a machine that has everything does nothing but check.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "setup: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  for attempt in 1 2 3; do
    if $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq &&
      $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${missing[@]}" >/dev/null; then
      return 0
    fi
    echo "setup: apt-get failed (attempt $attempt), retrying" >&2
    sleep 5
  done
  echo "setup: could not install ${missing[*]}" >&2
  return 1
}

apt_install libxml2-utils

PY_PACKAGES=(warcio==1.8.1 warctools==5.0.1)
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  python3 -m venv .venv
fi
if ! .venv/bin/python -c 'import warcio, hanzo.warctools' 2>/dev/null; then
  echo "setup: installing ${PY_PACKAGES[*]} into .venv" >&2
  .venv/bin/pip install -q --disable-pip-version-check "${PY_PACKAGES[@]}"
fi
.venv/bin/python -c 'import warcio, hanzo.warctools' >/dev/null
command -v xmllint >/dev/null
echo "setup: test environment ready (xmllint, .venv with warcio and warctools)" >&2
