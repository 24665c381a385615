#!/usr/bin/env bash
# Installs rocfl (a Rust OCFL implementation, https://github.com/pwinckles/rocfl) when missing:
# the store tests read webaip's OCFL storage roots with it, an implementation independent of
# webaip's and of ocfl-py. Built with cargo from crates.io (about 3-6 minutes on 2 cores),
# without its S3 feature, into ~/.cargo/bin. Re-running it when rocfl is there only checks.
set -euo pipefail
VERSION=1.7.0
bin=${CARGO_HOME:-$HOME/.cargo}/bin/rocfl
if command -v rocfl >/dev/null 2>&1; then bin=$(command -v rocfl); fi
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "$VERSION"; then exit 0; fi
echo "setup: building rocfl $VERSION with cargo (a few minutes)" >&2
CARGO_TARGET_DIR=${CARGO_TARGET_DIR_ROCFL:-/tmp/webaip-rocfl-build} \
  cargo install rocfl --version "$VERSION" --no-default-features --locked --quiet
"${CARGO_HOME:-$HOME/.cargo}/bin/rocfl" --version >/dev/null
