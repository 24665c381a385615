"""Reads a package's METS on its own (ElementTree; no webaip code), cuts every described
bytestream out of its container at the ranges the METS gives (the record's gzip member, then
the payload inside the decompressed record), writes each to OUTDIR and identifies it with
siegfried (pygfried), printing JSON:

    {"siegfried": version,
     "payloads": [{"id": object id, "uri": original name, "declared": type, "puids": [what the METS records],
                   "unidentified": bool (the METS says no signature matched),
                   "text": the text class the METS says a plain text match rests on, or null,
                   "contradiction": note or null, "not_confirmed": note or null,
                   "basis": [the basis each match rests on], "sha512_ok": bool,
                   "decoding": the note on its HTTP Content-Encoding, or null,
                   "siegfried": [{"id", "basis"}]}]}

Usage: identified_package.py OUTDIR PACKAGE
"""

import gzip
import hashlib
import json
import os
import sys
import xml.etree.ElementTree as ET
import zlib

try:
    import pygfried
except ImportError as e:  # the project's test environment installs it
    sys.exit(f"pygfried is not importable ({e}): run scripts/setup-test-env.sh")

NS = {
    "mets": "http://www.loc.gov/METS/",
    "premis": "http://www.loc.gov/premis/v3",
    "xlink": "http://www.w3.org/1999/xlink",
}
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"


def objects(root):
    """What each amdSec's PREMIS object records of its formats, by amdSec ID."""
    out = {}
    for amd in root.iter("{%s}amdSec" % NS["mets"]):
        obj = amd.find(".//premis:object", NS)
        if obj is None:
            continue
        oid = obj.findtext("premis:objectIdentifier/premis:objectIdentifierValue", "", NS)
        uri = obj.findtext("premis:originalName", None, NS)
        puids, declared, unidentified, contradiction, text = [], None, False, None, None
        not_confirmed, basis, decoding = None, [], None
        for f in obj.findall("premis:objectCharacteristics/premis:format", NS):
            notes = [n.text or "" for n in f.findall("premis:formatNote", NS)]
            for n in notes:
                for part in n.split("; "):
                    if "Content-Encoding" in part or part.startswith("not identified: content-encoded"):
                        decoding = part
            key = f.findtext("premis:formatRegistry/premis:formatRegistryKey", None, NS)
            if any(n.startswith("identified by ") for n in notes) and key:
                puids.append(key)
                for n in notes:
                    if "; basis: " in n:
                        basis.append(n.split("; basis: ", 1)[1])
                    said = n.rpartition("its first bytes are ")[2]
                    if said != n and said.endswith(" text"):
                        text = said[:-len(" text")]
            if "declared by the harvest" in notes:
                declared = f.findtext("premis:formatDesignation/premis:formatName", "", NS)
                unidentified = any(n.startswith("no PRONOM signature matches") for n in notes)
                for n in notes:
                    if n.startswith("contradicted by the bytes: "):
                        contradiction = n[len("contradicted by the bytes: "):]
                    if n.startswith("not confirmed by the bytes: "):
                        not_confirmed = n[len("not confirmed by the bytes: "):]
        if declared is not None:
            out[amd.get("ID")] = {
                "id": oid,
                "uri": uri,
                "declared": declared,
                "puids": puids,
                "unidentified": unidentified,
                "contradiction": contradiction,
                "not_confirmed": not_confirmed,
                "basis": basis,
                "text": text,
                "decoding": decoding,
            }
    return out


def payloads(root, pkg, described):
    """(amdSec ID, payload bytes, SHA-512 stated) of every described bytestream."""
    for container in root.iter("{%s}file" % NS["mets"]):
        loc = container.find("mets:FLocat", NS)
        if loc is None:
            continue
        with open(os.path.join(pkg, loc.get(XLINK_HREF)), "rb") as f:
            data = f.read()
        for record in container.findall("mets:file", NS):
            begin, end = int(record.get("BEGIN")), int(record.get("END"))
            block = data[begin:end + 1]
            t = record.find("mets:transformFile", NS)
            if t is not None and t.get("TRANSFORMALGORITHM") == "GZIP":
                block = gzip.decompress(block)
            for p in record.findall("mets:file", NS):
                amd = p.get("ADMID")
                if amd not in described:
                    continue
                pb, pe = int(p.get("BEGIN")), int(p.get("END"))
                yield amd, block[pb:pe + 1], p.get("CHECKSUM")


def main(outdir, pkg):
    root = ET.parse(os.path.join(pkg, "METS.xml")).getroot()
    described = objects(root)
    found = []
    for amd, payload, sha in payloads(root, pkg, described):
        name = "%06d" % len(found)
        with open(os.path.join(outdir, name), "wb") as out:
            out.write(payload)
        entry = dict(described[amd])
        entry["name"] = name
        entry["sha512_ok"] = hashlib.sha512(payload).hexdigest() == sha
        found.append(entry)
    result = pygfried.identify_many([os.path.join(outdir, f["name"]) for f in found])
    by_name = {os.path.basename(r["filename"]): r for r in result["files"]}
    for f in found:
        r = by_name.get(f["name"], {})
        f["siegfried"] = [
            {"id": m["id"], "basis": m["basis"]}
            for m in r.get("matches", [])
            if m["ns"] == "pronom"
        ]
    json.dump({"siegfried": pygfried.version(), "payloads": found}, sys.stdout)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
