#!/usr/bin/env bash
# WACZ export benchmark: the 200 MB benchmark ARC (HTML-heavy) and an 8 MB crawl followed by one
# 50 MB record (media-heavy) packaged once each (bench/work/export-pkg, export-media-pkg; again
# when a package's METS states no SHA-256, as packages made before did), then `webaip export
# wacz` of each against `cp` of its bytes, against hashing the same bytes (sha256sum, sha512sum,
# openssl dgst) and against py-wacz's `wacz create --detect-pages`, in the same run
# (bench/export_bench.py prints the table and the ratio to sha256sum, the target's).
# Options go to export_bench.py (--no-peer, --runs N, --baseline PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-test-env.sh
cargo build --release --quiet
html=bench/work/IAH-20240315103000-00000-bench-200M.arc.gz
media=bench/work/IAH-20240315103000-00001-large-8M-50M.arc.gz
[ -f "$html" ] || python3 -c 'import sys; sys.path.insert(0, "bench"); import benchlib; benchlib.ensure_arc("200M")'
[ -f "$media" ] || python3 scripts/gen_arc.py large "$media" --size 8M --record-size 50M
for pair in "export-pkg:$html" "export-media-pkg:$media"; do
  pkg=bench/work/${pair%%:*}
  arc=${pair#*:}
  if ! grep -q '>SHA-256<' "$pkg/METS.xml" 2>/dev/null; then
    ./target/release/webaip package -q --no-virus-check --force --out "$pkg" "$arc"
  fi
  python3 bench/export_bench.py "$pkg" "$@"
done
