#!/usr/bin/env bash
# Audit benchmark: packages the 200 MB benchmark ARC in full mode (every record and bytestream
# listed), then times `webaip audit` and `webaip audit --deep` (in turns, best of 3) beside the
# floor of --deep's own work at this machine's primitive rates, measured in the same run by
# bench/member_floor.py on one core: reading the container, inflating every member
# (libdeflate), SHA-512 of the container and of every listed bytestream, SHA-1 of every WARC
# block and payload (OpenSSL's rates). The floor on 2 cores is that sum halved. Target:
# --deep's throughput >= 80 % of the floor's. `gzip -dc | sha512sum` is printed beside, as
# the standard tools' pace. Wall times and CPU seconds (user + system, which another process
# on a busy machine does not inflate) are both printed, with the peak RSS.
# WEBAIP=PATH times that binary instead of building target/release/webaip.
set -euo pipefail
cd "$(dirname "$0")/.."
webaip=${WEBAIP:-./target/release/webaip}
[ -n "${WEBAIP:-}" ] || cargo build --release --quiet
mkdir -p bench/work
arc=bench/work/IAH-20240315103000-00000-bench-200M.arc.gz
if [ ! -f "$arc" ]; then
  python3 scripts/gen_arc.py bench "$arc.tmp" --size 200M
  mv "$arc.tmp" "$arc"
fi
pkg=bench/work/audit-package
"$webaip" package --quiet --force --no-virus-check --mode full --out "$pkg" "$arc" >/dev/null
container=$(ls "$pkg"/content/*.warc.gz)
floor=$(taskset -c 0 python3 bench/member_floor.py "$container" --audit "$pkg/METS.xml")
val() { echo "$floor" | awk -v k="$1" '$1 == k { print $2 }'; }
declare -A wall cpu rss
run() { # run NAME CMD...: keeps the best wall time (ms), its CPU ms and peak RSS (MB)
  local name=$1 out
  shift
  out=$( { /usr/bin/time -f "%e %U %S %M" "$@" >/dev/null; } 2>&1 | tail -1)
  read -r e u s m <<<"$out"
  local ms c
  ms=$(awk -v e="$e" 'BEGIN { printf "%d", e * 1000 }')
  c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%d", (u + s) * 1000 }')
  if [ -z "${wall[$name]:-}" ] || [ "$ms" -lt "${wall[$name]}" ]; then
    wall[$name]=$ms cpu[$name]=$c rss[$name]=$((m / 1024))
  fi
}
for _ in 1 2 3; do
  run audit "$webaip" audit --quiet "$pkg"
  run deep "$webaip" audit --quiet --deep "$pkg"
  run gzip sh -c "gzip -dc '$container' | sha512sum"
done
mb=$(val file_mb)
floor1=$(awk -v s="$(val audit_s)" 'BEGIN { printf "%d", s * 1000 }')
floor2=$((floor1 / 2))
echo "container: $mb MB compressed, $(val inflated_mb) MB inflated"
echo "primitives, one core (MB/s): inflate (libdeflate) $(val inflate_mb_s), SHA-512 $(val sha512_mb_s), SHA-1 $(val sha1_mb_s)"
echo "--deep's work: SHA-512 of $mb + $(val bytestream_mb) MB, SHA-1 of $(val sha1_mb) MB, inflate, read"
echo "floor of --deep's work: $floor1 ms on one core, $floor2 ms on 2 cores"
for name in audit deep gzip; do
  label=$(case $name in audit) echo "webaip audit";; deep) echo "webaip audit --deep";; *) echo "gzip -dc | sha512sum";; esac)
  awk -v n="$label" -v w="${wall[$name]}" -v c="${cpu[$name]}" -v r="${rss[$name]}" -v mb="$mb" \
    'BEGIN { printf "%-22s %6d ms wall (%4.0f MB/s), %6d ms CPU, peak RSS %d MB\n", n, w, mb * 1000 / w, c, r }'
done
awk -v d="${wall[deep]}" -v c="${cpu[deep]}" -v f="$floor2" -v f1="$floor1" 'BEGIN {
  printf "audit --deep throughput: %.0f%% of the floor on 2 cores (target >= 80%%)\n", 100 * f / d
  printf "audit --deep CPU: %.0f%% of the floor'"'"'s (its work on one core / its CPU seconds)\n", 100 * f1 / c }'
