#!/usr/bin/env bash
# A real ClamAV daemon for webaip, on this machine only, idempotently:
#   scripts/clamd-local.sh [start]   install ClamAV from Debian if missing, write a config and a
#                                    small signature database of our own (the EICAR test
#                                    signature; clamd will not start with an empty database),
#                                    start clamd on a Unix socket and a loopback TCP port, wait
#                                    for PONG; reuse a daemon that already answers.
#   scripts/clamd-local.sh stop      stop it
#   scripts/clamd-local.sh status    say whether it answers
# Prints WEBAIP_CLAMD=unix:<socket>, CLAMD_TCP=tcp:127.0.0.1:<port> and CLAMD_PID=<pid>.
# Settings (environment): WEBAIP_CLAMD_DIR (default /tmp/webaip-clamd), WEBAIP_CLAMD_PORT
# (3311), CLAMD_STREAM_MAX (StreamMaxLength, 2000M), CLAMD_MAX_FILE (MaxFileSize, 2000M),
# CLAMD_IDLE_TIMEOUT (IdleTimeout, seconds a session may stay idle; 60),
# CLAMD_TMP (clamd's TemporaryDirectory; default $WEBAIP_CLAMD_DIR/tmp. clamd makes a work
# directory there for every scan and spools INSTREAM streams (webaip's large payloads, and
# everything sent over TCP) into it. A tmpfs such as /dev/shm is faster, but holds what is
# spooled in memory while it is scanned).
set -euo pipefail
DIR=${WEBAIP_CLAMD_DIR:-/tmp/webaip-clamd}
PORT=${WEBAIP_CLAMD_PORT:-3311}
STREAM_MAX=${CLAMD_STREAM_MAX:-2000M}
MAX_FILE=${CLAMD_MAX_FILE:-2000M}
IDLE=${CLAMD_IDLE_TIMEOUT:-60}
SOCK="$DIR/clamd.sock"
CONF="$DIR/clamd.conf"
PIDF="$DIR/clamd.pid"
log() { echo "clamd-local: $*" >&2; }

alive() { [ -f "$PIDF" ] && kill -0 "$(cat "$PIDF")" 2>/dev/null; }
pong() {
  # zPING over the loopback TCP port, with bash alone (no netcat needed).
  local r
  exec 3<>"/dev/tcp/127.0.0.1/$PORT" 2>/dev/null || return 1
  printf 'zPING\0' >&3
  IFS= read -r -d '' -t 5 r <&3 || true
  exec 3<&- 3>&-
  [ "$r" = "PONG" ]
}

case "${1:-start}" in
  stop)
    if alive; then
      # A daemon a test stopped with SIGSTOP acts on SIGTERM only once it runs again; one that
      # does not end within 5 s is killed.
      pid=$(cat "$PIDF"); kill -CONT "$pid" 2>/dev/null || true; kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; sleep 0.2; fi
      rm -f "$PIDF" "$SOCK"
      log "stopped pid $pid"
    else
      log "not running ($DIR)"
    fi
    exit 0 ;;
  status)
    if alive && pong; then echo "running pid $(cat "$PIDF") socket $SOCK port $PORT"; exit 0; fi
    echo "not running"; exit 1 ;;
  start) ;;
  *) echo "usage: $0 [start|stop|status]" >&2; exit 2 ;;
esac

if [ ! -x /usr/sbin/clamd ] || ! command -v clamdscan >/dev/null; then
  bash "$(dirname "$0")/apt-install.sh" clamav-daemon clamdscan
fi
TMP=${CLAMD_TMP:-$DIR/tmp}
mkdir -p "$DIR/db" "$TMP"
if alive && pong; then
  log "clamd already running (pid $(cat "$PIDF"))"
else
  # The EICAR test string, assembled from two halves so this script is not itself flagged.
  a='X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-'
  b='ANTIVIRUS-TEST-FILE!$H+H*'
  printf '%s%s' "$a" "$b" > "$DIR/eicar.com"
  hex=$(od -An -v -tx1 < "$DIR/eicar.com" | tr -d ' \n')
  printf 'Webaip.Test.EICAR:0:*:%s\n' "$hex" > "$DIR/db/webaip.ndb"
  printf '%s:68:Webaip.Test.EICAR-File\n' "$(md5sum < "$DIR/eicar.com" | cut -d' ' -f1)" > "$DIR/db/webaip.hdb"
  cat > "$CONF" <<CONF
Foreground no
PidFile $PIDF
LogFile $DIR/clamd.log
LogTime yes
DatabaseDirectory $DIR/db
TemporaryDirectory $TMP
LocalSocket $SOCK
LocalSocketMode 666
FixStaleSocket yes
TCPSocket $PORT
TCPAddr 127.0.0.1
MaxThreads 8
MaxQueue 200
ReadTimeout 300
CommandReadTimeout 30
IdleTimeout $IDLE
SelfCheck 0
StreamMaxLength $STREAM_MAX
MaxFileSize $MAX_FILE
MaxScanSize 4000M
MaxScanTime 600000
AlertExceedsMax yes
Bytecode no
CONF
  alive && { kill "$(cat "$PIDF")" || true; sleep 1; }
  rm -f "$SOCK" "$PIDF"
  /usr/sbin/clamd --config-file="$CONF" >>"$DIR/clamd.stdout" 2>&1 || {
    log "clamd failed to start"; tail -n 20 "$DIR/clamd.log" "$DIR/clamd.stdout" >&2 || true; exit 1; }
  for _ in $(seq 300); do pong && break; sleep 0.2; done
  pong || { log "no PONG from clamd"; tail -n 20 "$DIR/clamd.log" >&2 || true; exit 1; }
  log "clamd up (pid $(cat "$PIDF"))"
fi
echo "WEBAIP_CLAMD=unix:$SOCK"
echo "CLAMD_TCP=tcp:127.0.0.1:$PORT"
echo "CLAMD_PID=$(cat "$PIDF")"
