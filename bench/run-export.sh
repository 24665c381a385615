#!/usr/bin/env bash
# WACZ export benchmark: the 200 MB benchmark ARC packaged once (bench/work/export-pkg), then
# `webaip export wacz` of that package against `cp` of its bytes, against hashing the same bytes
# (sha256sum, sha512sum, openssl dgst) and against py-wacz's `wacz create --detect-pages`, in the
# same run (bench/export_bench.py prints the table).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-test-env.sh
cargo build --release --quiet
arc=bench/work/IAH-20240315103000-00000-bench-200M.arc.gz
pkg=bench/work/export-pkg
[ -f "$arc" ] || python3 -c 'import sys; sys.path.insert(0, "bench"); import benchlib; benchlib.ensure_arc("200M")'
[ -f "$pkg/METS.xml" ] || ./target/release/webaip package -q --no-virus-check --force --out "$pkg" "$arc"
python3 bench/export_bench.py "$pkg" "$@"
