#!/usr/bin/env bash
# `webaip migrate` of a crawl whose bytes are mostly one large record, at -j 1 and -j 2, beside
# warcio; see bench/large_record_bench.py for what is measured and the targets.
#   bash bench/run-large-record.sh [--size 8M] [--record-size 48M] [--repeat 3]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-test-env.sh
bash scripts/setup-build-env.sh
cargo build --release --quiet
exec .venv/bin/python bench/large_record_bench.py "$@"
