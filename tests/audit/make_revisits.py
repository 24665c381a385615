"""Writes, with warcio, the WARCs the reference audit is tested on, into the folder given:
orig.warc.gz (a response), revisit-by-id.warc.gz (a revisit naming it by WARC-Refers-To),
revisit-by-uri.warc.gz (naming it by target URI and date only), revisit-wrong.warc.gz (naming
it by id but stating another payload digest) and revisit-nowhere.warc.gz (naming a record that
exists nowhere)."""
import base64
import hashlib
import io
import os
import sys

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

URL, DATE, ORIG_ID = "http://example.com/page", "2024-03-15T10:30:00Z", "<urn:uuid:00000000-0000-4000-8000-000000000001>"
BODY = b"<html>the payload stored once</html>"


def sha1(b):
    return "sha1:" + base64.b32encode(hashlib.sha1(b).digest()).decode()


def http():
    return StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")


def write(path, records):
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True, warc_version="WARC/1.1")
        for r in records(w):
            w.write_record(r)


def orig(w):
    yield w.create_warc_record(URL, "response", payload=io.BytesIO(BODY), http_headers=http(),
                               warc_headers_dict={"WARC-Record-ID": ORIG_ID, "WARC-Date": DATE})


def revisit(refers_id, digest, n):
    def records(w):
        headers = {"WARC-Record-ID": "<urn:uuid:00000000-0000-4000-8000-00000000010%d>" % n,
                   "WARC-Date": "2024-06-01T00:00:00Z"}
        r = w.create_revisit_record(URL, digest, URL, DATE, http_headers=http(),
                                    warc_headers_dict=headers)
        r.rec_headers.replace_header(
            "WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest")
        if refers_id:
            r.rec_headers.add_header("WARC-Refers-To", refers_id)
        yield r
    return records


out = sys.argv[1]
write(os.path.join(out, "orig.warc.gz"), orig)
write(os.path.join(out, "revisit-by-id.warc.gz"), revisit(ORIG_ID, sha1(BODY), 1))
write(os.path.join(out, "revisit-by-uri.warc.gz"), revisit(None, sha1(BODY), 2))
write(os.path.join(out, "revisit-wrong.warc.gz"), revisit(ORIG_ID, sha1(b"other bytes"), 3))
write(os.path.join(out, "revisit-nowhere.warc.gz"),
      revisit("<urn:uuid:00000000-0000-4000-8000-0000000000ff>", sha1(BODY), 4))
