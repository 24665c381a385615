#!/usr/bin/env bash
# `store put` to an OCFL storage root in a bucket of the 3-node Garage cluster
# (scripts/garage-cluster.sh; WEBAIP_GARAGE_DIR / WEBAIP_GARAGE_PORT choose the cluster) beside
# the raw throughput of the same client writing the same bytes to the same bucket
# (benches/store_raw.rs: no audit, no look-before-write, no verification, no state), and
# beside `store put` to a webaip-layout bucket replica. Target: the OCFL put at no less than
# 80 % of raw. The package is run-store.sh's (two 90 MB ARCs and 240 small ones). Rounds in
# turns (raw, OCFL, webaip layout), best of each; every run writes under a fresh prefix, so
# nothing is a no-op. The load is printed before each round: the machine may be shared.
#
#   bash bench/run-store-ocfl-garage.sh [--rounds N] [--profile release|ci]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/garage-common.sh store_raw "$@"
best_raw=999999999 best_ocfl=999999999 best_web=999999999
for round in $(seq "$rounds"); do
  run=$(date +%s%N)
  echo "round $round: $(uptime | sed 's/.*load/load/')" >&2
  raw_ms=$(taskset -c 0,1 "$client_bin" "$pkg" "raw-$run/" | sed -n 's/^RAW_MS=//p')
  cfg=$(store_toml "$work/ocfl-$round" ocfl "ocfl-$run/")
  ocfl_ms=$(ms_of taskset -c 0,1 "$bin" store --config "$cfg" --quiet put "$pkg")
  cfg=$(store_toml "$work/web-$round" webaip "web-$run/")
  web_ms=$(ms_of taskset -c 0,1 "$bin" store --config "$cfg" --quiet put "$pkg")
  echo "round $round: raw $raw_ms ms, OCFL put $ocfl_ms ms, webaip-layout put $web_ms ms" >&2
  best_raw=$(( raw_ms < best_raw ? raw_ms : best_raw ))
  best_ocfl=$(( ocfl_ms < best_ocfl ? ocfl_ms : best_ocfl ))
  best_web=$(( web_ms < best_web ? web_ms : best_web ))
done
mbs() { awk -v b="$bytes" -v ms="$1" 'BEGIN { printf "%.1f MB/s", b / 1e6 / (ms / 1000) }'; }
echo "raw object_store put:        $best_raw ms ($(mbs "$best_raw"))"
echo "OCFL store put (bucket):     $best_ocfl ms ($(mbs "$best_ocfl")) (audit, verified uploads, inventories, state)"
echo "webaip-layout put (bucket):  $best_web ms ($(mbs "$best_web"))"
awk -v p="$best_ocfl" -v r="$best_raw" 'BEGIN { printf "OCFL put throughput: %.0f%% of raw (target >= 80%%)\n", 100 * r / p }'
echo "load after: $(uptime | sed 's/.*load/load/')"
