#!/usr/bin/env bash
# Peak memory of PRONOM identification on one large streamed payload: an MP4 of SIZE bytes
# (default 2 GiB) whose `moov` box is at its end, so the signature (fmt/199) stays pending
# after the first window and the whole stream is spooled (to a temporary file past 16 MiB) and
# searched. Runs the identification benchmark binary (benches/identify.rs, `--stdin`) under
# GNU time; prints the PUIDs found, the wall time and the peak RSS.
#   bash bench/identify_memory.sh [SIZE_IN_MIB]
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${1:-2048}
py=${WEBAIP_ORACLE_PYTHON:-.venv/bin/python}
bin=$(cargo bench --quiet --profile ci --features test-hooks --bench identify --no-run --message-format json |
  "$py" -c 'import json, sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])')
gen() {
  python3 - "$mib" <<'PY'
import struct, sys
size = int(sys.argv[1]) << 20
out = sys.stdout.buffer
ftyp = struct.pack(">I", 24) + b"ftypisom\0\0\2\0isommp41"
moov = struct.pack(">I", 108) + b"moov" + struct.pack(">I", 100) + b"mvhd" + bytes(92)
mdat = size - len(ftyp) - len(moov)
out.write(ftyp + struct.pack(">I", min(mdat, 0xFFFFFFFF)) + b"mdat")
chunk = bytes(range(0x80, 0x100)) * 8192  # never spells a box name
left = mdat - 8
while left > 0:
    out.write(chunk[:left])
    left -= min(left, len(chunk))
out.write(moov)
PY
}
result=$( { gen | /usr/bin/time -f 'peak RSS %M KiB, wall %e s' "$bin" --stdin; } 2>&1 )
echo "payload: ${mib} MiB MP4, moov at the end"
echo "$result"
