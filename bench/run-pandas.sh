#!/usr/bin/env bash
# Packaging a PANDAS instance through the capture pipeline (scan stage, rewrite stage), beside a
# base revision's binary when one was built by run-compare.sh:
#   bash bench/run-pandas.sh [BASE_BINARY] [--pages 2000] [--repeat 3]
# Generates bench/work/pandas/ (bench/gen_pandas.py), then times `package --no-virus-check` and
# `package --clamd` (scripts/clamd-local.sh's clamd; its clean cache warms over the runs, the
# same for both binaries), alternating the binaries, best of the runs.
set -euo pipefail
cd "$(dirname "$0")/.."
base=""
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then base=$1; shift; fi
pages=2000 repeat=3
while [ $# -gt 0 ]; do
  case $1 in
    --pages) pages=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
bash scripts/setup-build-env.sh
cargo build --release --quiet
eval "$(bash scripts/clamd-local.sh | grep '^WEBAIP_CLAMD=')"
work=bench/work/pandas
rm -rf "$work" && mkdir -p "$work"
python3 bench/gen_pandas.py "$work/in" "$pages"
instance=$work/in/999/20240101-1200
echo "instance: $pages pages, $(du -sh "$work/in" | cut -f1), 2 cores; best of $repeat"
bins=("new:target/release/webaip")
[ -n "$base" ] && bins=("base:$base" "${bins[@]}")
best() { sort -n | head -1; }
for mode in "--no-virus-check" "--clamd $WEBAIP_CLAMD"; do
  declare -A times=()
  for _ in $(seq "$repeat"); do
    for b in "${bins[@]}"; do
      label=${b%%:*} bin=${b#*:}
      rm -rf "$work/out"
      s=$(date +%s.%N)
      # shellcheck disable=SC2086
      "$bin" package $mode --quiet --out "$work/out" "$instance" > /dev/null
      e=$(date +%s.%N)
      times[$label]+="$(echo "$e - $s" | bc) "
    done
  done
  line="package ${mode%% *}:"
  for b in "${bins[@]}"; do
    label=${b%%:*}
    t=$(echo "${times[$label]}" | tr ' ' '\n' | grep . | best)
    line+="  $label $(printf '%.2f' "$t") s"
    eval "best_$label=$t"
  done
  if [ -n "$base" ]; then
    # shellcheck disable=SC2154
    line+="  new/base $(printf '%.2f' "$(echo "scale=4; $best_new / $best_base" | bc)")x"
  fi
  echo "$line"
  unset times
done
