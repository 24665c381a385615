#!/usr/bin/env bash
# Index benchmark: `webaip index` against cdxj-indexer, `warcio index` and FastWARC on the
# migrated 200 MB benchmark container (bench/work/IAH-...-bench-200M.warc.gz, made from the
# benchmark ARC by `webaip migrate` when missing), one core each, in the same run; then
# `package --index` against `package` on the benchmark ARC (bench/index_bench.py prints both),
# with the floor of inflating the file (bench/member_floor.py) measured in the same run.
# WEBAIP=PATH times that binary instead of building target/release/webaip.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-test-env.sh
webaip=${WEBAIP:-./target/release/webaip}
[ -n "${WEBAIP:-}" ] || cargo build --release --quiet
arc=bench/work/IAH-20240315103000-00000-bench-200M.arc.gz
warc=bench/work/IAH-20240315103000-00000-bench-200M.warc.gz
[ -f "$arc" ] || python3 -c 'import sys; sys.path.insert(0, "bench"); import benchlib; benchlib.ensure_arc("200M")'
[ -f "$warc" ] || "$webaip" migrate -q -o bench/work "$arc"
python3 bench/index_bench.py "$warc" --arc "$arc" --webaip "$webaip" "$@"
