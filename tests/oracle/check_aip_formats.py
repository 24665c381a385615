"""Reads an AIP's METS with lxml (not webaip's reader) and, for every described bytestream (a
payload <file> with an ADMID, nested in a record <file> with BEGIN/END), cuts its payload out
of the container by those ranges with Python's own zlib, identifies it with siegfried (through
pygfried, an independent PRONOM identifier) and prints, as JSON, what siegfried says beside
what the PREMIS object the ADMID names records:

    [{"admid", "declared", "siegfried": [{"id", "basis"}], "mets": [puids], "unidentified_note": bool,
      "declared_note": bool, "contradiction": str|null}]

Usage: check_aip_formats.py AIPDIR
"""

import json
import os
import sys
import tempfile
import zlib

import pygfried
from lxml import etree

NS = {
    "mets": "http://www.loc.gov/METS/",
    "premis": "http://www.loc.gov/premis/v3",
    "xlink": "http://www.w3.org/1999/xlink",
}


def payload(container, record, content):
    begin, end = int(record.get("BEGIN")), int(record.get("END"))
    with open(container, "rb") as f:
        f.seek(begin)
        member = f.read(end - begin + 1)
    if record.get("MIMETYPE") == "application/gzip":
        member = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(member)
    b, e = int(content.get("BEGIN")), int(content.get("END"))
    return member[b:e + 1]


def main(aip):
    tree = etree.parse(os.path.join(aip, "METS.xml"))
    sections = {}
    for el in tree.iter():
        i = el.get("ID")
        if i:
            sections[i] = el
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for top in tree.iterfind(".//mets:fileSec//mets:fileGrp/mets:file", NS):
            loc = top.find("mets:FLocat", NS)
            if loc is None:
                continue
            container = os.path.join(aip, loc.get("{http://www.w3.org/1999/xlink}href"))
            for record in top.iterfind("mets:file", NS):
                for content in record.iterfind("mets:file", NS):
                    admid = content.get("ADMID")
                    if not admid:
                        continue
                    path = os.path.join(tmp, "%06d" % len(jobs))
                    with open(path, "wb") as f:
                        f.write(payload(container, record, content))
                    jobs.append((admid, content.get("MIMETYPE"), path))
        result = pygfried.identify_many([p for _, _, p in jobs]) if jobs else {"files": []}
        by_path = {r["filename"]: r for r in result["files"]}
        for admid, declared, path in jobs:
            r = by_path.get(path, {})
            sf = [{"id": m["id"], "basis": m["basis"]} for m in r.get("matches", []) if m["ns"] == "pronom"]
            keys, notes = [], []
            for a in admid.split():
                sec = sections.get(a)
                if sec is None:
                    continue
                keys += [k.text for k in sec.iterfind(".//premis:formatRegistryKey", NS)]
                notes += [n.text or "" for n in sec.iterfind(".//premis:formatNote", NS)]
            contradiction = [n for n in notes if n.startswith("contradicted by the bytes")]
            out.append({
                "admid": admid,
                "declared": declared,
                "siegfried": sf,
                "mets": keys,
                "unidentified_note": any(n.startswith("no PRONOM signature matches") for n in notes),
                "declared_note": "declared by the harvest" in notes,
                "contradiction": contradiction[0] if contradiction else None,
            })
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
