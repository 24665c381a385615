#!/usr/bin/env bash
# The main job on the committed samples: migrates the sample Heritrix crawl's ARC files to
# WARC 1.1 and proves every payload byte was conserved. Output in target/samples-out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-build-env.sh
cargo build --release --quiet
out=target/samples-out
mkdir -p "$out"
./target/release/webaip migrate --force --out "$out" --report "$out/migrate-report.json" \
  samples/heritrix-job/arcs/*
echo "WARC files and the JSON report are in $out/"
