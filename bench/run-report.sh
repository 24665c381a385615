#!/usr/bin/env bash
# `report` beside `index` on a package of the generated crawl: index, report --index (METS,
# logs and that index; no payload read) and report without an index (the containers' records
# read), in turns, best of 3, pinned to 2 cores; wall, CPU and peak RSS and the ratios to
# index (bench/report_bench.py).
#
#   bash bench/run-report.sh [--size 200M] [--runs N] [--cores N] [--profile release|ci]
#
# With --collection: the report of a collection of copies of one small package (1,000 and
# 10,000 of them, or --counts), given as a batch journal and as folders
# (bench/report_collection_bench.py).
#
#   bash bench/run-report.sh --collection [--counts 1000,10000] [--runs N] [--cores N]
#
# With --hostile: the peak memory of `validate` and `report --validate` of a METS whose
# logical divs have DMDIDs of 4,000,000 tokens (--tokens), in turns with --base BINARY
# (bench/report_hostile_mets.py).
#
#   bash bench/run-report.sh --hostile [--base BINARY] [--tokens N] [--runs N]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=release
script=bench/report_bench.py
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=$2; shift 2 ;;
    --collection) script=bench/report_collection_bench.py; shift ;;
    --hostile) script=bench/report_hostile_mets.py; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
cargo build --quiet --profile "$profile" --features test-hooks --bin webaip
exec python3 "$script" --bin "target/$profile/webaip" "${args[@]}"
