#!/usr/bin/env bash
# The main job on the committed samples: the sample Heritrix 1.x crawl (samples/heritrix-job)
# with its curator metadata becomes a submission package in target/samples-package/, every
# payload scanned by a real ClamAV daemon (started by scripts/clamd-local.sh); the METS is
# validated against the official schemas (built into webaip), and the package is audited
# (--deep), then exported as a WACZ (target/samples-package.wacz).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-build-env.sh
eval "$(bash scripts/clamd-local.sh | grep '^WEBAIP_CLAMD=')"
export WEBAIP_CLAMD
cargo build --release --quiet
./target/release/webaip package --force \
  --metadata samples/heritrix-job.metadata.toml \
  --out target/samples-package samples/heritrix-job
./target/release/webaip validate target/samples-package/METS.xml | tail -2
# And the package as preservation staff would check it later: every file, record, bytestream
# and WARC digest against the METS.
./target/release/webaip audit --deep target/samples-package | tail -1
# And its access copy: a WACZ that ReplayWeb.page opens in a browser.
./target/release/webaip export wacz --quiet target/samples-package -o target/samples-package.wacz | tail -1
