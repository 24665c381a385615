#!/usr/bin/env python3
"""Independent reader for the tests: what warcio (and plain zlib) see in a WARC or ARC file.

Prints one JSON document on stdout:
  {"records": [{"type", "uri", "offset", "length", "payload_sha512", "payload_len",
                "block_digest_ok", "payload_digest_ok", "member_ok", "content_type"}...],
   "error": null | "message"}

For gzip WARCs, every record's [offset, offset+length) range is also decompressed with zlib
alone and must hold exactly one gzip member ("member_ok").
"""
import hashlib
import json
import sys
import zlib

from warcio.archiveiterator import ArchiveIterator


def one_member(data):
    d = zlib.decompressobj(31)
    try:
        out = d.decompress(data)
        out += d.flush()
    except zlib.error:
        return False, b""
    return d.eof and not d.unused_data, out


def main(path, arc2warc):
    raw = open(path, "rb").read()
    gz = raw[:2] == b"\x1f\x8b"
    records = []
    error = None
    with open(path, "rb") as f:
        it = ArchiveIterator(f, arc2warc=arc2warc, check_digests=True)
        try:
            for rec in it:
                stream = rec.raw_stream
                h = hashlib.sha512()
                n = 0
                while True:
                    chunk = stream.read(65536)
                    if not chunk:
                        break
                    h.update(chunk)
                    n += len(chunk)
                offset = it.get_record_offset()
                entry = {
                    "type": rec.rec_type,
                    "uri": rec.rec_headers.get_header("WARC-Target-URI")
                    or rec.rec_headers.get_header("uri"),
                    "content_type": rec.rec_headers.get_header("Content-Type"),
                    "offset": offset,
                    "payload_sha512": h.hexdigest(),
                    "payload_len": n,
                    "http": rec.http_headers is not None,
                }
                # Finish the record so warcio knows its length and has checked its digests.
                it.read_to_end(rec)
                entry["length"] = it.get_record_length()
                dc = rec.digest_checker
                entry["digest_problems"] = list(dc.problems) if dc is not None else []
                if gz:
                    ok, out = one_member(raw[offset:offset + entry["length"]])
                    entry["member_ok"] = ok and out.startswith(b"WARC/") or (ok and arc2warc)
                records.append(entry)
        except Exception as e:  # the test asserts on this
            error = "%s: %s" % (type(e).__name__, e)
    json.dump({"records": records, "error": error}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], arc2warc="--arc" in sys.argv[2:])
