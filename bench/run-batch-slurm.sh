#!/usr/bin/env bash
# Batch across a scheduler (issue 28): N small generated harvests (default 2,000; see
# bench/gen_harvests.py) packaged by one `webaip batch run` and by scripts/batch-array.sbatch
# as a Slurm array of T tasks (default 8) on the local single-node Slurm
# (scripts/slurm-local.sh, started here and stopped again if it was not running), at the same
# total -j, in two ways:
#   at once:  the T tasks (-j 1 each, --oversubscribe) all run together, as on a cluster with a
#             CPU for each, against one batch at -j T;
#   in turns: the T tasks (--cpus-per-task=1) run as many at a time as the node has cores C,
#             against one batch at -j C.
# Each timed from sbatch until squeue lists no task of the array; alternating, best of two.
# Without virus checks and with --deterministic, so the packages must be the same bytes
# (checked for all of them) and the journals must hold every item once. The difference is
# what the scheduler and the tasks' start-up cost. Target: at once within 1.2x.
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

run_one() { # JOBS
  rm -rf "$work/out-one"
  "$bin" batch run "$work/manifest.csv" --out "$work/out-one" -j "$1" "${flags[@]}" >/dev/null
}
run_array() { # SBATCH OPTION...
  rm -rf "$work/out-array" "$work/logs"
  mkdir -p "$work/logs"
  local job
  job=$(MANIFEST=$work/manifest.csv OUT=$work/out-array WEBAIP=$bin \
    sbatch --parsable --array=0-$((tasks - 1)) --cpus-per-task=1 "$@" --export=ALL \
      --output="$work/logs/task-%a.log" --chdir="$work" scripts/batch-array.sbatch "${flags[@]}")
  job=${job%%;*}
  while [ -n "$(squeue -h -j "$job" -o %i 2>/dev/null)" ]; do sleep 0.1; done
  local failed
  failed=$(scontrol show job "$job" 2>/dev/null | grep -o 'JobState=[A-Z]*' | grep -vc COMPLETED || true)
  [ "$failed" = 0 ] || { echo "array $job: $failed task(s) not COMPLETED; see $work/logs" >&2; exit 1; }
}
# Every item once over the array's journals, all done, and every package the same bytes.
check_same() {
  local status
  status=$("$bin" batch status --json "$work"/out-array/batch-journal-*-of-"$tasks".sqlite)
  python3 - "$status" "$n" <<'PY'
import json, sys
s, n = json.loads(sys.argv[1]), int(sys.argv[2])
t = s["total"]
if (t["items"], t["done"]) != (n, n):
    sys.exit("the array's journals hold %s items, %s done; want %d" % (t["items"], t["done"], n))
PY
  for d in "$work"/out-one/IAH-*; do
    cmp -s "$d/METS.xml" "$work/out-array/$(basename "$d")/METS.xml" ||
      { echo "METS of $(basename "$d") differs between the batch and the array" >&2; exit 1; }
  done
}
ms() { local s e; s=$(date +%s%N); "$@"; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
best() { # BEST COMMAND...: the smaller of BEST and the command's time
  local b=$1 t
  shift
  t=$(ms "$@")
  echo $(( t < b ? t : b ))
}

one_once=999999999 array_once=999999999 one_turns=999999999 array_turns=999999999
for _ in 1 2; do
  one_once=$(best "$one_once" run_one "$tasks")
  array_once=$(best "$array_once" run_array --oversubscribe)
  check_same
  one_turns=$(best "$one_turns" run_one "$cores")
  array_turns=$(best "$array_turns" run_array)
  check_same
done
echo "harvests: $n, $cores cores, arrays of $tasks tasks (-j 1 each)"
echo "at once:  webaip batch run -j $tasks: $one_once ms; Slurm array, all $tasks tasks together: $array_once ms"
echo "in turns: webaip batch run -j $cores: $one_turns ms; Slurm array, $cores tasks at a time: $array_turns ms"
awk -v a="$array_turns" -v b="$one_turns" 'BEGIN { printf "in turns: array / batch %.2fx\n", a / b }'
awk -v a="$array_once" -v b="$one_once" \
  'BEGIN { r = a / b; printf "at once:  array / batch %.2fx (target <= 1.2x)\n", r; exit (r <= 1.2 ? 0 : 1) }'
