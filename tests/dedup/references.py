"""Follows what a deduplicated package's METS states of each revisit's payload, with lxml,
zlib and warcio (none of webaip's code): for every record <file> whose ADMID names a PREMIS
bitstream object, reads the original record's bytes at the stated container and byte range
(in the package the object says it is included in, else this one), and checks that warcio
reads there the stated record, that the stated payload range of the decompressed record has
the stated SHA-1 and size, and that the revisit the object is required by is the <file>'s own
record, whose WARC-Payload-Digest and WARC-Refers-To agree.

Usage: references.py PACKAGE [EARLIER_PACKAGE...]; prints one JSON object."""

import base64
import hashlib
import io
import json
import re
import sys
import zlib

from lxml import etree
from warcio.archiveiterator import ArchiveIterator

NS = {"mets": "http://www.loc.gov/METS/", "premis": "http://www.loc.gov/premis/v3",
      "xsi": "http://www.w3.org/2001/XMLSchema-instance"}


def objid(folder):
    return etree.parse(folder + "/METS.xml").getroot().get("OBJID")


def read_range(path, begin, end):
    with open(path, "rb") as f:
        f.seek(begin)
        return f.read(end - begin + 1)


def record_of(member):
    """The decompressed record and warcio's reading of it."""
    raw = zlib.decompress(member, 16 + zlib.MAX_WBITS) if member[:2] == b"\x1f\x8b" else member
    for r in ArchiveIterator(io.BytesIO(member)):
        return raw, r, r.content_stream().read()
    return raw, None, None


def text(el, path):
    return el.findtext(path, namespaces=NS)


def check(pkg, packages, f, obj, problems):
    owner = f.get("OWNERID")
    said = lambda what: problems.append(f"{owner}: {what}")
    rels = {(text(r, "premis:relationshipType"), text(r, "premis:relationshipSubType")):
            text(r, "premis:relatedObjectIdentifier/premis:relatedObjectIdentifierValue")
            for r in obj.findall("premis:relationship", NS)}
    if rels.get(("dependency", "is required by")) != owner:
        said(f"required by {rels.get(('dependency', 'is required by'))}")
    holder = rels.get(("structural", "is included in"))
    folder = packages.get(holder) if holder else pkg
    if folder is None:
        return said(f"package {holder} not given")
    locs = {text(s, "premis:contentLocation/premis:contentLocationType"):
            text(s, "premis:contentLocation/premis:contentLocationValue")
            for s in obj.findall("premis:storage", NS)}
    m = re.fullmatch(r"(\S+) BEGIN=(\d+) END=(\d+)", locs.get("record in container") or "")
    p = re.fullmatch(r"BEGIN=(\d+) END=(\d+)", locs.get("payload in decompressed record") or "")
    if not m or not p:
        return said(f"locations {locs}")
    raw, rec, body = record_of(read_range(folder + "/" + m[1], int(m[2]), int(m[3])))
    if rec is None:
        return said("no record at the stated range")
    sha1 = text(obj, "premis:objectCharacteristics/premis:fixity/premis:messageDigest")
    size = int(text(obj, "premis:objectCharacteristics/premis:size"))
    stated_id = text(obj, "premis:objectIdentifier/premis:objectIdentifierValue")
    if rec.rec_headers.get_header("WARC-Record-ID") != f"<{stated_id}>":
        said(f"record {rec.rec_headers.get_header('WARC-Record-ID')} at the range, not {stated_id}")
    if hashlib.sha1(body).hexdigest() != sha1 or len(body) != size:
        said("warcio's payload differs from the stated SHA-1 and size")
    payload = raw[int(p[1]):int(p[2]) + 1]
    if hashlib.sha1(payload).hexdigest() != sha1 or len(payload) != size:
        said("the stated payload range does not hold the stated payload")
    container = f.getparent().find("mets:FLocat", NS)
    # The revisit itself, at its own <file>'s range in this package.
    href = container.get("{http://www.w3.org/1999/xlink}href")
    _, revisit, _ = record_of(read_range(pkg + "/" + href, int(f.get("BEGIN")), int(f.get("END"))))
    h = revisit.rec_headers
    b32 = "sha1:" + base64.b32encode(bytes.fromhex(sha1)).decode()
    if revisit.rec_type != "revisit" or h.get_header("WARC-Payload-Digest") != b32:
        said(f"the revisit's digest {h.get_header('WARC-Payload-Digest')} is not {b32}")
    if h.get_header("WARC-Refers-To") != f"<{stated_id}>":
        said(f"the revisit refers to {h.get_header('WARC-Refers-To')}")


def main():
    pkg, earlier = sys.argv[1], sys.argv[2:]
    packages = {objid(e): e for e in earlier}
    doc = etree.parse(pkg + "/METS.xml")
    amd = {a.get("ID"): a for a in doc.iterfind(".//mets:amdSec", NS)}
    problems, revisits = [], 0
    for f in doc.iterfind(".//mets:file[@ADMID]", NS):
        for token in f.get("ADMID").split():
            for obj in amd[token].iterfind(".//premis:object", NS):
                if obj.get("{%s}type" % NS["xsi"]) == "premis:bitstream":
                    revisits += 1
                    try:
                        check(pkg, packages, f, obj, problems)
                    except Exception as e:  # a range that reads nothing, a member that is no gzip
                        problems.append(f"{f.get('OWNERID')}: {e!r}")
    print(json.dumps({"revisits": revisits, "problems": problems}))


main()
