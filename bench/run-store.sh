#!/usr/bin/env bash
# Store benchmark: a package of about 200 MB with many small files and two large ones (two
# 90 MB ARCs and 240 small ones, each a container of its own) is put to the 3-node Garage
# cluster (scripts/garage-cluster.sh) with `webaip store put`, beside the raw throughput of the
# same client writing the same bytes to the same bucket (benches/store_raw.rs: no audit, no
# look-before-write, no verification, no state). Target (issue 8): put at no less than 80 % of
# raw. Then `webaip store check --deep` (every copy read back and hashed). Each run writes
# under fresh key prefixes, so nothing is a no-op.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
cargo build --release --quiet --bench store_raw
raw_bin=$(ls -t target/release/deps/store_raw-* | grep -v '\.d$' | head -1)
set -a
eval "$(bash scripts/garage-cluster.sh start 2>/dev/null)"
set +a

pkg=$(bash bench/store-package.sh ./target/release/webaip)
files=$(find "$pkg" -type f | wc -l)
bytes=$(du -sb "$pkg" | cut -f1)
echo "package: $files files, $((bytes / 1000000)) MB (largest $(find "$pkg" -type f -printf '%s\n' | sort -n | tail -1 | awk '{printf "%.0f", $1/1e6}') MB)"

state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
eps=$(echo "$S3_ENDPOINTS" | sed 's/\([^,]*\)/"\1"/g; s/,/, /g')
best_raw=999999999 best_put=999999999
# Two rounds, alternating, best of each: the cluster and the client share the same 2 cores.
for round in 1 2; do
  run=$(date +%s%N)
  mkdir -p "$state/$round"
  cat >"$state/$round/store.toml" <<EOF
state = "state.sqlite"
[[replica]]
name = "garage"
type = "s3"
endpoints = [$eps]
bucket = "$S3_BUCKET"
region = "garage"
prefix = "bench-$run/"
EOF
  raw_ms=$("$raw_bin" "$pkg" "raw-$run/" | sed -n 's/^RAW_MS=//p')
  s=$(date +%s%N)
  ./target/release/webaip store --config "$state/$round/store.toml" --quiet put "$pkg" >/dev/null
  put_ms=$(( ($(date +%s%N) - s) / 1000000 ))
  echo "round $round: raw $raw_ms ms, put $put_ms ms" >&2
  best_raw=$(( raw_ms < best_raw ? raw_ms : best_raw ))
  best_put=$(( put_ms < best_put ? put_ms : best_put ))
done
raw_ms=$best_raw put_ms=$best_put
s=$(date +%s%N)
./target/release/webaip store --config "$state/2/store.toml" --quiet check --deep >/dev/null
check_ms=$(( ($(date +%s%N) - s) / 1000000 ))

mbs() { awk -v b="$bytes" -v ms="$1" 'BEGIN { printf "%.1f MB/s, %.0f files/s", b / 1e6 / (ms / 1000), '"$files"' / (ms / 1000) }'; }
echo "raw object_store put:      $raw_ms ms ($(mbs "$raw_ms"))"
echo "webaip store put:          $put_ms ms ($(mbs "$put_ms")) (audit + look-before-write + HEAD verification + state)"
echo "webaip store check --deep: $check_ms ms ($(mbs "$check_ms"))"
awk -v p="$put_ms" -v r="$raw_ms" 'BEGIN { printf "put throughput: %.0f%% of raw (target >= 80%%)\n", 100 * r / p }'
