#!/usr/bin/env bash
# Rewrites docs/reference.md from the command definitions (`webaip reference`), after any
# change to a command's options or help. The test `cli_docs::the_committed_reference_is_what_
# the_binary_generates` fails until it is run. WEBAIP=path/to/webaip uses that binary instead
# of building one (with the test suite's profile, so a tested tree builds nothing new).
set -euo pipefail
cd "$(dirname "$0")/.."
out=docs/reference.md
trap 'rm -f "$out.partial"' EXIT
if [[ -n "${WEBAIP:-}" ]]; then
  "$WEBAIP" reference > "$out.partial"
else
  cargo run --quiet --profile ci --features test-hooks -- reference > "$out.partial"
fi
mv "$out.partial" "$out"
echo "wrote $out"
