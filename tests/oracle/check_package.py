#!/usr/bin/env python3
"""Independent check of a package, with Python's own XML, zlib and hashlib (not webaip's code).

For every container <file> of the METS: the file exists with its SIZE and SHA-512. For every
nested record <file>: bytes BEGIN..END of the container are exactly one gzip member that
decompresses to a WARC record (blank lines before its version line, which a copied WARC may
keep, included) where the METS states a GZIP transform (and types it
application/gzip), and exactly one plain WARC record where it states none. For every nested content <file>: bytes BEGIN..END of the
decompressed record have its SIZE and SHA-512. Every container's PREMIS object states its number
of WARC records (significantProperties), and warcio counts as many. Every line of
manifest-sha512.txt matches. Archivematica's metsrw opens the METS and finds every file of
the fileSec.
Prints a JSON summary; exit 1 with the problems listed when anything is wrong.
"""
import hashlib
import json
import os
import sys
import xml.etree.ElementTree as ET
import zlib

M = "{http://www.loc.gov/METS/}"
XLINK = "{http://www.w3.org/1999/xlink}href"
P = "{http://www.loc.gov/premis/v3}"


def stated_records(tree, admid):
    """The "WARC records" significant property of the PREMIS object in the amdSecs of ADMID."""
    for amd_id in (admid or "").split():
        for sec in tree.iter():
            if sec.get("ID") != amd_id:
                continue
            for prop in sec.iter(P + "significantProperties"):
                if prop.findtext(P + "significantPropertiesType") == "WARC records":
                    return int(prop.findtext(P + "significantPropertiesValue"))
    return None


def warcio_records(path):
    """Records warcio reads; where warcio gives up (a WARC gzipped as one stream, which it
    refuses), records counted by decompressing every member with zlib and walking the
    Content-Lengths."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed
    try:
        with open(path, "rb") as f:
            return sum(1 for _ in ArchiveIterator(f))
    except ArchiveLoadFailed:
        return zlib_records(open(path, "rb").read())


def zlib_records(data):
    if data[:2] == b"\x1f\x8b":
        out = []
        while data:
            d = zlib.decompressobj(31)
            out.append(d.decompress(data) + d.flush())
            data = d.unused_data
        data = b"".join(out)
    n, pos = 0, 0
    while pos < len(data):
        end = data.find(b"\r\n\r\n", pos)
        if end < 0 or not data.startswith(b"WARC/", pos):
            break
        length = 0
        for line in data[pos:end].split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1].strip())
        pos = end + 4 + length + 4
        n += 1
    return n


def warcio_payload_of(record):
    """The payload warcio reads from one WARC record's bytes (after the HTTP headers it parses),
    or None when warcio cannot read the record at all."""
    import io
    import logging
    from warcio.archiveiterator import ArchiveIterator
    logging.disable(logging.WARNING)
    try:
        for r in ArchiveIterator(io.BytesIO(record), check_digests=False):
            return r.raw_stream.read()
    except Exception:
        return None
    return None


def metsrw_problems(pkg, tree):
    import metsrw
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from check_metsrw import wait_past_createdate
    path = os.path.join(pkg, "METS.xml")
    wait_past_createdate(path)
    try:
        doc = metsrw.METSDocument.fromfile(path)
    except Exception as err:  # any failure to open is the finding
        return ["metsrw cannot open the METS: %r" % err]
    seen = sorted(e.path for e in doc.all_files() if e.type == "Item")
    # metsrw reads an FLocat as a URL and so percent-decodes it; webaip writes file names as
    # they are on disk (its own escapes include '%'), so compare decoded names.
    from urllib.parse import unquote
    listed = sorted(unquote(f.find(M + "FLocat").get(XLINK)) for g in tree.iter(M + "fileGrp") for f in g.findall(M + "file"))
    seen = sorted(unquote(p) for p in seen)
    if seen != listed:
        return ["metsrw finds %s; the fileSec lists %s" % (seen, listed)]
    return []


def main(pkg):
    problems = []
    counts = {"containers": 0, "records": 0, "contents": 0, "manifest": 0}
    tree = ET.parse(os.path.join(pkg, "METS.xml"))
    for grp in tree.iter(M + "fileGrp"):
        for f in grp.findall(M + "file"):
            loc = f.find(M + "FLocat")
            path = os.path.join(pkg, loc.get(XLINK))
            data = open(path, "rb").read()
            counts["containers"] += 1
            if f.get("MIMETYPE") == "application/warc":
                stated = stated_records(tree, f.get("ADMID"))
                found = warcio_records(path)
                if stated != found:
                    problems.append("%s: the METS states %s WARC records, warcio reads %d" % (path, stated, found))
            if len(data) != int(f.get("SIZE")):
                problems.append("%s: size %d, METS says %s" % (path, len(data), f.get("SIZE")))
            if hashlib.sha512(data).hexdigest() != f.get("CHECKSUM"):
                problems.append("%s: SHA-512 differs from the METS" % path)
            for rec in f.findall(M + "file"):
                counts["records"] += 1
                b, e = int(rec.get("BEGIN")), int(rec.get("END"))
                member = data[b:e + 1]
                if rec.find(M + "transformFile") is not None:
                    d = zlib.decompressobj(31)
                    try:
                        record = d.decompress(member) + d.flush()
                    except zlib.error as err:
                        problems.append("%s %s: not a gzip member: %s" % (path, rec.get("ID"), err))
                        continue
                    if not d.eof or d.unused_data:
                        problems.append("%s %s: BEGIN..END is not exactly one gzip member" % (path, rec.get("ID")))
                    if rec.get("MIMETYPE") != "application/gzip":
                        problems.append("%s %s: a gzip member typed %s" % (path, rec.get("ID"), rec.get("MIMETYPE")))
                else:
                    # No transform stated: the range is the WARC record itself, from its
                    # version line to the CR LF CR LF after its block, and is typed so.
                    record = member
                    if member[:2] == b"\x1f\x8b" or rec.get("MIMETYPE") == "application/gzip":
                        problems.append("%s %s: gzip data or type without a GZIP transform" % (path, rec.get("ID")))
                    own = record.lstrip(b"\r\n")
                    head_end = own.find(b"\r\n\r\n")
                    length = None
                    for line in own[:max(head_end, 0)].split(b"\r\n"):
                        if line.lower().startswith(b"content-length:"):
                            length = int(line.split(b":", 1)[1].strip() or b"-1")
                    if head_end < 0 or length is None or len(own) != head_end + 4 + length + 4 \
                            or not own.endswith(b"\r\n\r\n"):
                        problems.append("%s %s: BEGIN..END is not exactly one WARC record" % (path, rec.get("ID")))
                # Blank lines before the version line are tolerated (a copied WARC keeps them):
                # they are the record's bytes, and every range counts them.
                lead = len(record) - len(record.lstrip(b"\r\n"))
                if not record[lead:].startswith(b"WARC/"):
                    problems.append("%s %s: not a WARC record" % (path, rec.get("ID")))
                warcio_payload = warcio_payload_of(record[lead:])
                for c in rec.findall(M + "file"):
                    counts["contents"] += 1
                    cb, ce = int(c.get("BEGIN")), int(c.get("END"))
                    payload = record[cb:ce + 1]
                    if len(payload) != int(c.get("SIZE")):
                        problems.append("%s %s: payload size %d, METS says %s" % (path, c.get("ID"), len(payload), c.get("SIZE")))
                    if hashlib.sha512(payload).hexdigest() != c.get("CHECKSUM"):
                        problems.append("%s %s: payload SHA-512 differs" % (path, c.get("ID")))
                    # The payload the METS locates is the one warcio reads (one rule for where
                    # a payload starts, shared with warcio).
                    if warcio_payload is not None and warcio_payload != payload:
                        problems.append("%s %s: warcio reads a payload of %d bytes there, the METS states %d" % (
                            path, c.get("ID"), len(warcio_payload), len(payload)))
                    counts["warcio_payloads"] = counts.get("warcio_payloads", 0) + (warcio_payload is not None)
    # Archivematica's METS library opens the package and finds every file of the fileSec.
    problems.extend(metsrw_problems(pkg, tree))
    for line in open(os.path.join(pkg, "manifest-sha512.txt"), encoding="utf-8"):
        digest, rel = line.rstrip("\n").split("  ", 1)
        counts["manifest"] += 1
        if hashlib.sha512(open(os.path.join(pkg, rel), "rb").read()).hexdigest() != digest:
            problems.append("manifest: %s does not match" % rel)
    json.dump({"counts": counts, "problems": problems}, sys.stdout)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
