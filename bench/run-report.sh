#!/usr/bin/env bash
# `report` beside `index` on a package of the generated crawl: index, report --index (METS,
# logs and that index; no payload read) and report without an index (the containers' records
# read), in turns, best of 3, pinned to 2 cores; wall, CPU and peak RSS and the ratios to
# index (bench/report_bench.py).
#
#   bash bench/run-report.sh [--size 200M] [--runs N] [--cores N] [--profile release|ci]
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
exec python3 bench/report_bench.py --bin "target/$profile/webaip" "${args[@]}"
