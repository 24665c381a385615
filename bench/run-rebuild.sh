#!/usr/bin/env bash
# ARC rebuild data (issue 31): what keeping the way back to the ARC costs `migrate` (time and
# container bytes), and how fast `unmigrate` gives it back, on the 200 MB benchmark ARC, beside
# `migrate --no-rebuild-data` and `gzip -dc` in the same run (bench/rebuild_bench.py).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
arc=bench/work/IAH-20240315103000-00000-bench-200M.arc.gz
[ -f "$arc" ] || python3 -c 'import sys; sys.path.insert(0, "bench"); import benchlib; benchlib.ensure_arc("200M")'
python3 bench/rebuild_bench.py "$arc" "${1:-5}"
