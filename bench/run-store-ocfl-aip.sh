#!/usr/bin/env bash
# What an AIP adds to OCFL replicas that hold its submission: a submission put as version 1,
# then `ingest --store` of it; prints the bytes each replica gained beside the submission's
# bytes (target: under 1 %), what they are (the AIP's METS and manifest, the inventories), and
# the ingest's wall time with and without --store. Two submissions: a harvest as Heritrix
# writes it (four 100 MB ARCs), and the store benchmarks' package (two 90 MB ARCs and 240
# of 80 KB), where the METS, about 12 KB per container, weighs most.
#
#   bash bench/run-store-ocfl-aip.sh [--profile release|ci]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=release
[ "${1:-}" = --profile ] && profile=$2
cargo build --quiet --profile "$profile" --features test-hooks --bin webaip
bin=target/$profile/webaip
work=bench/work/store-ocfl-aip
mkdir -p "$work/job"
if [ ! -f "$work/job/done" ]; then
  for i in 1 2 3 4; do
    python3 scripts/gen_arc.py bench "$work/job/IAH-20240315103000-0000$i-crawler.arc.gz" --size 100M --seed "$((i + 10))"
  done
  touch "$work/job/done"
fi
if [ ! -f "$work/harvest/METS.xml" ]; then
  "$bin" package --quiet --no-virus-check --out "$work/harvest" "$work/job"/*.arc.gz >/dev/null
fi
bytes() { du -sb --apparent-size "$1" | cut -f1; }

# One submission: a fresh two-replica OCFL store, put, then ingest --store; then ingest alone.
measure() {
  local label=$1 pkg=$2 run=$work/run
  rm -rf "$run"
  mkdir -p "$run"
  cat > "$run/store.toml" <<TOML
state = "$PWD/$run/state.sqlite"
[user]
name = "webaip benchmark"
address = "mailto:bench@example.org"
[[replica]]
name = "a"
type = "fs"
layout = "ocfl"
root = "$PWD/$run/a"
[[replica]]
name = "b"
type = "fs"
layout = "ocfl"
root = "$PWD/$run/b"
TOML
  "$bin" store --config "$run/store.toml" put --quiet "$pkg" >/dev/null
  local before_a before_b start stored plain
  before_a=$(bytes "$run/a")
  before_b=$(bytes "$run/b")
  start=$(date +%s.%N)
  "$bin" ingest --quiet --store "$run/store.toml" -o "$run/aips" "$pkg" >/dev/null
  stored=$(echo "$(date +%s.%N) - $start" | bc)
  start=$(date +%s.%N)
  "$bin" ingest --quiet -o "$run/aips-plain" "$pkg" >/dev/null
  plain=$(echo "$(date +%s.%N) - $start" | bc)
  local aip
  aip=$(ls -d "$run"/aips/*)
  python3 - "$label" "$(bytes "$pkg")" "$before_a" "$(bytes "$run/a")" "$before_b" \
    "$(bytes "$run/b")" "$(stat -c %s "$aip/METS.xml")" "$(stat -c %s "$aip/manifest-sha512.txt")" \
    "$(ls "$pkg/content" | wc -l)" "$stored" "$plain" <<'PY'
import sys
label = sys.argv[1]
sub, a0, a1, b0, b1, mets, manifest, containers = map(int, sys.argv[2:10])
stored, plain = float(sys.argv[10]), float(sys.argv[11])
print(f"{label}: {sub / 1e6:.1f} MB, {containers} containers")
for name, before, after in (("a", a0, a1), ("b", b0, b1)):
    gained = after - before
    print(f"  replica {name}: the AIP added {gained:,} bytes = {100 * gained / sub:.3f} % "
          f"of the submission (target < 1 %)")
rest = (a1 - a0) - mets - manifest
print(f"  of which the AIP's METS {mets:,}, its manifest {manifest:,}, inventories {rest:,}")
print(f"  ingest --store {stored:.2f} s, ingest alone {plain:.2f} s")
PY
}
measure "harvest (four 100 MB ARCs)" "$work/harvest"
measure "many small containers" "$(bash bench/store-package.sh "$bin")"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
