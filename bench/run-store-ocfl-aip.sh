#!/usr/bin/env bash
# What an AIP adds to OCFL replicas that hold its submission: the store benchmarks' package
# (two 90 MB ARCs and 240 small ones) put as version 1, then `ingest --store` of it; prints
# the bytes each replica gained beside the submission's bytes (target: under 1 %), and the
# wall time of the ingest with and without --store.
#
#   bash bench/run-store-ocfl-aip.sh [--profile release|ci]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=release
[ "${1:-}" = --profile ] && profile=$2
cargo build --quiet --profile "$profile" --features test-hooks --bin webaip
bin=target/$profile/webaip
pkg=$(bash bench/store-package.sh "$bin")
work=bench/work/store-ocfl-aip
rm -rf "$work"
mkdir -p "$work"
cat > "$work/store.toml" <<TOML
state = "$PWD/$work/state.sqlite"
[user]
name = "webaip benchmark"
address = "mailto:bench@example.org"
[[replica]]
name = "a"
type = "fs"
layout = "ocfl"
root = "$PWD/$work/a"
[[replica]]
name = "b"
type = "fs"
layout = "ocfl"
root = "$PWD/$work/b"
TOML
bytes() { du -sb --apparent-size "$1" | cut -f1; }
"$bin" store --config "$work/store.toml" put --quiet "$pkg" >/dev/null
before_a=$(bytes "$work/a")
before_b=$(bytes "$work/b")
start=$(date +%s.%N)
"$bin" ingest --quiet --store "$work/store.toml" -o "$work/aips" "$pkg" >/dev/null
stored=$(echo "$(date +%s.%N) - $start" | bc)
start=$(date +%s.%N)
"$bin" ingest --quiet -o "$work/aips-plain" "$pkg" >/dev/null
plain=$(echo "$(date +%s.%N) - $start" | bc)
submission=$(bytes "$pkg")
load=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$submission" "$before_a" "$(bytes "$work/a")" "$before_b" "$(bytes "$work/b")" \
  "$stored" "$plain" "$load" <<'PY'
import sys
sub, a0, a1, b0, b1 = map(int, sys.argv[1:6])
stored, plain, load = float(sys.argv[6]), float(sys.argv[7]), sys.argv[8]
print(f"submission: {sub / 1e6:.1f} MB")
for name, before, after in (("a", a0, a1), ("b", b0, b1)):
    gained = after - before
    print(f"replica {name}: the AIP added {gained:,} bytes = {100 * gained / sub:.3f} % "
          f"of the submission (target < 1 %)")
print(f"ingest --store {stored:.2f} s, ingest alone {plain:.2f} s (load {load})")
PY
