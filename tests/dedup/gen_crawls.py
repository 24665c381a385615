"""Two crawls of one site as WARC files (warcio), the second storing about 73 % of its payload
bytes unchanged from the first, some of them under new URLs.

    gen_crawls.py OUT_DIR [--pages N] [--seed S]

Writes OUT_DIR/crawl1/crawl1.warc.gz and OUT_DIR/crawl2/crawl2.warc.gz (a warcinfo record,
then a request and a response per page; payloads random, so they do not compress) and prints
JSON: payload bytes of the second crawl, those unchanged, the URLs whose payload is unchanged
(old and new), and the moved ones.
"""

import argparse
import io
import json
import os
import random

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

SITE = "http://site.example/"


def write_crawl(path, date, pages):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True, warc_version="WARC/1.1")
        w.write_record(w.create_warcinfo_record(os.path.basename(path), {"software": "gen_crawls.py"}))
        for url, body, ctype in pages:
            http = StatusAndHeaders(
                "200 OK",
                [("Content-Type", ctype), ("Content-Length", str(len(body)))],
                protocol="HTTP/1.1",
            )
            resp = w.create_warc_record(
                url, "response", payload=io.BytesIO(body), http_headers=http,
                warc_headers_dict={"WARC-Date": date},
            )
            req_http = StatusAndHeaders("GET /" + url.split("/", 3)[-1] + " HTTP/1.1",
                                        [("Host", "site.example")], is_http_request=True)
            req = w.create_warc_record(url, "request", payload=io.BytesIO(b""), http_headers=req_http,
                                       warc_headers_dict={"WARC-Date": date})
            req.rec_headers.add_header("WARC-Concurrent-To", resp.rec_headers.get_header("WARC-Record-ID"))
            w.write_record(resp)
            w.write_record(req)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--pages", type=int, default=60)
    ap.add_argument("--seed", type=int, default=29)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    kinds = [("text/html", ".html"), ("image/png", ".png"), ("text/css", ".css")]
    first = []
    for i in range(a.pages):
        ctype, ext = kinds[i % 3]
        size = rnd.randint(2_000, 40_000)
        first.append((f"{SITE}p{i}{ext}", rnd.randbytes(size), ctype))
    write_crawl(os.path.join(a.out, "crawl1", "crawl1.warc.gz"), "2024-01-10T10:00:00Z", first)

    # The second crawl: the same pages, changed or not, until 73 % of its bytes are unchanged;
    # every fifth unchanged one moved to a new URL.
    total = sum(len(b) for _, b, _ in first)
    second, unchanged, kept, moved = [], 0, [], []
    order = list(range(a.pages))
    rnd.shuffle(order)
    for i in order:
        url, body, ctype = first[i]
        if unchanged + len(body) <= 0.73 * total:
            unchanged += len(body)
            new_url = url
            if len(kept) % 5 == 4:
                new_url = url.replace(SITE, SITE + "moved/")
                moved.append(new_url)
            kept.append({"old": url, "new": new_url, "length": len(body)})
            second.append((new_url, body, ctype))
        else:
            second.append((url, rnd.randbytes(len(body)), ctype))
    second.sort(key=lambda p: p[0])
    write_crawl(os.path.join(a.out, "crawl2", "crawl2.warc.gz"), "2024-02-10T10:00:00Z", second)
    print(json.dumps({
        "payload_bytes": sum(len(b) for _, b, _ in second),
        "unchanged_bytes": unchanged,
        "unchanged": kept,
        "moved": moved,
    }))


if __name__ == "__main__":
    main()
