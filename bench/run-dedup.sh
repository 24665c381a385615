#!/usr/bin/env bash
# Deduplication look-ups: the 200 MB benchmark container packaged without deduplication, and
# with `--dedup-against` a digest table of DIGESTS (default 10 million) stored payloads that
# share none of its digests (every look-up reads its block and misses: the look-up cost alone).
# Prints both times, their ratio (target: at most 1.10) and each run's peak RSS, and the
# table's build time and size. WEBAIP names the binary (default target/release/webaip).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${DIGESTS:-10000000}
bin=${WEBAIP:-target/release/webaip}
if [ -z "${WEBAIP:-}" ]; then cargo build --release --quiet; fi
work=bench/work/dedup
mkdir -p "$work"
arc=bench/work/IAH-20240315103000-00000-bench-200M.arc.gz
[ -f "$arc" ] || python3 bench/migrate_bench.py
if [ -z "$(ls "$work"/migrated/*.warc.gz 2>/dev/null)" ]; then
  "$bin" migrate --quiet --out "$work/migrated" "$arc" > /dev/null
fi
warc=$(ls "$work"/migrated/*.warc.gz | head -1)
# N CDXJ lines with random SHA-1 digests (seeded), then their table.
if [ ! -f "$work/stored-$n.digests" ]; then
  python3 - "$n" "$work/stored-$n.cdxj" <<'PY'
import base64, random, sys
n, out = int(sys.argv[1]), sys.argv[2]
rnd = random.Random(29)
with open(out, "w") as f:
    for i in range(n):
        d = base64.b32encode(rnd.randbytes(20)).decode()
        f.write('com,example)/p%d 20240101000000 {"url": "http://example.com/p%d", "digest": "sha1:%s", "length": "900", "offset": "%d", "filename": "content/old-%d.warc.gz"}\n' % (i, i, d, i * 900, i // 100000))
PY
  start=$(date +%s%N)
  /usr/bin/time -f "table build: peak RSS %M KiB" "$bin" dedup-table "$work/stored-$n.cdxj" -o "$work/stored-$n.digests"
  echo "table build: $(( ($(date +%s%N) - start) / 1000000 )) ms"
  rm "$work/stored-$n.cdxj"
fi
ls -l "$work/stored-$n.digests" | awk '{printf "table: %.0f MB\n", $5 / 1e6}'
run() {
  local name=$1; shift
  rm -rf "$work/pkg-$name"
  local start end
  start=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$work/$name.rss" "$bin" package --no-virus-check --quiet --identify none \
    --out "$work/pkg-$name" "$warc" "$@"
  end=$(date +%s%N)
  echo $(( (end - start) / 1000000 )) > "$work/$name.ms"
}
# Alternate, three rounds each: the page cache and the other load of the machine hit both.
for round in 1 2 3; do
  run plain
  cp "$work/plain.ms" "$work/plain.$round.ms"
  run dedup --dedup-against "$work/stored-$n.digests"
  cp "$work/dedup.ms" "$work/dedup.$round.ms"
done
python3 - "$work" <<'PY'
import statistics, sys
w = sys.argv[1]
t = {k: statistics.median(int(open(f"{w}/{k}.{r}.ms").read()) for r in (1, 2, 3)) for k in ("plain", "dedup")}
rss = {k: int(open(f"{w}/{k}.rss").read()) / 1024 for k in ("plain", "dedup")}
print(f"package:                    {t['plain'] / 1000:.2f} s (median of 3), peak RSS {rss['plain']:.0f} MB")
print(f"package --dedup-against:    {t['dedup'] / 1000:.2f} s (median of 3), peak RSS {rss['dedup']:.0f} MB")
print(f"ratio: {t['dedup'] / t['plain']:.3f} (target <= 1.10)")
PY
