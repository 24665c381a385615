#!/usr/bin/env bash
# ARC deduplication that keeps the way back: two generated crawls of one site as .arc.gz
# (tests/dedup/gen_crawls.py --as arc: PAGES pages, default 400, of 2-200 KB random payloads;
# 70 % of the second's payload bytes unchanged, every fifth of those under a new URL). Packages
# the first, the second with --dedup-against the first and, for comparison, without. Prints the
# second container's shrink against the unchanged payload bytes (target: at least 95 %), whether
# every ARC of both comes back byte-identical (SHA-256) with `unmigrate --with`, the verdict of
# `audit --deep --rebuild-arcs --with`, what unmigrate says without --with, warcio's count of the
# revisits, and each step's wall time and peak RSS (whole processes). WEBAIP names the binary
# (default target/release/webaip, built when not given).
set -euo pipefail
cd "$(dirname "$0")/.."
pages=${PAGES:-400}
bin=${WEBAIP:-target/release/webaip}
if [ -z "${WEBAIP:-}" ]; then cargo build --release --quiet; fi
py=.venv/bin/python
work=bench/work/arc-dedup
rm -rf "$work"
mkdir -p "$work"
$py tests/dedup/gen_crawls.py "$work" --as arc --unchanged 0.70 --pages "$pages" \
  --min-size 2000 --max-size 200000 > "$work/generated.json"
arc1=$(ls "$work"/crawl1/*.arc.gz)
arc2=$(ls "$work"/crawl2/*.arc.gz)
timed() { # NAME COMMAND...: runs it, keeps its wall ms and peak RSS
  local name=$1; shift
  local start
  start=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$work/$name.rss" "$@" > "$work/$name.out" 2> "$work/$name.err" \
    && echo 0 > "$work/$name.rc" || echo $? > "$work/$name.rc"
  echo $(( ($(date +%s%N) - start) / 1000000 )) > "$work/$name.ms"
}
pkg="package --no-virus-check --quiet --deterministic"
timed package1 "$bin" $pkg --out "$work/p1" "$arc1"
timed package2 "$bin" $pkg --dedup-against "$work/p1" --out "$work/p2" "$arc2"
timed plain2 "$bin" $pkg --out "$work/plain2" "$arc2"
timed without "$bin" unmigrate -q -o "$work/out-without" "$work/p2"
timed unmigrate1 "$bin" unmigrate -q -o "$work/out" "$work/p1"
timed unmigrate2 "$bin" unmigrate -q -o "$work/out" "$work/p2" --with "$work/p1"
timed audit2 "$bin" audit --json --deep --rebuild-arcs --with "$work/p1" "$work/p2"
$py - "$work" "$arc1" "$arc2" <<'PY'
import glob, hashlib, json, os, sys
from warcio.archiveiterator import ArchiveIterator
w, arcs = sys.argv[1], sys.argv[2:]
g = json.load(open(f"{w}/generated.json"))
def one(pattern):
    found = glob.glob(pattern)
    assert len(found) == 1, pattern
    return found[0]
def step(name):
    return (int(open(f"{w}/{name}.ms").read()), int(open(f"{w}/{name}.rss").read().split()[-1]) / 1024,
            int(open(f"{w}/{name}.rc").read()))
sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
ded, plain = one(f"{w}/p2/content/*.warc.gz"), one(f"{w}/plain2/content/*.warc.gz")
saved = os.path.getsize(plain) - os.path.getsize(ded)
print(f"second crawl: {g['payload_bytes']:,} payload bytes, {g['unchanged_bytes']:,} unchanged "
      f"({100 * g['unchanged_bytes'] / g['payload_bytes']:.1f} %), {len(g['unchanged'])} pages, "
      f"{len(g['moved'])} under new URLs")
print(f"container without dedup {os.path.getsize(plain):,} B, with {os.path.getsize(ded):,} B: "
      f"shrinks by {saved:,} B = {100 * saved / g['unchanged_bytes']:.1f} % of the unchanged bytes "
      f"(target >= 95 %)")
with open(ded, "rb") as f:
    revisits = sum(1 for r in ArchiveIterator(f) if r.rec_type == "revisit")
print(f"warcio reads {revisits} revisits ({len(g['unchanged'])} unchanged pages)")
for a in arcs:
    back = f"{w}/out/{os.path.basename(a)}"
    same = os.path.exists(back) and sha(back) == sha(a)
    print(f"unmigrate --with: {os.path.basename(a)} {'byte-identical (sha256)' if same else 'DIFFERS'}")
audit = json.loads(open(f"{w}/audit2.out").read())["packages"][0]
print(f"audit --deep --rebuild-arcs --with: {audit['verdict'].upper()}, "
      f"{audit['arc_rebuilds']['as_stated']} of {audit['arc_rebuilds']['rebuilt']} ARC(s) as stated")
ms, rss, rc = step("without")
print(f"unmigrate without --with: exit {rc}: {open(f'{w}/without.err').read().strip()}")
print(f"wrote without --with: {sorted(os.listdir(f'{w}/out-without')) if os.path.isdir(f'{w}/out-without') else 'nothing'}")
for name in ("package1", "package2", "plain2", "unmigrate1", "unmigrate2", "audit2"):
    ms, rss, rc = step(name)
    print(f"{name:11} {ms / 1000:6.2f} s  peak RSS {rss:5.0f} MB  exit {rc}")
PY
