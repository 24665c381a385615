"""Two crawls of one site, the second storing about 73 % of its payload bytes unchanged from
the first, some of them under new URLs.

    gen_crawls.py OUT_DIR [--pages N] [--seed S] [--unchanged F] [--min-size B] [--max-size B]
                  [--as warc|arc|nedlib|kulturarw3]

Writes the crawls under OUT_DIR/crawl1 and OUT_DIR/crawl2 (payloads random, so they do not
compress) and prints JSON: payload bytes of the second crawl, those unchanged, the URLs whose
payload is unchanged (old and new), and the moved ones. As WARC (warcio): crawlN/crawlN.warc.gz,
a warcinfo record, then a request and a response per page. As ARC (scripts/gen_arc.py's writer,
one gzip member per record, as Heritrix 1.x wrote them): crawlN/crawlN-<date>.arc.gz, a filedesc
record, then a record per page holding its HTTP response. As a NEDLIB harvest: crawlN/<day>/0000/
a `.meta` (status line, header fields, Arc-Url, Arc-Length) and a data file per page, both named
by the MD5 of the URL. As a Kulturarw3 archive: crawlN/archive/<hh>/<host>/<snapshot>/ one MIME
file per page, as Heritrix's Kw3WriterProcessor writes it (scripts/make_samples.py).
"""

import argparse
import hashlib
import io
import json
import os
import random
import sys
import time

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


def http_head(body, ctype, date):
    """The HTTP header of a page served at `date` (seconds since the epoch), CRLF lines."""
    when = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(date))
    return ("HTTP/1.1 200 OK\r\nDate: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
            % (when, ctype, len(body))).encode()


def write_nedlib(root, date, pages):
    day = time.gmtime(date)
    run = os.path.join(root, "%d-%d-%d" % (day.tm_year, day.tm_mon, day.tm_mday), "0000")
    os.makedirs(run, exist_ok=True)
    for i, (url, body, ctype) in enumerate(pages):
        name = hashlib.md5(url.encode()).hexdigest()
        meta = http_head(body, ctype, date + i)[:-2]  # NEDLIB stores no empty line
        meta += b"Arc-Url: %s\r\nArc-Length: %d\r\n" % (url.encode(), len(body))
        with open(os.path.join(run, name + ".meta"), "wb") as f:
            f.write(meta)
        with open(os.path.join(run, name), "wb") as f:
            f.write(body)


def write_kulturarw3(root, date, pages, snapshot):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
    from make_samples import kw3_heritrix
    for i, (url, body, ctype) in enumerate(pages):
        host = url.split("/")[2]
        name = "%s.%d" % (hashlib.md5(url.encode()).hexdigest(), date + i)
        folder = os.path.join(root, "archive", hashlib.md5(host.encode()).hexdigest()[:2], host, snapshot)
        os.makedirs(folder, exist_ok=True)
        data = kw3_heritrix(url, "192.0.2.80", http_head(body, ctype, date + i), body, ctype, date + i, 200)
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)


def write_arc(path, when, pages):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
    from gen_arc import ArcWriter, http_response
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        w = ArcWriter(f, os.path.basename(path), when)
        for i, (url, body, ctype) in enumerate(pages):
            block = http_response(200, "OK", [("Content-Type", ctype)], body)
            w.record(url, "192.0.2.80", when, ctype, block)


def write(out, n, fmt, pages):
    """Crawl `n` (1 or 2) in format `fmt`."""
    date = ["2024-01-10T10:00:00Z", "2024-02-10T10:00:00Z"][n - 1]
    epoch = [1704880800, 1707559200][n - 1]
    root = os.path.join(out, "crawl%d" % n)
    if fmt == "warc":
        write_crawl(os.path.join(root, "crawl%d.warc.gz" % n), date, pages)
    elif fmt == "arc":
        when = ["20240110100000", "20240210100000"][n - 1]
        write_arc(os.path.join(root, "crawl%d-%s.arc.gz" % (n, when)), when, pages)
    elif fmt == "nedlib":
        write_nedlib(root, epoch, pages)
    else:
        write_kulturarw3(root, epoch, pages, str(n))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--pages", type=int, default=60)
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--unchanged", type=float, default=0.73, help="share of payload bytes kept")
    ap.add_argument("--min-size", type=int, default=2_000)
    ap.add_argument("--max-size", type=int, default=40_000)
    ap.add_argument("--as", dest="fmt", choices=["warc", "arc", "nedlib", "kulturarw3"], default="warc")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    kinds = [("text/html", ".html"), ("image/png", ".png"), ("text/css", ".css")]
    first = []
    for i in range(a.pages):
        ctype, ext = kinds[i % 3]
        size = rnd.randint(a.min_size, a.max_size)
        first.append((f"{SITE}p{i}{ext}", rnd.randbytes(size), ctype))
    write(a.out, 1, a.fmt, first)

    # The second crawl: the same pages, changed or not, until 73 % (--unchanged) of its bytes
    # are unchanged; every fifth unchanged one moved to a new URL.
    total = sum(len(b) for _, b, _ in first)
    second, unchanged, kept, moved = [], 0, [], []
    order = list(range(a.pages))
    rnd.shuffle(order)
    for i in order:
        url, body, ctype = first[i]
        if unchanged + len(body) <= a.unchanged * total:
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
    write(a.out, 2, a.fmt, second)
    print(json.dumps({
        "payload_bytes": sum(len(b) for _, b, _ in second),
        "unchanged_bytes": unchanged,
        "unchanged": kept,
        "moved": moved,
    }))


if __name__ == "__main__":
    main()
