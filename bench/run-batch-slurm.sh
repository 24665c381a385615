#!/usr/bin/env bash
# Batch across a scheduler (issue 28): N small generated harvests (default 2,000; see
# bench/gen_harvests.py) packaged two ways in the same run, alternating, best of two each:
#   one batch:   `webaip batch run MANIFEST -j J` on this machine (J = its cores);
#   Slurm array: scripts/batch-array.sbatch submitted as an array of T tasks (default 8) to the
#                local single-node Slurm (scripts/slurm-local.sh, started here and stopped
#                again if it was not running), each task one shard with --cpus-per-task=1:
#                the node runs J tasks at once, the same total -j. Timed from sbatch until
#                squeue lists no task of the array.
# Both without virus checks and with --deterministic, so the packages must be the same bytes
# (checked for all of them). The difference is what the scheduler and the tasks' start-up
# cost. Target: the array within 1.2x of the one batch.
#   bash bench/run-batch-slurm.sh [N] [TASKS]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
tasks=${2:-8}
cores=$(nproc)
cargo build --release --quiet
bin=$PWD/target/release/webaip
work=$PWD/bench/work/batch-$n
if [ ! -f "$work/manifest.csv" ]; then
  rm -rf "$work"
  python3 bench/gen_harvests.py "$work" "$n"
fi
started=0
if ! bash scripts/slurm-local.sh status >/dev/null 2>&1; then
  started=1
fi
eval "export $(bash scripts/slurm-local.sh start | grep '^SLURM_CONF=')"
cleanup() { [ "$started" = 1 ] && bash scripts/slurm-local.sh stop >/dev/null 2>&1 || true; }
trap cleanup EXIT
flags=(--no-virus-check --deterministic --quiet)

run_one() {
  rm -rf "$work/out-one"
  "$bin" batch run "$work/manifest.csv" --out "$work/out-one" -j "$cores" "${flags[@]}" >/dev/null
}
run_array() {
  rm -rf "$work/out-array" "$work/logs"
  mkdir -p "$work/logs"
  local job
  job=$(MANIFEST=$work/manifest.csv OUT=$work/out-array WEBAIP=$bin \
    sbatch --parsable --array=0-$((tasks - 1)) --cpus-per-task=1 --export=ALL \
      --output="$work/logs/task-%a.log" --chdir="$work" scripts/batch-array.sbatch "${flags[@]}")
  job=${job%%;*}
  while [ -n "$(squeue -h -j "$job" -o %i 2>/dev/null)" ]; do sleep 0.1; done
  local failed
  failed=$(scontrol show job "$job" 2>/dev/null | grep -o 'JobState=[A-Z]*' | grep -vc COMPLETED || true)
  [ "$failed" = 0 ] || { echo "array $job: $failed task(s) not COMPLETED; see $work/logs" >&2; exit 1; }
}
ms() { local s e; s=$(date +%s%N); "$@"; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }

best_one=999999999 best_array=999999999
for _ in 1 2; do
  t=$(ms run_one); best_one=$(( t < best_one ? t : best_one ))
  t=$(ms run_array); best_array=$(( t < best_array ? t : best_array ))
done
# Every item once over the array's journals, all done, and every package the same bytes.
status=$("$bin" batch status --json "$work"/out-array/batch-journal-*-of-"$tasks".sqlite)
python3 - "$status" "$n" <<'PY'
import json, sys
s, n = json.loads(sys.argv[1]), int(sys.argv[2])
t = s["total"]
if (t["items"], t["done"]) != (n, n):
    sys.exit("the array's journals hold %s items, %s done; want %d" % (t["items"], t["done"], n))
PY
for d in "$work"/out-one/IAH-*; do
  b=$(basename "$d")
  cmp -s "$d/METS.xml" "$work/out-array/$b/METS.xml" ||
    { echo "METS of $b differs between the batch and the array" >&2; exit 1; }
done
echo "harvests: $n, $cores cores, array of $tasks tasks (--cpus-per-task=1)"
echo "webaip batch run -j $cores:        $best_one ms"
echo "Slurm array, $tasks tasks:          $best_array ms"
awk -v a="$best_array" -v b="$best_one" \
  'BEGIN { r = a / b; printf "array / batch: %.2fx (target <= 1.2x)\n", r; exit (r <= 1.2 ? 0 : 1) }'
