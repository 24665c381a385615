"""Every record of a WARC as warcio reads it, as JSON lines: type, URI, the headers a revisit
carries, the HTTP header's length and the payload's SHA-1 (base32) and length."""

import base64
import hashlib
import json
import sys

from warcio.archiveiterator import ArchiveIterator

FIELDS = ["WARC-Record-ID", "WARC-Date", "WARC-Profile", "WARC-Refers-To", "WARC-Refers-To-Target-URI",
          "WARC-Refers-To-Date", "WARC-Refers-To-Container", "X-Webaip-Refers-To-Package",
          "WARC-Payload-Digest", "Content-Length"]

with open(sys.argv[1], "rb") as f:
    for r in ArchiveIterator(f):
        if r.rec_type not in ("response", "revisit"):
            continue
        body = r.content_stream().read()
        out = {"type": r.rec_type, "uri": r.rec_headers.get_header("WARC-Target-URI"),
               "payload_sha1": "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode(),
               "payload_len": len(body),
               "http_len": len(r.http_headers.to_bytes()) if r.http_headers else None,
               "status": r.http_headers.get_statuscode() if r.http_headers else None}
        for k in FIELDS:
            out[k] = r.rec_headers.get_header(k)
        print(json.dumps(out))
