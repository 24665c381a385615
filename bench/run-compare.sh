#!/usr/bin/env bash
# The current tree beside a base revision, same machine, same run (issue 16's targets):
#   bash bench/run-compare.sh [BASE_REV] [--size 200M] [--repeat 3] [--clamd-tmp shm|disk]
#                             [--no-clamd] [--max-ratio 1.02]
# WEBAIP_BENCH_PROFILE=ci builds both binaries with the test suite's profile instead of release
# (no link-time optimisation: faster to build, the same code on both sides).
# BASE_REV defaults to ad922af (before the Heritrix package path was restructured). Its release
# binary is built in a throw-away git worktree under bench/work/base/ with a target directory
# of its own there (the main target/ is untouched) and kept as bench/work/base/webaip-<commit>:
# a later run with the same revision builds nothing. Then bench/compare_bench.py times both
# binaries on the generated crawl ARC migrate_bench.py uses (see there for what is timed).
# Needs about 1.5 GB (the base's target directory) plus 1 GB per 200 MB of ARC in bench/work.
set -euo pipefail
cd "$(dirname "$0")/.."
base_rev=ad922af
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then base_rev=$1; shift; fi

bash scripts/setup-build-env.sh
# warcio (extracting payloads for clamdscan) is in the test environment's .venv; ClamAV is
# installed by scripts/clamd-local.sh when the benchmark first starts clamd.
if ! .venv/bin/python -c 'import warcio' 2>/dev/null; then bash scripts/setup-test-env.sh; fi
profile=${WEBAIP_BENCH_PROFILE:-release}
cargo build --profile "$profile" --quiet

sha=$(git rev-parse --verify "$base_rev^{commit}")
work=$PWD/bench/work/base
bin=$work/webaip-$sha-$profile
if [ ! -x "$bin" ]; then
  mkdir -p "$work"
  tree=$work/tree-$sha
  git worktree prune
  [ -d "$tree" ] || git worktree add --detach --quiet "$tree" "$sha"
  # Seeded with the current tree's release build: the dependencies are mostly the same
  # compiled crates, and cargo rebuilds whatever differs. Copied with their times (cp -a):
  # with new ones, cargo takes generated sources for newer than what was built from them and
  # rebuilds everything.
  if [ ! -d "$work/target/$profile" ]; then
    mkdir -p "$work/target"
    cp -a "target/$profile" "$work/target/$profile"
  fi
  (cd "$tree" && CARGO_TARGET_DIR="$work/target" cargo build --profile "$profile" --quiet)
  cp "$work/target/$profile/webaip" "$bin.tmp" && mv "$bin.tmp" "$bin"
  git worktree remove --force "$tree"
fi

new_label="$(git rev-parse --short HEAD) (working tree)"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  new_label="$(git rev-parse --short HEAD) (working tree, with uncommitted changes)"
fi
exec .venv/bin/python bench/compare_bench.py --base "$bin" --new "target/$profile/webaip" \
  --base-label "$(git log -1 --format='%h (%as) %s' "$sha" | cut -c1-90)" --new-label "$new_label" "$@"
