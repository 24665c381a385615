#!/usr/bin/env bash
# Peak RSS of `webaip migrate` on hostile compression and framing (issue 13, item 3).
# Usage: bench/readers-memory.sh [path/to/webaip]   (default: target/ci/webaip)
set -euo pipefail
bin=$(realpath "${1:-target/ci/webaip}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python3 - <<'PY'
import zlib
m = lambda b: (lambda c: c.compress(b) + c.flush())(zlib.compressobj(9, 8, 31))
h = b'filedesc://x.arc 0.0.0.0 20080101000000 text/plain 66\n1 0 test\nURL IP-address Archive-date Content-type Archive-length\n\n'
for n in (300000, 1000000):
    open('e%d.arc.gz' % n, 'wb').write(m(h) + m(b'') * n)
with open('tiny.arc', 'wb') as f:
    f.write(h)
    for i in range(500000):
        f.write(b'http://e.org/%07d 1.2.3.4 20080101000000 text/plain 1\nx\n' % i)
with open('longline.arc', 'wb') as f:
    f.write(h + b'http://e.org/ 1.2.3.4 20080101000000 text/plain 1\nx\nhttp://e.org/long ')
    for _ in range(200):
        f.write(b'a' * (1 << 20))
PY
for f in e300000.arc.gz e1000000.arc.gz tiny.arc longline.arc; do
    rm -rf out
    rss=$(/usr/bin/time -v "$bin" migrate -q --out out "$f" 2>&1 >/dev/null |
        awk -F: '/Maximum resident/ {gsub(/ /, "", $2); print $2}')
    echo "$f: peak RSS ${rss} KiB"
done
