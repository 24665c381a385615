#!/usr/bin/env bash
# `store migrate` of a bucket replica (the 3-node Garage cluster of scripts/garage-cluster.sh;
# WEBAIP_GARAGE_DIR / WEBAIP_GARAGE_PORT choose the cluster) beside a plain server-side copy
# of the same keys by the same client library (benches/store_copy.rs: CopyObject of every key,
# eight at once, nothing else), and beside that copy's read-back (every copy fetched and
# hashed with SHA-512, which a migration that verifies must add). The package is
# run-store.sh's (two 90 MB ARCs and 240 small ones), put to a webaip-layout bucket store under
# a fresh prefix for each run (not timed). Rounds in turns, best of each; the load is printed
# before each round: the machine may be shared.
#
#   bash bench/run-store-migrate-garage.sh [--rounds N] [--profile release|ci]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/garage-common.sh store_copy "$@"
best_mig=999999999 best_copy=999999999 best_read=999999999
for round in $(seq "$rounds"); do
  run=$(date +%s%N)
  echo "round $round: $(uptime | sed 's/.*load/load/')" >&2
  cfg=$(store_toml "$work/mig-$round" webaip "mig-$run/")
  "$bin" store --config "$cfg" --quiet put "$pkg" >/dev/null
  mig_ms=$(ms_of taskset -c 0,1 "$bin" store --config "$cfg" --quiet migrate)
  grep -q 'layout = "ocfl"' "$cfg" || { echo "round $round: the migration did not switch" >&2; exit 1; }
  cfg=$(store_toml "$work/copy-$round" webaip "copy-$run/")
  "$bin" store --config "$cfg" --quiet put "$pkg" >/dev/null
  out=$(taskset -c 0,1 "$client_bin" "copy-$run/" "copied-$run/")
  copy_ms=$(echo "$out" | sed -n 's/^COPY_MS=//p')
  read_ms=$(echo "$out" | sed -n 's/^READ_MS=//p')
  echo "round $round: migrate $mig_ms ms, server-side copy $copy_ms ms, its read-back $read_ms ms" >&2
  best_mig=$(( mig_ms < best_mig ? mig_ms : best_mig ))
  best_copy=$(( copy_ms < best_copy ? copy_ms : best_copy ))
  best_read=$(( read_ms < best_read ? read_ms : best_read ))
done
echo "store migrate (bucket):            $best_mig ms"
echo "plain server-side copy:            $best_copy ms"
echo "copy's read-back with SHA-512:     $best_read ms"
awk -v m="$best_mig" -v c="$best_copy" -v r="$best_read" 'BEGIN {
  printf "migrate / copy: %.2fx; migrate / (copy + read-back): %.2fx\n", m / c, m / (c + r) }'
echo "load after: $(uptime | sed 's/.*load/load/')"
