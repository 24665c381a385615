#!/usr/bin/env bash
# Installs the given Debian packages if they are missing (idempotent; retries when another
# apt run holds the lock).
set -euo pipefail
missing=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
for attempt in 1 2 3; do
  if $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq &&
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${missing[@]}" >/dev/null; then
    exit 0
  fi
  echo "setup: apt-get failed (attempt $attempt), retrying" >&2
  sleep 5
done
echo "setup: could not install ${missing[*]}" >&2
exit 1
