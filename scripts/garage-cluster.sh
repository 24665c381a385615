#!/usr/bin/env bash
# A 3-node Garage cluster (S3-compatible distributed object store) on 127.0.0.1, for webaip's
# replicated storage (`webaip store`) and its tests. Garage is an external server (AGPL-3.0),
# reached over S3 only, never linked.
#
#   scripts/garage-cluster.sh start [I]   install Garage with cargo if missing (2.5.0, ~7-10 min
#                                         on 2 cores; an installed binary is reused), start every
#                                         node (or node I), connect them, lay them out (one zone
#                                         per node, replication factor 3), create the key and
#                                         the bucket; print the client settings
#   scripts/garage-cluster.sh stop [I]    stop every node (or node I); data is kept
#   scripts/garage-cluster.sh status      exit 0 only when every node runs and the cluster is healthy
#   scripts/garage-cluster.sh env         print the client settings (AWS_ACCESS_KEY_ID=..., S3_ENDPOINTS=...)
#   scripts/garage-cluster.sh destroy     stop and delete everything
#
# Idempotent: running nodes, identities, secrets, layout, key and bucket are reused.
# Data and metadata are fsynced (a preservation store must survive a power cut).
# Environment: WEBAIP_GARAGE_DIR (/tmp/webaip-garage), WEBAIP_GARAGE_PORT (3900: node I uses
# PORT+10*I for S3, +1 RPC, +3 admin), GARAGE_BIN (default: garage on PATH or ~/.cargo/bin).
set -euo pipefail
DIR=${WEBAIP_GARAGE_DIR:-/tmp/webaip-garage}
BASE=${WEBAIP_GARAGE_PORT:-3900}
NODES=3
RF=3
BUCKET=webaip-replicas
TIMEOUT=90
VERSION=2.5.0
log() { echo "garage-cluster: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

find_garage() {
  if [ -n "${GARAGE_BIN:-}" ]; then echo "$GARAGE_BIN"; return; fi
  if command -v garage >/dev/null; then command -v garage; return; fi
  local bin=${CARGO_HOME:-$HOME/.cargo}/bin/garage
  if [ -x "$bin" ]; then echo "$bin"; return; fi
  return 1
}

install_garage() {
  local g
  if g=$(find_garage); then echo "$g"; return; fi
  command -v cargo >/dev/null || die "cargo is needed to install Garage"
  if ! command -v cc >/dev/null || ! command -v make >/dev/null; then
    bash "$(dirname "$0")/apt-install.sh" gcc make >&2 # libsodium-sys runs configure and make
  fi
  log "installing Garage $VERSION with cargo (about 7-10 minutes on 2 cores)"
  CARGO_TARGET_DIR=${CARGO_TARGET_DIR_GARAGE:-/tmp/webaip-garage-build} \
    cargo install garage --version "$VERSION" --locked --quiet >&2
  find_garage || die "cargo install garage did not leave a garage binary"
}

s3_port() { echo $((BASE + 10 * $1)); }
rpc_port() { echo $((BASE + 10 * $1 + 1)); }
admin_port() { echo $((BASE + 10 * $1 + 3)); }
ndir() { echo "$DIR/node$1"; }
pidf() { echo "$(ndir "$1")/garage.pid"; }
cfg() { echo "$(ndir "$1")/garage.toml"; }
g() { local i=$1; shift; RUST_LOG=warn "$GARAGE" -c "$(cfg "$i")" "$@"; }

running() { # node I alive, and the pid is this node's garage (a stale pid file never matches)
  local p
  [ -f "$(pidf "$1")" ] && p=$(cat "$(pidf "$1")") && kill -0 "$p" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$(cfg "$1") server"
}

first_up() {
  local i
  for ((i = 0; i < NODES; i++)); do running "$i" && { echo "$i"; return 0; }; done
  return 1
}

rand_hex() { od -An -vtx1 -N "$1" /dev/urandom | tr -d ' \n'; }

secrets() {
  mkdir -p "$DIR"
  chmod 700 "$DIR"
  (
    umask 077
    [ -s "$DIR/rpc_secret" ] || rand_hex 32 >"$DIR/rpc_secret"
    [ -s "$DIR/admin_token" ] || rand_hex 32 >"$DIR/admin_token"
    [ -s "$DIR/access_key" ] || echo "GK$(rand_hex 12)" >"$DIR/access_key"
    [ -s "$DIR/secret_key" ] || rand_hex 32 >"$DIR/secret_key"
  )
}

write_config() {
  local i=$1 d
  d=$(ndir "$i")
  mkdir -p "$d/meta" "$d/data"
  (
    umask 077
    cat >"$d/garage.toml.new" <<EOF
# written by webaip scripts/garage-cluster.sh: node $i of $NODES
metadata_dir = "$d/meta"
data_dir = "$d/data"
db_engine = "lmdb"
replication_factor = $RF
consistency_mode = "consistent"
metadata_fsync = true
data_fsync = true
# Blocks stored plain: every read and scrub re-hashes them against their address.
compression_level = "none"
rpc_bind_addr = "127.0.0.1:$(rpc_port "$i")"
rpc_public_addr = "127.0.0.1:$(rpc_port "$i")"
rpc_secret = "$(cat "$DIR/rpc_secret")"

[s3_api]
s3_region = "garage"
api_bind_addr = "127.0.0.1:$(s3_port "$i")"

[admin]
api_bind_addr = "127.0.0.1:$(admin_port "$i")"
admin_token = "$(cat "$DIR/admin_token")"
EOF
    mv "$d/garage.toml.new" "$(cfg "$i")"
  )
}

start_node() {
  local i=$1 t0=$SECONDS
  if running "$i"; then return 0; fi
  write_config "$i"
  RUST_LOG=${RUST_LOG:-garage=warn} nohup "$GARAGE" -c "$(cfg "$i")" server >>"$(ndir "$i")/garage.log" 2>&1 &
  echo $! >"$(pidf "$i")"
  until g "$i" status >/dev/null 2>&1; do
    running "$i" || die "node $i exited; see $(ndir "$i")/garage.log"
    ((SECONDS - t0 < TIMEOUT)) || die "node $i does not answer after ${TIMEOUT}s"
    sleep 0.2
  done
  log "node $i up (pid $(cat "$(pidf "$i")"), S3 127.0.0.1:$(s3_port "$i"))"
}

stop_node() {
  local i=$1 p
  if running "$i"; then
    p=$(cat "$(pidf "$i")")
    kill "$p"
    for _ in $(seq 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$p" 2>/dev/null; then kill -9 "$p"; fi
    log "node $i stopped"
  fi
  rm -f "$(pidf "$i")"
}

node_id() { g "$1" node id -q 2>/dev/null | head -n1; }

connect_all() {
  local i j id
  for ((j = 0; j < NODES; j++)); do
    running "$j" || continue
    id=$(node_id "$j")
    for ((i = 0; i < NODES; i++)); do
      if [ "$i" != "$j" ] && running "$i"; then g "$i" node connect "$id" >/dev/null; fi
    done
  done
}

ensure_layout() {
  local a=$1 i id v shown changed=0
  v=$(g "$a" layout show 2>/dev/null | sed -n 's/^Current cluster layout version: \([0-9]*\).*/\1/p')
  [ -n "$v" ] || die "cannot read the layout from node $a"
  shown=$(g "$a" layout show | sed -n '/CURRENT CLUSTER LAYOUT/,/^====/p')
  for ((i = 0; i < NODES; i++)); do
    running "$i" || continue
    id=$(node_id "$i")
    id=${id%%@*}
    if ! grep -q "${id:0:16}" <<<"$shown"; then
      # The node id goes before the options (-t takes several values).
      g "$a" layout assign "${id:0:16}" -z "site$i" -c 1G -t "node$i" >/dev/null
      changed=1
    fi
  done
  if [ "$changed" = 1 ]; then
    g "$a" layout apply --version $((v + 1)) >/dev/null
    log "layout version $((v + 1)): $NODES zones, replication factor $RF"
  fi
}

wait_healthy() {
  local a=$1 t0=$SECONDS
  until g "$a" health -q >/dev/null 2>&1; do
    ((SECONDS - t0 < TIMEOUT)) || die "cluster not healthy after ${TIMEOUT}s"
    sleep 0.5
  done
}

ensure_key_bucket() {
  local a=$1 ak sk
  ak=$(cat "$DIR/access_key")
  sk=$(cat "$DIR/secret_key")
  g "$a" key info "$ak" >/dev/null 2>&1 || g "$a" key import --yes -n webaip "$ak" "$sk" >/dev/null
  g "$a" bucket info "$BUCKET" >/dev/null 2>&1 || g "$a" bucket create "$BUCKET" >/dev/null
  g "$a" bucket allow --read --write --owner "$BUCKET" --key "$ak" >/dev/null
}

print_env() {
  local i endpoints=""
  for ((i = 0; i < NODES; i++)); do endpoints+="${endpoints:+,}http://127.0.0.1:$(s3_port "$i")"; done
  cat <<EOF
AWS_ACCESS_KEY_ID=$(cat "$DIR/access_key")
AWS_SECRET_ACCESS_KEY=$(cat "$DIR/secret_key")
AWS_REGION=garage
S3_ENDPOINTS=$endpoints
S3_BUCKET=$BUCKET
GARAGE_DIR=$DIR
EOF
}

cmd=${1:-status}
node=${2:-}
case "$cmd" in
  start)
    GARAGE=$(install_garage)
    secrets
    if [ -n "$node" ]; then start_node "$node"; else
      for ((i = 0; i < NODES; i++)); do start_node "$i"; done
    fi
    connect_all
    a=$(first_up) || die "no node running"
    ensure_layout "$a"
    if [ -z "$node" ]; then wait_healthy "$a"; fi
    ensure_key_bucket "$a"
    print_env
    ;;
  stop)
    GARAGE=$(find_garage || echo garage)
    if [ -n "$node" ]; then stop_node "$node"; else
      for ((i = 0; i < NODES; i++)); do stop_node "$i"; done
    fi
    ;;
  status)
    GARAGE=$(find_garage) || die "Garage is not installed"
    rc=0
    for ((i = 0; i < NODES; i++)); do
      if running "$i"; then echo "node $i: running (pid $(cat "$(pidf "$i")"))"; else
        echo "node $i: stopped"
        rc=1
      fi
    done
    if a=$(first_up); then g "$a" health -q >/dev/null 2>&1 || rc=1; else rc=1; fi
    exit $rc
    ;;
  env) print_env ;;
  destroy)
    GARAGE=$(find_garage || echo garage)
    for ((i = 0; i < NODES; i++)); do stop_node "$i"; done
    case "$DIR" in / | "") die "refusing to delete '$DIR'" ;; esac
    rm -rf "$DIR"
    ;;
  *)
    echo "usage: $0 start [I] | stop [I] | status | env | destroy" >&2
    exit 2
    ;;
esac
