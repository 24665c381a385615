#!/usr/bin/env python3
"""Writes ARC files the way Heritrix 1.x does, for samples and benchmarks.

Nothing here is copied from real crawls: pages, styles and images are generated from a seed,
so the same arguments always give the same bytes.

  gen_arc.py bench OUT.arc.gz --size 200M [--seed N]
      a realistic crawl: HTML-like pages, CSS, DNS records, redirects, 404s and incompressible
      images, one gzip member per record (Heritrix's layout), until OUT reaches --size.
  gen_arc.py single OUT.arc.gz --record-size 1G
      a filedesc and one record of the given size, streamed (never held in memory).
  gen_arc.py large OUT.arc.gz [--size 8M] [--record-size 48M]
      a crawl of --size bytes as `bench` makes it, then one PDF-like record of --record-size
      (half text, half noise): a crawl whose bytes are mostly one large record.
  gen_arc.py redacted OUT.arc [--seed N] [--scale N] [--big N]
      a 2004 crawl whose server answered 189 JPEG URLs, declared image/jpeg, with a line of
      redaction text (ASCII, some ISO-8859-1), beside real JPEG headers and HTML pages: what a
      national library's 2004 ARC holds, for format identification's contradictions. --scale
      multiplies the records; --big adds that many real JPEGs of 3 MiB among them.

The module is also imported by make_samples.py.
"""
import argparse
import gzip
import io
import os
import random
import sys
import zlib

FILEDESC_XML = """<?xml version="1.0" encoding="UTF-8"?>
<arcmetadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns="http://archive.org/arc/1.0/" xmlns:arc="http://archive.org/arc/1.0/">
<arc:software>Heritrix 1.14.4 http://crawler.archive.org</arc:software>
<arc:hostname>{host}</arc:hostname>
<arc:ip>192.0.2.200</arc:ip>
<arc:operator>webaip sample generator</arc:operator>
<dc:description>{description}</dc:description>
<arc:robots>classic</arc:robots>
<dc:format>ARC file version 1.1</dc:format>
<dcterms:conformsTo xsi:type="dcterms:URI" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">http://www.archive.org/web/researcher/ArcFileFormat.php</dcterms:conformsTo>
</arcmetadata>
"""

WORDS = ("archive preservation harvest library national web site page collection heritage "
         "digital record catalogue exhibition research access open public history culture "
         "news report museum science map music photograph letter journal").split()


class ArcWriter:
    """Writes ARC v1 records; with gzip=True one gzip member per record, as Heritrix does."""

    def __init__(self, fp, name, when, gzip_members=True, level=6, host="crawler.example"):
        self.fp = fp
        self.gzip = gzip_members
        self.level = level
        body = ("1 1 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n"
                + FILEDESC_XML.format(host=host, description="sample crawl") + "\n")
        bare = name[:-3] if name.endswith(".gz") else name
        line = "filedesc://%s 0.0.0.0 %s text/plain %d\n" % (bare, when, len(body))
        # The filedesc length counts the blank line that follows it (Heritrix's rule).
        self._emit((line + body).encode())

    def _emit(self, data):
        if self.gzip:
            self.fp.write(gzip.compress(data, compresslevel=self.level, mtime=0))
        else:
            self.fp.write(data)

    def record(self, url, ip, when, mime, block):
        head = ("%s %s %s %s %d\n" % (url, ip, when, mime, len(block))).encode()
        self._emit(head + block + b"\n")

    def streamed_record(self, url, ip, when, mime, size, chunks):
        """One record whose block is produced by `chunks` (an iterator), never held whole."""
        head = ("%s %s %s %s %d\n" % (url, ip, when, mime, size)).encode()
        if not self.gzip:
            self.fp.write(head)
            for c in chunks:
                self.fp.write(c)
            self.fp.write(b"\n")
            return
        comp = zlib.compressobj(self.level, zlib.DEFLATED, 31)
        self.fp.write(comp.compress(head))
        for c in chunks:
            self.fp.write(comp.compress(c))
        self.fp.write(comp.compress(b"\n"))
        self.fp.write(comp.flush())


def http_response(status, reason, headers, body):
    lines = ["HTTP/1.1 %d %s" % (status, reason)] + ["%s: %s" % h for h in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def html_page(rng, host, n_links, size):
    title = " ".join(rng.choice(WORDS) for _ in range(4)).title()
    parts = ["<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>"
             "<link rel=\"stylesheet\" href=\"/css/site.css\"></head><body>\n<h1>%s</h1>\n" % (title, title)]
    total = len(parts[0])
    i = 0
    while total < size:
        if i % 5 == 0 and n_links:
            p = '<p><a href="http://%s/page/%d.html">%s</a> <img src="/img/%d.png" alt="%s"></p>\n' % (
                host, rng.randrange(n_links), rng.choice(WORDS), rng.randrange(50), rng.choice(WORDS))
        else:
            p = "<p>" + " ".join(rng.choice(WORDS) for _ in range(rng.randrange(20, 60))) + ".</p>\n"
        parts.append(p)
        total += len(p)
        i += 1
    parts.append("</body></html>\n")
    return "".join(parts).encode()


def css(rng):
    rules = []
    for i in range(rng.randrange(20, 80)):
        rules.append(".c%d { color: #%06x; margin: %dpx; background: url(/img/%d.png); }" % (
            i, rng.randrange(1 << 24), rng.randrange(20), rng.randrange(50)))
    return ("\n".join(rules) + "\n").encode()


def stamp(base, i):
    """14-digit ARC date, one second per record after `base` (YYYYMMDDhhmm00 + i)."""
    s = int(base[12:14]) + i
    m = int(base[10:12]) + s // 60
    h = int(base[8:10]) + m // 60
    return "%s%02d%02d%02d" % (base[:8], h % 24, m % 60, s % 60)


def write_bench(path, size, seed):
    rng = random.Random(seed)
    host = "www.example.org"
    name = os.path.basename(path)
    when = "20240315103000"
    with open(path, "wb") as f:
        w = ArcWriter(f, name, when)
        w.record("dns:" + host, "192.0.2.53", when, "text/dns",
                 ("%s\n%s.\t3600\tIN\tA\t192.0.2.10\n" % (when, host)).encode())
        i = 0
        pages = max(10, size // 40000)
        while f.tell() < size:
            i += 1
            t = stamp(when, i % 3600)
            kind = rng.random()
            if kind < 0.60:
                body = html_page(rng, host, pages, rng.randrange(3000, 80000))
                url, mime = "http://%s/page/%d.html" % (host, i), "text/html"
            elif kind < 0.67:
                body = css(rng)
                url, mime = "http://%s/css/%d.css" % (host, i), "text/css"
            elif kind < 0.93:
                # Incompressible: stands for JPEG/PNG/video bytes.
                body = rng.randbytes(rng.choice([5000, 20000, 60000, 250000]))
                url, mime = "http://%s/img/%d.png" % (host, i), "image/png"
            elif kind < 0.965:
                body = b""
                loc = "http://%s/page/%d.html" % (host, i + 1)
                block = http_response(301, "Moved Permanently", [("Location", loc), ("Content-Length", "0")], body)
                w.record("http://%s/old/%d" % (host, i), "192.0.2.10", t, "text/html", block)
                continue
            else:
                body = b"<html><body>Not Found</body></html>\n"
                block = http_response(404, "Not Found", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))], body)
                w.record("http://%s/missing/%d" % (host, i), "192.0.2.10", t, "text/html", block)
                continue
            block = http_response(200, "OK", [("Content-Type", mime), ("Content-Length", str(len(body)))], body)
            w.record(url, "192.0.2.10", t, mime, block)


def write_large(path, size, record_size, seed):
    """A crawl of `size` bytes of ordinary records (as `bench`) followed by one record of
    `record_size` bytes, a PDF-like body (each MiB half text, half noise): a crawl whose bytes
    are mostly that one record."""
    write_bench(path, size, seed)
    rng = random.Random(seed + 1)
    half = 1 << 19
    text = " ".join(rng.choice(WORDS) for _ in range(half // 5)).encode()[:half]
    header = http_response(200, "OK", [("Content-Type", "application/pdf"), ("Content-Length", str(record_size))], b"")

    def chunks():
        yield header
        left, n = record_size, 0
        while left:
            block = (text[n % 997:] + text[:n % 997] + rng.randbytes(half))[:left]
            yield block
            left -= len(block)
            n += 1

    name = os.path.basename(path)
    with open(path, "ab") as f:
        w = ArcWriter.__new__(ArcWriter)
        w.fp, w.gzip, w.level = f, path.endswith(".gz"), 6
        w.streamed_record("http://www.example.org/report.pdf", "192.0.2.10", "20240315113000",
                          "application/pdf", len(header) + record_size, chunks())


def write_single(path, record_size, seed):
    rng = random.Random(seed)
    name = os.path.basename(path)
    when = "20240315103000"
    header = http_response(200, "OK", [("Content-Type", "video/mp4"), ("Content-Length", str(record_size))], b"")
    total = len(header) + record_size

    def chunks():
        yield header
        left = record_size
        block = rng.randbytes(1 << 20)
        while left:
            n = min(left, len(block))
            # Vary the chunk so the data stays incompressible without generating 1 GiB of randomness.
            yield bytes([left & 0xFF]) + block[1:n] if n else b""
            left -= n

    with open(path, "wb") as f:
        w = ArcWriter(f, name, when, gzip_members=path.endswith(".gz"), level=1)
        w.streamed_record("http://www.example.org/big.mp4", "192.0.2.10", when, "video/mp4", total, chunks())


REDACTIONS = (
    b"This image has been removed.\n",
    b"This file has been removed at the request of the rights holder.\r\n",
    b"Image withheld (copyright).",
    "Billedet er fjernet efter \u00f8nske fra rettighedshaveren.\n".encode("latin-1"),
)


def jfif(rng, size):
    """JPEG bytes as a JFIF 1.01 file starts and ends (SOI, APP0, comments of random bytes,
    EOI): what PRONOM's JFIF signature looks at."""
    head = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    body = rng.randbytes(size).replace(b"\xff", b"\x00")
    # A comment segment holds at most 65533 bytes: a large body takes several.
    parts = [body[i:i + 65533] for i in range(0, len(body), 65533)] or [b""]
    comments = b"".join(b"\xff\xfe" + (len(p) + 2).to_bytes(2, "big") + p for p in parts)
    return head + comments + b"\xff\xd9"


def write_redacted(path, seed, scale=1, big=0):
    """`scale` times the records (189 redacted, 12 real JPEGs, 20 pages each time), and `big`
    real JPEGs of 3 MiB among them (each a record migrations stream rather than hold)."""
    rng = random.Random(seed)
    host = "www.example.dk"
    when = "20041012093000"
    redacted, jpegs, pages = 189 * scale, 12 * scale, 20 * scale
    records = [("jpg", i) for i in range(redacted)] + [("real", i) for i in range(jpegs)]
    records += [("page", i) for i in range(pages)] + [("big", i) for i in range(big)]
    rng.shuffle(records)
    with open(path, "wb") as f:
        w = ArcWriter(f, os.path.basename(path), when, gzip_members=path.endswith(".gz"))
        for n, (kind, i) in enumerate(records):
            t = stamp(when, n)
            if kind == "page":
                body, url, mime = html_page(rng, host, pages, 3000), "http://%s/album/%d.html" % (host, i), "text/html"
            elif kind == "real":
                body, url, mime = jfif(rng, rng.randrange(2000, 9000)), "http://%s/foto/IMG_%04d.JPG" % (host, 5000 + i), "image/jpeg"
            elif kind == "big":
                body, url, mime = jfif(rng, 3 << 20), "http://%s/foto/BIG_%04d.JPG" % (host, i), "image/jpeg"
            else:
                body, url, mime = REDACTIONS[i % len(REDACTIONS)], "http://%s/foto/DSCN%04d.JPG" % (host, 3000 + i), "image/jpeg"
            block = http_response(200, "OK", [("Content-Type", mime), ("Content-Length", str(len(body)))], body)
            w.record(url, "192.0.2.10", t, mime, block)


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * mult[s[-1].upper()]) if s[-1].upper() in mult else int(s)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bench")
    b.add_argument("out")
    b.add_argument("--size", default="200M")
    b.add_argument("--seed", type=int, default=1)
    s = sub.add_parser("single")
    s.add_argument("out")
    s.add_argument("--record-size", default="1G")
    s.add_argument("--seed", type=int, default=1)
    g = sub.add_parser("large")
    g.add_argument("out")
    g.add_argument("--size", default="8M")
    g.add_argument("--record-size", default="48M")
    g.add_argument("--seed", type=int, default=1)
    r = sub.add_parser("redacted")
    r.add_argument("out")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--scale", type=int, default=1)
    r.add_argument("--big", type=int, default=0)
    a = ap.parse_args(argv)
    if a.cmd == "bench":
        write_bench(a.out, parse_size(a.size), a.seed)
    elif a.cmd == "large":
        write_large(a.out, parse_size(a.size), parse_size(a.record_size), a.seed)
    elif a.cmd == "redacted":
        write_redacted(a.out, a.seed, a.scale, a.big)
    else:
        write_single(a.out, parse_size(a.record_size), a.seed)


if __name__ == "__main__":
    main(sys.argv[1:])
