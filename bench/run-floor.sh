#!/usr/bin/env bash
# The floor benchmark: the per-core rates of webaip's primitives (SHA-512, SHA-1, SHA-256,
# CRC-32, inflate, deflate 6), measured in process through webaip's own code (examples/floor.rs),
# and every long job's throughput beside the floor of its work on the cores given and beside
# its peer tool, paired in the same run (bench/floor_bench.py prints the table and says how each
# floor is modelled). About 10 minutes on 2 cores; --quick for smaller inputs.
#
#   bash bench/run-floor.sh [--cores N] [--quick] [--runs N] [--garage] [--profile release|ci]
#
# --garage starts a Garage cluster (scripts/garage-cluster.sh) for the `store check --deep` row
# and stops it after; without it that row is measured only when a cluster runs.
#
# --profile ci reuses the test suite's build (no link-time optimisation) instead of building
# the release profile.
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
[ -x .venv/bin/warcio ] && [ -x .venv/bin/cdxj-indexer ] || bash scripts/setup-test-env.sh
cargo build --quiet --profile "$profile" --features test-hooks --bin webaip --example floor
exec .venv/bin/python bench/floor_bench.py --bin "target/$profile/webaip" \
  --floor-bin "target/$profile/examples/floor" "${args[@]}"
