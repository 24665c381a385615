#!/usr/bin/env bash
# PRONOM identification speed: webaip's DROID matcher (formats::droid, through the benchmark
# binary benches/identify.rs) beside siegfried (pygfried, one worker) on the same payloads,
# each pinned to one core:
#   bash bench/run-identify.sh [--repeat N] [ARCHIVE...]
# The payloads are every record payload of the given WARC/ARC files (default: every file of
# ../shared/corpus/warc and ../shared/corpus/arc), extracted with warcio into a temporary
# directory by tests/oracle/siegfried_payloads.py. Each identifier goes over all of them N
# times (default 5); loading the signatures is not timed. Prints files/s for both and the ratio,
# then how often the two agree where siegfried gives exactly one PUID (plain text counts as
# agreeing only when both say the same character class), listing every disagreement.
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=5
if [ "${1:-}" = "--repeat" ]; then repeat=$2; shift 2; fi
if [ $# -gt 0 ]; then archives=("$@"); else archives=(../shared/corpus/warc/* ../shared/corpus/arc/*); fi

py=${WEBAIP_ORACLE_PYTHON:-.venv/bin/python}
if ! "$py" -c 'import warcio, pygfried' 2>/dev/null; then bash scripts/setup-test-env.sh; fi
bin=$(cargo bench --quiet --features test-hooks --bench identify --no-run --message-format json |
  "$py" -c 'import json, sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])')
pin=()
if command -v taskset >/dev/null; then pin=(taskset -c 0); fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/payloads"
"$py" tests/oracle/siegfried_payloads.py "$work/payloads" "${archives[@]}" >"$work/siegfried.json" 2>/dev/null
n=$(ls "$work/payloads" | wc -l)
bytes=$(du -sb "$work/payloads" | cut -f1)
echo "payloads: $n files, $bytes bytes, each identified $repeat times" >&2

ours=$("${pin[@]}" "$bin" --repeat "$repeat" "$work"/payloads/* 2>&1 >"$work/ours.tsv" | sed -n 's/.*: \([0-9.]*\) files\/s$/\1/p')
theirs=$("${pin[@]}" "$py" - "$repeat" "$work/payloads" <<'PY'
import os, sys, time
import pygfried
repeat, d = int(sys.argv[1]), sys.argv[2]
paths = [os.path.join(d, f) for f in sorted(os.listdir(d))]
pygfried.identify(paths[0])  # loads the signatures
start = time.perf_counter()
for _ in range(repeat):
    pygfried.identify_many(paths, workers=1)
print("%.0f" % (len(paths) * repeat / (time.perf_counter() - start)))
PY
)
echo "webaip droid matcher: $ours files/s"
echo "siegfried $("$py" -c 'import pygfried; print(pygfried.version())') (pygfried, 1 worker): $theirs files/s"
awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "ratio: webaip is %.1f times as fast\n", a / b }'
"$py" - "$work/siegfried.json" "$work/ours.tsv" <<'PY'
import json, os, sys
sf = {f["name"]: f["matches"] for f in json.load(open(sys.argv[1]))["files"]}
compared = agreed = text = 0
for line in open(sys.argv[2]):
    path, puids, *rest = line.rstrip("\n").split("\t")
    matches = sf.get(os.path.basename(path), [])
    if len(matches) != 1 or matches[0]["id"] == "UNKNOWN" or "container" in matches[0]["basis"]:
        continue
    m = matches[0]
    compared += 1
    theirs_text = m["basis"][len("text match "):] if m["basis"].startswith("text match ") else None
    ours_text = rest[0][len("text "):] if rest else None
    text += theirs_text is not None
    if puids == m["id"] and ours_text == theirs_text:
        agreed += 1
    else:
        print("  disagreement: %s: siegfried %s (%s), webaip %r %r" % (path, m["id"], m["basis"], puids, ours_text))
print("agreement where siegfried gives one PUID: %d of %d (%.1f %%; %d of them plain text by its characters)"
      % (agreed, compared, 100.0 * agreed / max(compared, 1), text))
PY
