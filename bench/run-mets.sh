#!/usr/bin/env bash
# METS benchmark: writes a full-mode METS for 1 000 000 records and minimal-mode METS for 1 000
# and 1 000 000 undescribed records (benches/mets.rs), then times `webaip validate` (schemas and
# profile) on the large one. Needs about 1.3 GB of free disk in bench/work.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-test-env.sh
cargo bench --features test-hooks --bench mets
cargo build --release --quiet
echo "webaip validate on the 1M-record METS:"
start=$(date +%s%N)
./target/release/webaip validate --schemas ../shared/xsd bench/work/METS-full-1M.xml | tail -2
echo "validate wall time: $(( ($(date +%s%N) - start) / 1000000 )) ms"
