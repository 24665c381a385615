#!/usr/bin/env bash
# `webaip get` benchmark (issue 29): a generated sorted CDXJ index of 10 million lines (the
# lines of a real container among 10 million made-up captures of other hosts, merged in
# bytewise order), then `webaip get URL` (whole process: start-up, binary search over byte
# offsets, reading the record, writing its payload) timed over 20 runs with the page cache warm,
# next to pywb's own look-up of the same key in the same file (`pywb.utils.binsearch.iter_exact`,
# a Python process, look-up only, no record read). Target: `get` under 10 ms. Peak RSS of both
# where GNU time is installed. LINES=N changes the index size.
set -euo pipefail
cd "$(dirname "$0")/.."
# WEBAIP=path/to/webaip uses that binary instead of building the release one.
if [ -z "${WEBAIP:-}" ]; then
  cargo build --release --quiet
  WEBAIP=./target/release/webaip
fi
lines=${LINES:-10000000}
work=bench/work/get
mkdir -p "$work/pkg/content"
src=../shared/corpus/warc/warcio-example.warc.gz
cp "$src" "$work/pkg/content/example.warc.gz"
index="$work/index-$lines.cdxj"
if [ ! -f "$index" ]; then
  .venv/bin/cdxj-indexer "$work/pkg/content/example.warc.gz" \
    | sed 's/"filename": "example.warc.gz"/"filename": "content\/example.warc.gz"/' \
    | LC_ALL=C sort > "$work/real.cdxj"
  python3 - "$lines" > "$work/made-up.cdxj" <<'PY'
import sys
n = int(sys.argv[1])
out = sys.stdout
# Keys in sorted order by construction: zero-padded numbers under one prefix.
for i in range(n):
    h, p = divmod(i, 10)
    key = f"com,example,host{h:07d})/page/{p}"
    out.write(f'{key} 20240315{i % 1000000:06d} {{"url": "http://host{h:07d}.example.com/page/{p}", '
              f'"mime": "text/html", "status": "200", "digest": "sha1:{"A" * 32}", '
              f'"length": "1228", "offset": "784", "filename": "content/example.warc.gz"}}\n')
PY
  LC_ALL=C sort -m "$work/made-up.cdxj" "$work/real.cdxj" > "$index.tmp"
  mv "$index.tmp" "$index"
  rm "$work/made-up.cdxj"
fi
echo "index: $(wc -l < "$index") lines, $(( $(stat -c %s "$index") / 1000000 )) MB"
get() { "$WEBAIP" get --index "$index" --package "$work/pkg" http://example.com/ --at 20170306040206; }
pywb() {
  .venv/bin/python -c "
import sys
from pywb.utils.binsearch import iter_exact
with open(sys.argv[1], 'rb') as f:
    print(sum(1 for _ in iter_exact(f, b'com,example)/')))" "$index"
}
get > /dev/null # warm the cache
[ "$(get | sha256sum)" = "$(python3 -c "
import gzip,sys
d = open('$src','rb').read()[784:784+1228]
b = gzip.decompress(d)
b = b[b.index(b'\r\n\r\n') + 4:]  # WARC header
b = b[b.index(b'\r\n\r\n') + 4:]  # HTTP header
sys.stdout.buffer.write(b[:-4])" | sha256sum)" ] || { echo "get gives another payload"; exit 1; }
times() { # wall times in ms (3 decimals) of 20 runs of "$@", sorted
  for _ in $(seq 20); do
    s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N)
    echo "$(( (e - s) / 1000 ))"
  done | sort -n
}
report() { # name, then the sorted times in microseconds
  local name=$1; shift
  awk -v n="$name" '{ t[NR] = $1 } END { printf "%-30s best %.2f ms, median %.2f ms, worst %.2f ms\n", n, t[1] / 1000, t[int((NR + 1) / 2)] / 1000, t[NR] / 1000 }'
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores (wall times include waiting for a core)"
times "$WEBAIP" --version | report "webaip --version (start-up)"
times get | report "webaip get (whole process)"
times pywb | report "pywb iter_exact (look-up only)"
if [ -x /usr/bin/time ]; then
  rss=$( { /usr/bin/time -f "%M" "$WEBAIP" get --index "$index" --package "$work/pkg" http://example.com/ >/dev/null; } 2>&1 | tail -1)
  cpu=$( { /usr/bin/time -f "%U %S" "$WEBAIP" get --index "$index" --package "$work/pkg" http://example.com/ >/dev/null; } 2>&1 | tail -1)
  echo "webaip get CPU time (user, system): $cpu s"
  echo "webaip get peak RSS:           $(( rss / 1024 )) MB ($rss KiB)"
  rss=$( { /usr/bin/time -f "%M" bash -c "$(declare -f pywb); index=$index pywb" >/dev/null; } 2>&1 | tail -1)
  echo "pywb iter_exact peak RSS:      $(( rss / 1024 )) MB ($rss KiB)"
fi
