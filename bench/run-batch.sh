#!/usr/bin/env bash
# Batch benchmark (issue 28): N small generated harvests (default 1,000 gzipped ARC files of
# 20 KB to 150 KB, each a crawl of its own: pages, styles, images, redirects) packaged two ways in the
# same run, alternating, best of two each:
#   batch:    one `webaip batch run MANIFEST -j 2` over all of them;
#   separate: one `webaip package` call per harvest, one after the other (what a user's own
#             loop does: each call pays the process start-up and runs alone).
# Both without virus checks and with --deterministic, so the packages are the same bytes (the
# script checks a sample of them). Prints wall times and the ratio. Target: batch at least 1.8x.
# Then the memory budget: peak RSS of `batch run -j 2 --memory 256M` over items with large
# records (three 200 MB single-record ARCs, four 30 MB bench harvests). Target: under 256 MB.
#   bash bench/run-batch.sh [N] [PACKAGE OPTION...]   (e.g. --identify none)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
shift || true
cargo build --release --quiet
bin=$PWD/target/release/webaip
work=bench/work/batch-$n
if [ ! -f "$work/manifest.csv" ]; then
  rm -rf "$work"
  mkdir -p "$work/harvests"
  python3 bench/gen_harvests.py "$work" "$n"
fi
flags=(--no-virus-check --deterministic --quiet "$@")

run_batch() {
  rm -rf "$work/out-batch"
  "$bin" batch run "$work/manifest.csv" --out "$work/out-batch" -j 2 "${flags[@]}" >/dev/null
}
run_separate() {
  rm -rf "$work/out-separate"
  mkdir -p "$work/out-separate"
  for f in "$work"/harvests/*.arc.gz; do
    b=$(basename "$f" .arc.gz)
    "$bin" package "${flags[@]}" --out "$work/out-separate/$b" "$f" >/dev/null
  done
}
ms() { local s e; s=$(date +%s%N); "$@"; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }

best_b=999999999 best_s=999999999
for _ in 1 2; do
  t=$(ms run_batch); best_b=$(( t < best_b ? t : best_b ))
  t=$(ms run_separate); best_s=$(( t < best_s ? t : best_s ))
done
# The same packages either way (a sample of them).
for f in $(ls "$work/harvests" | head -20); do
  b=$(basename "$f" .arc.gz)
  cmp -s "$work/out-batch/$b/METS.xml" "$work/out-separate/$b/METS.xml" ||
    { echo "METS of $b differs between batch and separate calls" >&2; exit 1; }
done
echo "harvests: $n ($(du -sb "$work/harvests" | cut -f1) bytes)"
echo "webaip batch run -j 2:          $best_b ms ($(( n * 1000 / best_b )) harvests/s)"
echo "webaip package, one per call:   $best_s ms ($(( n * 1000 / best_s )) harvests/s)"
awk -v a="$best_s" -v b="$best_b" 'BEGIN { printf "ratio: batch is %.2f times as fast\n", a / b }'

# Memory: items with large records (streamed, never held) beside ordinary ones, two at once.
mem=bench/work/batch-memory
if [ ! -f "$mem/done" ]; then
  rm -rf "$mem"
  mkdir -p "$mem/items"
  for i in 1 2 3; do
    python3 scripts/gen_arc.py single "$mem/items/IAH-20240315103000-0000$i-single.arc.gz" \
      --record-size 200M --seed "$i"
  done
  for i in 4 5 6 7; do
    python3 scripts/gen_arc.py bench "$mem/items/IAH-20240315103000-0000$i-bench.arc.gz" \
      --size 30M --seed "$i"
  done
  touch "$mem/done"
fi
rm -rf "$mem/out"
rss=$(/usr/bin/time -f %M "$bin" batch run "$mem/items" --out "$mem/out" -j 2 --memory 256M \
  "${flags[@]}" 2>&1 >/dev/null | tail -1)
echo "batch -j 2 --memory 256M, 3 x 200 MB records + 4 x 30 MB harvests ($(du -sb "$mem/items" | cut -f1) bytes): peak RSS $(( rss / 1024 )) MB (target: under 256 MB)"
