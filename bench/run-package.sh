#!/usr/bin/env bash
# `package` beside `migrate` on the floor benchmark's HTML-heavy crawl, alone: migrate, package
# --identify none and package (default identification), no virus check, in turns, best of 3,
# pinned to 2 cores; wall, CPU and peak RSS of each and the ratios to migrate
# (bench/package_bench.py).
#
#   bash bench/run-package.sh [--size 200M] [--runs N] [--cores N] [--profile release|ci]
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
exec python3 bench/package_bench.py --bin "target/$profile/webaip" "${args[@]}"
