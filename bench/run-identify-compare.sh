#!/usr/bin/env bash
# `webaip identify --csv` beside siegfried (pygfried, or sf when installed) on the same files:
# agreement where siegfried names one PUID by a byte or container match, files per CPU-second
# of each and the ratio, webaip's peak RSS (bench/identify_bench.py says how each is measured).
#   bash bench/run-identify-compare.sh [FOLDER_OR_ZIP...] [--payloads-of ARCHIVE...]
# Without arguments: the corpus's mirror ZIP (../shared/corpus/mirror) and the payloads of every
# WARC and ARC file of ../shared/corpus. WEBAIP_BENCH_PROFILE=ci uses the test suite's build.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${WEBAIP_ORACLE_PYTHON:-.venv/bin/python}
if ! "$py" -c 'import warcio, pygfried' 2>/dev/null; then bash scripts/setup-test-env.sh; fi
profile=${WEBAIP_BENCH_PROFILE:-release}
cargo build --profile "$profile" --quiet
mkdir -p bench/work
if [ $# -eq 0 ]; then
  set -- ../shared/corpus/mirror/*.zip --payloads-of ../shared/corpus/warc/* ../shared/corpus/arc/*
fi
pin=()
if command -v taskset >/dev/null; then pin=(taskset -c 0); fi
exec "${pin[@]}" "$py" bench/identify_bench.py --webaip "target/$profile/webaip" "$@"
