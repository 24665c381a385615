"""Extracts every payload of the given WARC and ARC files into OUTDIR (one file each, named by
number, without an extension so that only the bytes count) and identifies each with siegfried
(through pygfried, an independent PRONOM identifier), printing JSON:

    {"siegfried": version, "signatures": details, "seconds": identification time,
     "files": [{"name", "source", "offset", "uri", "matches": [{"id", "basis", "warning"}]}]}

A payload is the record's block less its HTTP headers (response, resource, revisit and
request records with a body). Empty payloads are left out.

Usage: siegfried_payloads.py OUTDIR FILE...
"""

import json
import os
import sys
import time

try:
    import pygfried
except ImportError as e:  # the project's test environment installs it
    sys.exit(f"pygfried is not importable ({e}): run scripts/setup-test-env.sh")
from warcio.archiveiterator import ArchiveIterator


def extract(outdir, paths):
    files = []
    for path in paths:
        with open(path, "rb") as f:
            try:
                read_records(path, f, outdir, files)
            except Exception:  # a broken file: the payloads before the break still count
                pass
    return files


def read_records(path, f, outdir, files):
        it = ArchiveIterator(f, arc2warc=True)
        for record in it:
            if record.rec_type not in ("response", "resource", "revisit", "request"):
                continue
            try:
                data = record.raw_stream.read()
            except Exception:  # a truncated record: what could be read is not a payload
                continue
            if not data:
                continue
            name = "%06d" % len(files)
            with open(os.path.join(outdir, name), "wb") as out:
                out.write(data)
            files.append({
                "name": name,
                "source": os.path.basename(path),
                "offset": it.get_record_offset(),
                "uri": record.rec_headers.get_header("WARC-Target-URI"),
            })


def main(outdir, paths):
    files = extract(outdir, paths)
    scanner = pygfried.Scanner()
    start = time.perf_counter()
    result = pygfried.identify_many([os.path.join(outdir, f["name"]) for f in files])
    seconds = time.perf_counter() - start
    by_name = {os.path.basename(r["filename"]): r for r in result["files"]}
    for f in files:
        r = by_name.get(f["name"], {})
        f["errors"] = r.get("errors", "missing")
        f["matches"] = [
            {"id": m["id"], "basis": m["basis"], "warning": m["warning"]}
            for m in r.get("matches", [])
            if m["ns"] == "pronom"
        ]
    details = [i["details"] for i in result["identifiers"]]
    json.dump({
        "siegfried": pygfried.version(),
        "signatures": details,
        "scanner": scanner.signature,
        "seconds": seconds,
        "files": files,
    }, sys.stdout)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
