#!/usr/bin/env bash
# Ingest benchmark (issue 27): packages the 200 MB benchmark ARC (minimal mode, as curators
# submit), then times `webaip ingest` of it (deep audit, PRONOM identification of the described
# bytestreams, the AIP's METS, hard links; best of 3, each into a fresh --out) next to the floor
# of inflating and hashing the same container with standard tools (`gzip -dc | sha512sum`, a
# two-process pipeline that uses both cores), in the same run. Target: ingest at no less than
# 80 % of the floor's throughput. Prints what the AIP adds to the submission's bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
mkdir -p bench/work
arc=bench/work/IAH-20240315103000-00000-bench-200M.arc.gz
if [ ! -f "$arc" ]; then
  python3 scripts/gen_arc.py bench "$arc.tmp" --size 200M
  mv "$arc.tmp" "$arc"
fi
mode=${1:-minimal}
pkg=bench/work/ingest-ssip-$mode
./target/release/webaip package --quiet --force --no-virus-check --mode "$mode" --out "$pkg" "$arc" >/dev/null
container=$(ls "$pkg"/content/*.warc.gz)
out=bench/work/ingest-aips
best() { # best wall time in ms of three runs of "$@"
  local b=999999999 s e
  for _ in 1 2 3; do
    rm -rf "$out" "$out.floor"
    s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N)
    b=$(( (e - s) / 1000000 < b ? (e - s) / 1000000 : b ))
  done
  echo "$b"
}
floor() { gzip -dc "$container" | sha512sum; }
ingest_ms=$(best ./target/release/webaip ingest --quiet "$pkg" --out "$out")
aip=$out/$(basename "$pkg")
added=$(( $(stat -c %s "$aip/METS.xml") + $(stat -c %s "$aip/manifest-sha512.txt") ))
floor_ms=$(best floor)
mb=$(( $(stat -c %s "$container") / 1000000 ))
ssip_bytes=$(du -sb --apparent-size "$pkg" | cut -f1)
echo "submission ($mode mode): container $mb MB compressed, $ssip_bytes bytes in all"
echo "webaip ingest:           $ingest_ms ms ($(( mb * 1000 / ingest_ms )) MB/s)"
echo "gzip -dc | sha512sum:    $floor_ms ms ($(( mb * 1000 / floor_ms )) MB/s)"
awk -v a="$ingest_ms" -v f="$floor_ms" 'BEGIN { printf "ingest / floor time:     %.2fx (throughput %.0f%% of the floor; target >= 80%%)\n", a / f, 100 * f / a }'
awk -v a="$added" -v s="$ssip_bytes" 'BEGIN { printf "the AIP adds:            %d bytes (METS and manifest), %.3f%% of the submission\n", a, 100 * a / s }'
if [ -x /usr/bin/time ]; then
  rm -rf "$out"
  rss=$( { /usr/bin/time -f "%M" ./target/release/webaip ingest --quiet "$pkg" --out "$out" >/dev/null; } 2>&1 | tail -1)
  echo "ingest peak RSS:         $(( rss / 1024 )) MB"
fi
