#!/usr/bin/env python3
"""Independent check of a package made from a NEDLIB harvest or a Kulturarw3 archive.

warcio reads every record of the package's WARCs (with their digests checked). For every
`response` record, the metadata record concurrent to it names the stored file(s); the record's
block must be the stored HTTP header bytes followed by the stored body, computed here from the
source files with plain byte operations (not webaip's code):
- NEDLIB: the `.meta` file minus its `Arc-*` lines (an empty line appended in the file's line-end
  style when the stored header has none), then the data file (when there is one);
- Kulturarw3: the Header part (from the line after `HTTP-Part: Header` and its empty line up to
  its empty line, CRLF CRLF or LF LF), then the Content part (after `HTTP-Part: Content` and
  its empty line, up to the line break before the last closing delimiter, which RFC 2046 makes
  the delimiter's: LF, or CRLF when the CR is there and either HTTP-Content-Length says the body
  ends before it or, without such a length, the delimiter line opening the Content part ends
  with CRLF), or nothing.

Usage: check_captures.py PACKAGE SOURCE_ROOT nedlib|kulturarw3. Prints JSON; exit 1 on problems.
"""
import glob
import io
import json
import os
import re
import sys
import zlib


def nedlib_expected(root, fields):
    meta = open(os.path.join(root, fields["nedlib-meta-path"]), "rb").read()
    lines = meta.splitlines(keepends=True)
    kept = [l for l in lines if not l.lower().startswith(b"arc-")]
    header = b"".join(kept)
    if not (header.endswith(b"\r\n\r\n") or header.endswith(b"\n\n")):
        eol = b"\r\n" if lines and lines[0].endswith(b"\r\n") else b"\n"
        if not header.endswith(b"\n"):
            header += eol
        header += eol
    data = fields.get("nedlib-data-path")
    body = open(os.path.join(root, data), "rb").read() if data and os.path.exists(os.path.join(root, data)) else b""
    return header, body


def kw3_expected(root, fields):
    path = os.path.join(root, fields["kw3-path"])
    if not os.path.exists(path):
        path = os.path.join(root, "archive", fields["kw3-path"])
    raw = open(path, "rb").read()
    top_end = re.search(rb"\n\r?\n", raw).start()
    m = re.search(rb'boundary="?([^"\r\n;]+)"?', raw[:top_end])
    b = m.group(1)
    closing = raw.rindex(b"\n--" + b + b"--")
    stated = re.search(rb"(?im)^HTTP-Content-Length: *(\d+)\r?$", raw[:top_end])
    parts = {}
    for pm in re.finditer(rb"(?im)^HTTP-part: *(\S+)\r?\n\r?\n", raw[:closing + 1]):
        parts[pm.group(1).lower()] = pm.end()
    header = b""
    hstart = parts.get(b"header", parts.get(b"header-info"))
    if hstart is not None:
        crlf = raw.find(b"\r\n\r\n", hstart)
        lf = raw.find(b"\n\n", hstart)
        ends = [e + 4 for e in [crlf] if e >= 0] + [e + 2 for e in [lf] if e >= 0]
        header = raw[hstart:min(ends)]
    cstart = parts.get(b"content")
    end = closing
    if cstart is not None and closing > cstart and raw[closing - 1:closing] == b"\r":
        if stated and cstart + int(stated.group(1)) in (closing - 1, closing):
            end = cstart + int(stated.group(1))
        else:
            opening = raw.rindex(b"--" + b, 0, cstart)
            crlf = raw[opening + 2 + len(b):cstart].lstrip(b" \t").startswith(b"\r\n")
            end = closing - 1 if crlf else closing
    body = raw[cstart:end] if cstart is not None else b""
    if not header.startswith(b"HTTP/"):
        header = b""
    return header, body


def warc_fields(block):
    out = {}
    for line in block.decode("utf-8", "replace").splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out.setdefault(k.strip(), v.strip())
    return out


def main(pkg, root, shape):
    from warcio.archiveiterator import ArchiveIterator
    problems, counts = [], {"records": 0, "responses": 0, "checked": 0}
    for path in sorted(glob.glob(os.path.join(pkg, "*", "*.warc.gz"))):
        blocks, meta = {}, {}
        # warcio's digest check, with the HTTP headers parsed (so the payload digest is of the
        # payload), then the blocks as stored.
        with open(path, "rb") as f:
            for rec in ArchiveIterator(f, check_digests=True):
                rec.raw_stream.read()
                if rec.digest_checker.passed is False:
                    problems.append("%s %s: warcio finds a digest that does not match: %s" % (
                        path, rec.rec_headers.get_header("WARC-Record-ID"), rec.digest_checker.problems))
        with open(path, "rb") as f:
            for rec in ArchiveIterator(f, no_record_parse=True):
                counts["records"] += 1
                rid = rec.rec_headers.get_header("WARC-Record-ID")
                block = rec.raw_stream.read()
                if rec.rec_type in ("response", "resource"):
                    blocks[rid] = (rec.rec_type, block)
                elif rec.rec_type == "metadata":
                    meta[rec.rec_headers.get_header("WARC-Concurrent-To")] = warc_fields(block)
        for rid, (kind, block) in blocks.items():
            counts["responses"] += kind == "response"
            fields = meta.get(rid)
            if fields is None:
                problems.append("%s %s: no concurrent metadata record" % (path, rid))
                continue
            header, body = (nedlib_expected if shape == "nedlib" else kw3_expected)(root, fields)
            want = (header if kind == "response" else b"") + body
            if block != want:
                problems.append("%s %s: block (%d bytes) is not the stored header (%d) + body (%d)" % (
                    path, rid, len(block), len(header), len(body)))
            counts["checked"] += 1
    json.dump({"counts": counts, "problems": problems}, sys.stdout)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
