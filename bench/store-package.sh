#!/usr/bin/env bash
# The store benchmarks' package (once, under bench/work/store/): two 90 MB ARCs and 240 small
# ones, packaged by the webaip binary given, no virus check. Prints the package's folder.
#
#   bash bench/store-package.sh WEBAIP
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1
job=bench/work/store/job
pkg=bench/work/store/package
mkdir -p "$job"
if [ ! -f "$job/done" ]; then
  for i in 1 2; do
    python3 scripts/gen_arc.py bench "$job/IAH-20240315103000-0000$i-large.arc.gz" --size 90M --seed "$i"
  done
  for i in $(seq 100 339); do
    python3 scripts/gen_arc.py bench "$job/IAH-20240315103000-00$i-small.arc.gz" --size 80K --seed "$i"
  done
  touch "$job/done"
fi
if [ ! -f "$pkg/METS.xml" ]; then
  "$bin" package --quiet --no-virus-check --out "$pkg" "$job"/*.arc.gz >/dev/null
fi
echo "$pkg"
