#!/usr/bin/env bash
# Mirror packaging against the page count: PANDAS instances of 2,500 / 5,000 / 10,000 / 20,000
# tiny pages (bench/gen_pandas_tiny.py: every page linked to three others, so every page is
# rewritten), packaged with --no-virus-check; prints CPU time and peak RSS per run and per
# page, beside a base revision's binary when given (built by run-compare.sh or by hand):
#   bash bench/run-mirror-scale.sh [BASE_BINARY] [--pages "2500 5000 10000 20000"]
# Linear time shows as a flat "us/page" column; flat memory as a flat "MB" column (a slowly
# falling "KB/page").
set -euo pipefail
cd "$(dirname "$0")/.."
base=""
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then base=$1; shift; fi
pages="2500 5000 10000 20000"
while [ $# -gt 0 ]; do
  case $1 in
    --pages) pages=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
new=${WEBAIP_BIN:-}
if [ -z "$new" ]; then
  bash scripts/setup-build-env.sh
  cargo build --release --quiet
  new=target/release/webaip
fi
work=bench/work/mirror-scale
mkdir -p "$work"
bins=("new:$new")
[ -n "$base" ] && bins=("base:$base" "${bins[@]}")
printf '%-6s %7s %9s %9s %8s %9s\n' bin pages "cpu s" "us/page" "MB" "KB/page"
for n in $pages; do
  inst=$work/in-$n/999/20240101-1200
  [ -d "$inst" ] || python3 bench/gen_pandas_tiny.py "$work/in-$n" "$n"
  for b in "${bins[@]}"; do
    label=${b%%:*} bin=${b#*:}
    rm -rf "$work/out"
    /usr/bin/time -f '%U %S %M' -o "$work/time" \
      "$bin" package --no-virus-check --quiet --out "$work/out" "$inst" > /dev/null
    read -r user sys rss < "$work/time"
    cpu=$(echo "$user + $sys" | bc)
    printf '%-6s %7d %9.2f %9.1f %8.1f %9.2f\n' "$label" "$n" "$cpu" \
      "$(echo "$cpu * 1000000 / $n" | bc -l)" "$(echo "$rss / 1024" | bc -l)" \
      "$(echo "$rss / $n" | bc -l)"
  done
done
rm -rf "$work/out"
