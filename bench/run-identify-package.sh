#!/usr/bin/env bash
# The cost of PRONOM identification in `package`: the 200 MB benchmark ARC packaged with
# --identify none, described (the default) and all, no virus check, best of three each,
# alternating; prints wall seconds, peak RSS (GNU time, where installed) and the ratios to none.
#   bash bench/run-identify-package.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/webaip
mkdir -p bench/work
arc=bench/work/IAH-20240315103000-00000-bench-200M.arc.gz
if [ ! -f "$arc" ]; then
  python3 scripts/gen_arc.py bench "$arc.tmp" --size 200M
  mv "$arc.tmp" "$arc"
fi
declare -A best rss
modes=(none described all)
for m in "${modes[@]}"; do best[$m]=999999999; rss[$m]=-; done
for _ in 1 2 3; do
  for m in "${modes[@]}"; do
    pkg=bench/work/identify-$m
    s=$(date +%s%N)
    if [ -x /usr/bin/time ]; then
      r=$( { /usr/bin/time -f '%M' "$bin" package --quiet --force --no-virus-check --identify "$m" --out "$pkg" "$arc" >/dev/null; } 2>&1 | tail -1)
      rss[$m]=$((r / 1024))
    else
      "$bin" package --quiet --force --no-virus-check --identify "$m" --out "$pkg" "$arc" >/dev/null
    fi
    e=$(date +%s%N)
    ms=$(( (e - s) / 1000000 ))
    [ "$ms" -lt "${best[$m]}" ] && best[$m]=$ms
  done
done
for m in "${modes[@]}"; do
  mets=$(stat -c %s bench/work/identify-$m/METS.xml)
  awk -v m="$m" -v t="${best[$m]}" -v n="${best[none]}" -v r="${rss[$m]}" -v x="$mets" \
    'BEGIN { printf "--identify %-9s %6.2f s  %5.2fx  peak RSS %s MB  METS %.1f MB\n", m, t / 1000, t / n, r, x / 1e6 }'
done
