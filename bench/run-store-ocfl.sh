#!/usr/bin/env bash
# `store put` to OCFL storage roots on the file system beside a plain copy with fsync of the
# same files (one replica, then two), and `store check --deep` of the two-replica store; the
# package is run-store.sh's (two 90 MB ARCs and 240 small ones, packaged). Best of 3 in turns.
#
#   bash bench/run-store-ocfl.sh [--runs N] [--cores N] [--profile release|ci]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=release
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
cargo build --quiet --profile "$profile" --features test-hooks --bin webaip
bin=target/$profile/webaip
pkg=$(bash bench/store-package.sh "$bin")
exec python3 bench/ocfl_put_bench.py --bin "$bin" --package "$pkg" "${args[@]}"
