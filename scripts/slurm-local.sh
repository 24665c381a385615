#!/usr/bin/env bash
# A single-node Slurm cluster (munged, slurmctld, slurmd) on 127.0.0.1, for running
# `webaip batch` as a job array (scripts/batch-array.sbatch) and for its test. Run as root.
#
#   scripts/slurm-local.sh start    install Slurm and MUNGE from Debian if missing, write a
#                                   configuration, start the three daemons, wait until the node
#                                   takes jobs; reuse daemons that already run; print the
#                                   client setting SLURM_CONF=...
#   scripts/slurm-local.sh env      print SLURM_CONF=... (sbatch, squeue, scontrol, sinfo need it)
#   scripts/slurm-local.sh status   exit 0 only when the node takes jobs (and show it)
#   scripts/slurm-local.sh stop     stop the three daemons (their state is kept)
#
# Environment: WEBAIP_SLURM_DIR (default /tmp/webaip-slurm: configuration, state, logs, the
# MUNGE key and socket), WEBAIP_SLURM_PORT (16817: slurmctld; slurmd listens on the next port).
#
# Why it is set up this way: no systemd and no cgroups are assumed (proctrack/linuxproc,
# task/none); munged runs on a socket and key of its own (--force: it runs as root under /tmp),
# which AuthInfo points Slurm at, so a system MUNGE is neither needed nor touched; there is no
# accounting database (sacct does not work; squeue and scontrol do); the scheduler looks at
# pending jobs every second, so the tasks of an array start within a second or two.
set -euo pipefail
DIR=${WEBAIP_SLURM_DIR:-/tmp/webaip-slurm}
PORT=${WEBAIP_SLURM_PORT:-16817}
CONF="$DIR/slurm.conf"
TIMEOUT=30
log() { echo "slurm-local: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
export SLURM_CONF=$CONF

# The pid file of each daemon, and the program its pid must be (a stale pid file never matches).
pidfile() { case "$1" in munged) echo "$DIR/munge/munged.pid" ;; *) echo "$DIR/$1.pid" ;; esac; }
running() {
  local f p
  f=$(pidfile "$1")
  [ -f "$f" ] && p=$(cat "$f") && kill -0 "$p" 2>/dev/null &&
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$1" ]
}
node_up() { sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated|completing)'; }

stop_daemon() {
  local p
  running "$1" || { rm -f "$(pidfile "$1")"; return 0; }
  p=$(cat "$(pidfile "$1")")
  kill "$p" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$p" 2>/dev/null; then kill -9 "$p" 2>/dev/null || true; fi
  rm -f "$(pidfile "$1")"
  log "$1 (pid $p) stopped"
}
stop_all() { stop_daemon slurmd; stop_daemon slurmctld; stop_daemon munged; }

case "${1:-start}" in
  env) echo "SLURM_CONF=$CONF"; exit 0 ;;
  status)
    if running slurmctld && running slurmd && node_up; then sinfo; exit 0; fi
    echo "not running ($DIR)"; exit 1 ;;
  stop) stop_all; exit 0 ;;
  start) ;;
  *) echo "usage: $0 start|env|status|stop" >&2; exit 2 ;;
esac

[ "$(id -u)" -eq 0 ] || die "run as root (slurmd starts each job as the user who submits it)"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
  ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
  bash "$(dirname "$0")/apt-install.sh" slurmctld slurmd slurm-client munge ||
    die "could not install Slurm (slurmctld slurmd slurm-client munge) with apt-get"
fi

mkdir -p "$DIR/munge" "$DIR/state" "$DIR/spool"
chmod 700 "$DIR/munge"
if [ ! -s "$DIR/munge/munge.key" ]; then
  (umask 077; dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 2>/dev/null)
fi
chmod 400 "$DIR/munge/munge.key"

# Slurm names the node by the short host name; all its memory but 1 GiB is offered to jobs.
HOST=$(hostname -s)
MEM=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024))
[ "$MEM" -gt 512 ] || MEM=512
cat >"$CONF.new" <<EOF
ClusterName=webaip
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket.2
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$MEM State=UNKNOWN
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES:4
EOF
# A changed configuration (another port, another machine's memory) restarts the daemons.
if [ -f "$CONF" ] && ! cmp -s "$CONF" "$CONF.new"; then
  log "configuration changed: restarting"
  stop_all
fi
mv "$CONF.new" "$CONF"

if ! running munged; then
  munged --force --socket="$DIR/munge/munge.socket.2" --key-file="$DIR/munge/munge.key" \
    --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" \
    --seed-file="$DIR/munge/munged.seed" || die "munged did not start; see $DIR/munge/munged.log"
fi
running slurmctld || slurmctld -f "$CONF" || die "slurmctld did not start; see $DIR/slurmctld.log"
running slurmd || slurmd -f "$CONF" || die "slurmd did not start; see $DIR/slurmd.log"
for _ in $(seq $((TIMEOUT * 5))); do
  if node_up; then
    log "node $HOST takes jobs (slurmctld port $PORT)"
    echo "SLURM_CONF=$CONF"
    exit 0
  fi
  sleep 0.2
done
tail -n 20 "$DIR/slurmctld.log" "$DIR/slurmd.log" >&2 || true
die "node $HOST did not come up within ${TIMEOUT} s; see $DIR/slurmctld.log and $DIR/slurmd.log"
