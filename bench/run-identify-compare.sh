#!/usr/bin/env bash
# `webaip identify --csv` beside siegfried (pygfried, or sf when installed) on the same files:
# agreement where siegfried names one PUID by a byte or container match, files per CPU-second
# of each and the ratio, webaip's peak RSS (bench/identify_bench.py says how each is measured).
#   bash bench/run-identify-compare.sh [FOLDER_OR_ZIP...] [--payloads-of ARCHIVE...]
# Without arguments: the corpus's mirror ZIP (../shared/corpus/mirror) and the payloads of every
# WARC and ARC file of ../shared/corpus. WEBAIP_BENCH_PROFILE=ci uses the test suite's build.
#
# siegfried runs with the signature files webaip ships: pygfried 0.15.1 bundles siegfried
# 1.11.4 with DROID V122 and container-signature-20260119 (installed into
# .venv/siegfried-same-signatures; bump it with data/pronom/). The test set-up's pygfried, the
# newest, has newer signature files: WEBAIP_SIEGFRIED=newest compares with that one instead.
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
same=()
if [ "${WEBAIP_SIEGFRIED:-same}" = same ]; then
  dir=.venv/siegfried-same-signatures
  if ! PYTHONPATH=$dir "$py" -c 'import pygfried; assert pygfried.version() == "1.11.4"' 2>/dev/null; then
    "$py" -m pip install -q --disable-pip-version-check --target "$dir" pygfried==0.15.1
  fi
  # The versions are checked, not assumed: siegfried's must be those webaip names.
  ours=$("target/$profile/webaip" --version | sed -n 's/.*DROID signature file V\([0-9]*\).*container signature file \([0-9-]*\).*/V\1 \2/p')
  theirs=$(PYTHONPATH=$dir "$py" -c 'import pygfried; print(pygfried.identify("README.md", detailed=True)["identifiers"][0]["details"])')
  read -r v date <<<"$ours"
  case "$theirs" in
    *"_${v}.xml"*"container-signature-${date//-/}.xml"*) ;;
    *) echo "siegfried's signature files ($theirs) are not webaip's ($ours)" >&2; exit 1 ;;
  esac
  same=(--siegfried-path "$dir")
fi
exec "${pin[@]}" "$py" bench/identify_bench.py --webaip "target/$profile/webaip" "${same[@]}" "$@"
