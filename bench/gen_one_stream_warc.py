"""A WARC compressed as one gzip stream (every record in one member), with N HTML responses of
SIZE bytes each: the shape on which reading each payload again from the stream's start made
`webaip pages` quadratic (issue 24). Written with warcio, then gzipped whole.

    python3 bench/gen_one_stream_warc.py OUT.warc.gz N [SIZE]
"""
import gzip
import io
import random
import sys

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

out, n = sys.argv[1], int(sys.argv[2])
size = int(sys.argv[3]) if len(sys.argv) > 3 else 2_000_000
rng = random.Random(24)
plain = io.BytesIO()
w = WARCWriter(plain, gzip=False)
for i in range(n):
    head = b"<html><head><title>Page %d</title></head><body>" % i
    words = b" ".join(rng.choice([b"web", b"archive", b"page", b"%d" % i]) for _ in range(size // 6))
    body = (head + words)[: size - 14] + b"</body></html>"
    h = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
    w.write_record(w.create_warc_record("http://e.org/p%d" % i, "response",
                                        payload=io.BytesIO(body), http_headers=h))
with gzip.open(out, "wb", compresslevel=6) as f:
    f.write(plain.getvalue())
