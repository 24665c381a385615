#!/usr/bin/env bash
# Benchmarks webaip against its peers (warcio, warctools) on generated data; see
# bench/migrate_bench.py for what is measured. Needs about 2.5 GB of free disk in bench/work.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-test-env.sh
cargo build --release --quiet
exec .venv/bin/python bench/migrate_bench.py "$@"
