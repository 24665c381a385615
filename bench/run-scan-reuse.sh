#!/usr/bin/env bash
# Scanning with verdicts reused: a generated NEDLIB harvest of 2000 payloads, 30 % of them
# repeating earlier ones, packaged with clamd twice: scanning every payload
# (WEBAIP_NO_VERDICT_REUSE=1) and reusing the verdict of identical payloads (the default).
# Prints the time spent waiting for clamd and the whole run's, and their ratios: first with
# clamd as users run it (it caches the MD5 of every payload it found clean, so a repeated
# payload costs it little even when sent), then with that cache disabled (`DisableCache yes`, a
# clamd of the benchmark's own in bench/work/scan-reuse-clamd, port 3336): what reuse itself
# saves. PAIRS (default 2000) sets the harvest's size.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-build-env.sh
eval "$(bash scripts/clamd-local.sh | grep '^WEBAIP_CLAMD=')"
export WEBAIP_CLAMD
cargo build --release --quiet
work=bench/work/scan-reuse
rm -rf "$work" && mkdir -p "$work"
python3 bench/gen_nedlib.py "$work/harvest" "${PAIRS:-2000}" 0.3
# How a fresh clamd is started before every run (see run): scripts/clamd-local.sh's.
restart_clamd() {
  bash scripts/clamd-local.sh stop > /dev/null
  eval "$(bash scripts/clamd-local.sh | grep '^WEBAIP_CLAMD=')"
  clamd_conf=/tmp/webaip-clamd/clamd.conf
}
# CPU seconds (user + system) clamd has used so far: what scanning costs the scanner, apart
# from the time webaip waits (which also counts transfers and the other side's waits).
clamd_cpu() {
  local pid
  pid=$(pgrep -n -f "clamd --config-file=$clamd_conf")
  awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$pid/stat"
}
run() {
  local start end
  # A fresh clamd for each run: clamd caches the verdicts of what it has scanned, which would
  # make whichever run goes second look faster.
  restart_clamd
  local cpu0 cpu1
  cpu0=$(clamd_cpu)
  start=$(date +%s%N)
  ./target/release/webaip package --json --force --out "$work/pkg" "$work/harvest" > "$work/$1.json"
  end=$(date +%s%N)
  cpu1=$(clamd_cpu)
  python3 - "$work/$1.json" "$1" "$(( (end - start) / 1000000 ))" "$cpu0" "$cpu1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["packages"][0]
cpu = float(sys.argv[5]) - float(sys.argv[4])
r["clamd_cpu"] = cpu
json.dump(r, open(sys.argv[1], "w"))
print("%-10s scanned %5d, reused %5d: clamd CPU %.2f s, waiting for clamd %.2f s, whole run %.2f s" % (
    sys.argv[2], r["scan"]["scanned"], r["scan"]["reused"], cpu, r["scan_seconds"], int(sys.argv[3]) / 1000))
PY
}
WEBAIP_NO_VERDICT_REUSE=1 run every
run reuse
WEBAIP_NO_VERDICT_REUSE=1 run every2
run reuse2
python3 - "$work/every2.json" "$work/reuse2.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print("with reuse / without: clamd CPU %.2fx (target <= 0.75x), waiting for clamd %.2fx, whole run %.2fx" % (
    b["clamd_cpu"] / a["clamd_cpu"], b["scan_seconds"] / a["scan_seconds"], b["seconds"] / a["seconds"]))
PY

# The same two pairs with clamd's clean cache disabled. clamd-local.sh has no setting for it:
# bench/benchlib.py writes its config with `DisableCache yes` added and starts clamd on that.
nocache_dir=$PWD/bench/work/scan-reuse-clamd
restart_clamd() {
  eval "$(python3 bench/benchlib.py clamd-restart "$nocache_dir" 3336 --no-cache | grep '^WEBAIP_CLAMD=')"
  clamd_conf=$(ps -eo args | grep -o "clamd --config-file=$nocache_dir[^ ]*" | head -1 | cut -d= -f2)
}
echo "without clamd's clean cache (DisableCache yes):"
WEBAIP_NO_VERDICT_REUSE=1 run every-nc
run reuse-nc
WEBAIP_NO_VERDICT_REUSE=1 run every-nc2
run reuse-nc2
python3 bench/benchlib.py clamd-stop "$nocache_dir" 3336 2> /dev/null
python3 - "$work/every-nc2.json" "$work/reuse-nc2.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print("without clamd's cache, with reuse / without: clamd CPU %.2fx (target <= 0.75x), waiting for clamd %.2fx, whole run %.2fx" % (
    b["clamd_cpu"] / a["clamd_cpu"], b["scan_seconds"] / a["scan_seconds"], b["seconds"] / a["seconds"]))
PY
