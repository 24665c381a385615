#!/usr/bin/env bash
# Audit benchmark: packages the 200 MB benchmark ARC in full mode (every record and bytestream
# listed), then times `webaip audit` and `webaip audit --deep` (best of 3) next to the floor of
# decompressing and hashing the same container with standard tools (`gzip -dc | sha512sum`, a
# two-process pipeline that uses both cores), and prints the ratios. Target (issue 7): --deep at
# no less than 80 % of the floor's throughput. Peak RSS is printed where GNU time is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
mkdir -p bench/work
arc=bench/work/IAH-20240315103000-00000-bench-200M.arc.gz
if [ ! -f "$arc" ]; then
  python3 scripts/gen_arc.py bench "$arc.tmp" --size 200M
  mv "$arc.tmp" "$arc"
fi
pkg=bench/work/audit-package
./target/release/webaip package --quiet --force --no-virus-check --mode full --out "$pkg" "$arc" >/dev/null
container=$(ls "$pkg"/content/*.warc.gz)
best() { # best wall time in ms of three runs of "$@"
  local b=999999999 s e
  for _ in 1 2 3; do
    s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N)
    b=$(( (e - s) / 1000000 < b ? (e - s) / 1000000 : b ))
  done
  echo "$b"
}
floor() { gzip -dc "$container" | sha512sum; }
audit_ms=$(best ./target/release/webaip audit --quiet "$pkg")
deep_ms=$(best ./target/release/webaip audit --quiet --deep "$pkg")
floor_ms=$(best floor)
mb=$(( $(stat -c %s "$container") / 1000000 ))
echo "container: $mb MB compressed"
echo "webaip audit:            $audit_ms ms ($(( mb * 1000 / audit_ms )) MB/s)"
echo "webaip audit --deep:     $deep_ms ms ($(( mb * 1000 / deep_ms )) MB/s)"
echo "gzip -dc | sha512sum:    $floor_ms ms ($(( mb * 1000 / floor_ms )) MB/s)"
awk -v a="$audit_ms" -v f="$floor_ms" 'BEGIN { printf "audit / floor time:        %.2fx (throughput %.0f%% of the floor)\n", a / f, 100 * f / a }'
awk -v a="$deep_ms" -v f="$floor_ms" 'BEGIN { printf "audit --deep / floor time: %.2fx (throughput %.0f%% of the floor; target >= 80%%)\n", a / f, 100 * f / a }'
if [ -x /usr/bin/time ]; then
  rss=$( { /usr/bin/time -f "%M" ./target/release/webaip audit --quiet --deep "$pkg" >/dev/null; } 2>&1 | tail -1)
  echo "audit --deep peak RSS:   $(( rss / 1024 )) MB"
fi
