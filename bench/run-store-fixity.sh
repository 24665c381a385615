#!/usr/bin/env bash
# `store check` at scale (bench/store_fixity_bench.py): simulated stores of 10k, 30k and 100k
# small packages on one file system replica (the webaip layout, or with `--layout ocfl` an
# OCFL storage root), each checked by listing, deep, and by a 1 % sample; time per object,
# peak RSS, state database size. The stores are generated under bench/work/ and removed after
# each size.
#
#   bash bench/run-store-fixity.sh [--layout webaip|ocfl] [--counts 10000,30000,100000]
#                                  [--profile release|ci]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=release
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
cargo build --quiet --profile "$profile" --bin webaip
uptime
exec python3 bench/store_fixity_bench.py --bin "target/$profile/webaip" "${args[@]}"
