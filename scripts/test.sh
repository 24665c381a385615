#!/usr/bin/env bash
# The whole test suite, on a new machine or an old one: installs what the tests need (see
# setup-test-env.sh), then runs formatting, lint and every test. CI runs exactly this.
#
# Services: the tests start clamd instances of their own (/tmp/webaip-clamd-test-*) and stop
# each when its last test ends; this script checks that none is left and stops any a crashed
# run left behind. The Garage cluster that setup-test-env.sh starts is stopped when the tests
# end (its data is kept for the next run); a cluster that was already running before is left
# as it was. The Slurm test starts the local Slurm (scripts/slurm-local.sh) and stops it when it
# started it; one a crashed run left running is stopped here, unless it ran before.
set -euo pipefail
cd "$(dirname "$0")/.."

test_daemons() { pgrep -f 'clamd --config-file=/tmp/webaip-clamd-test-' || true; }
stop_test_daemons() {
  for d in /tmp/webaip-clamd-test-*; do
    [ -d "$d" ] && WEBAIP_CLAMD_DIR="$d" bash scripts/clamd-local.sh stop 2>/dev/null
  done
  return 0
}
garage_was_running=no
if bash scripts/garage-cluster.sh status >/dev/null 2>&1; then garage_was_running=yes; fi
slurm_was_running=no
if bash scripts/slurm-local.sh status >/dev/null 2>&1; then slurm_was_running=yes; fi
stop_services() {
  stop_test_daemons
  if [ "$garage_was_running" = no ]; then
    bash scripts/garage-cluster.sh stop >/dev/null 2>&1 || true
  fi
  if [ "$slurm_was_running" = no ]; then
    bash scripts/slurm-local.sh stop >/dev/null 2>&1 || true
  fi
  return 0
}
trap stop_services EXIT

bash scripts/setup-test-env.sh
cargo fmt --all -- --check
# The failure points some tests use (WEBAIP_FAIL_AT) exist only with the test-hooks feature.
cargo clippy --all-targets --features test-hooks --quiet -- -D warnings
# The library's documentation builds without a warning (no link to a private item).
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
cargo test --profile ci --features test-hooks
left=$(test_daemons)
if [ -n "$left" ]; then
  echo "test.sh: the tests left clamd instances running (pids: $(echo $left))" >&2
  exit 1
fi
