#!/usr/bin/env bash
# `webaip pages` on WARCs compressed as one gzip stream with 10 / 20 / 40 payloads of 2 MB
# (bench/gen_one_stream_warc.py), beside a base revision's binary when given:
#   bash bench/run-one-stream.sh [BASE_BINARY]
# Linear time shows as a flat "ms/payload" column (each payload read from the stream's start
# again made it grow with the count).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-}
new=${WEBAIP_BIN:-}
if [ -z "$new" ]; then
  bash scripts/setup-build-env.sh
  cargo build --release --quiet
  new=target/release/webaip
fi
py=.venv/bin/python
[ -x "$py" ] || { echo "run scripts/setup-test-env.sh first (warcio in .venv)" >&2; exit 2; }
work=bench/work/one-stream
mkdir -p "$work"
bins=("new:$new")
[ -n "$base" ] && bins=("base:$base" "${bins[@]}")
printf '%-6s %9s %9s %11s %8s\n' bin payloads "s" "ms/payload" "MB"
for n in 10 20 40; do
  warc=$work/one-$n.warc.gz
  [ -f "$warc" ] || "$py" bench/gen_one_stream_warc.py "$warc" "$n"
  for b in "${bins[@]}"; do
    label=${b%%:*} bin=${b#*:}
    best=""
    for _ in 1 2 3; do
      /usr/bin/time -f '%e %M' -o "$work/time" "$bin" pages --quiet "$warc" > /dev/null
      read -r s rss < "$work/time"
      if [ -z "$best" ] || [ "$(echo "$s < $best" | bc)" = 1 ]; then best=$s; fi
    done
    printf '%-6s %9d %9.2f %11.1f %8.1f\n' "$label" "$n" "$best" \
      "$(echo "$best * 1000 / $n" | bc -l)" "$(echo "$rss / 1024" | bc -l)"
  done
done
