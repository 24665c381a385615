#!/usr/bin/env bash
# The whole test suite, on a new machine or an old one: installs what the tests need (see
# setup-test-env.sh), then runs formatting, lint and every test. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-test-env.sh
cargo fmt --all -- --check
cargo clippy --all-targets --quiet -- -D warnings
cargo test --profile ci
