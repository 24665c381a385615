#!/usr/bin/env bash
# The main job on the committed samples: the sample Heritrix 1.x crawl (samples/heritrix-job)
# with its curator metadata becomes a submission package in target/samples-package/, whose
# METS is validated against the official schemas when ../shared/xsd is present.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-build-env.sh
cargo build --release --quiet
schemas=()
if [ -f ../shared/xsd/mets-bundle.xsd ]; then schemas=(--schemas ../shared/xsd); fi
./target/release/webaip package --force --no-virus-check "${schemas[@]}" \
  --metadata samples/heritrix-job.metadata.toml \
  --out target/samples-package samples/heritrix-job
./target/release/webaip validate "${schemas[@]}" target/samples-package/METS.xml | tail -2
