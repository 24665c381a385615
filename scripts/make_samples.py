#!/usr/bin/env python3
"""Writes the committed sample inputs under samples/ (deterministic: same bytes every run).

samples/heritrix-job/arcs/ holds a small Heritrix 1.x crawl of an invented site, as two ARC
files the way Heritrix writes them:
  ...-00000-... .arc.gz  per-record gzip, ARC v1.1 filedesc with XML, a dns: record, robots.txt,
                         an HTML home page, a CSS file, a PNG image, a 301 redirect, the page it
                         points to and a 404;
  ...-00001-... .arc     uncompressed, two more pages, one with a space in its URL.

Run from the repository root: python3 scripts/make_samples.py
"""
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_arc import ArcWriter, http_response  # noqa: E402

HOST = "www.example.org"
IP = "192.0.2.10"
JOB = os.path.join("samples", "heritrix-job")


def png(width, height, rgb):
    """A valid, tiny PNG of one colour."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def ok(mime, body, extra=()):
    headers = [("Date", "Fri, 15 Mar 2024 10:30:05 GMT"), ("Server", "Apache"), ("Content-Type", mime),
               ("Content-Length", str(len(body)))] + list(extra)
    return http_response(200, "OK", headers, body)


HOME = b"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Example Heritage Society</title>
<link rel="stylesheet" href="/css/style.css"></head>
<body><img src="/img/logo.png" alt="logo">
<h1>Example Heritage Society</h1>
<p>We collect letters, photographs and maps of the region since 1952.</p>
<ul><li><a href="/about.html">About us</a></li><li><a href="/old-page">Our history (moved)</a></li>
<li><a href="/events/spring fair.html">Spring fair</a></li><li><a href="/missing.html">Archive catalogue</a></li></ul>
</body></html>
"""

ABOUT = b"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>About - Example Heritage Society</title>
<link rel="stylesheet" href="/css/style.css"></head>
<body><h1>About us</h1><p>A volunteer society. Contact: <a href="mailto:info@example.org">info@example.org</a>.</p>
<p><a href="/">Home</a></p></body></html>
"""

FAIR = b"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Spring fair</title></head>
<body><h1>Spring fair</h1><p>Saturday 13 April, market square.</p><a href="/">Home</a></body></html>
"""

CSS = b"""body { font-family: Georgia, serif; margin: 2em; background: url(/img/logo.png) no-repeat right top; }
h1 { color: #335; }
a { color: #803; }
"""


def main():
    os.makedirs(os.path.join(JOB, "arcs"), exist_ok=True)
    when = "20240315103000"
    name = "IAH-%s-00000-crawler.example.arc.gz" % when
    with open(os.path.join(JOB, "arcs", name), "wb") as f:
        w = ArcWriter(f, name, when)
        w.record("dns:" + HOST, "192.0.2.53", "20240315103001", "text/dns",
                 b"20240315103001\nwww.example.org.\t3600\tIN\tA\t192.0.2.10\n")
        w.record("http://%s/robots.txt" % HOST, IP, "20240315103002", "text/plain",
                 ok("text/plain", b"User-agent: *\nDisallow: /private/\n"))
        w.record("http://%s/" % HOST, IP, "20240315103003", "text/html", ok("text/html; charset=utf-8", HOME))
        w.record("http://%s/css/style.css" % HOST, IP, "20240315103004", "text/css", ok("text/css", CSS))
        w.record("http://%s/img/logo.png" % HOST, IP, "20240315103005", "image/png", ok("image/png", png(16, 16, (51, 51, 85))))
        w.record("http://%s/old-page" % HOST, IP, "20240315103006", "text/html",
                 http_response(301, "Moved Permanently", [("Location", "http://%s/about.html" % HOST), ("Content-Length", "0")], b""))
        w.record("http://%s/about.html" % HOST, IP, "20240315103007", "text/html", ok("text/html; charset=utf-8", ABOUT))
        body = b"<html><body><h1>Not Found</h1></body></html>\n"
        w.record("http://%s/missing.html" % HOST, IP, "20240315103008", "text/html",
                 http_response(404, "Not Found", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))], body))
    name = "IAH-%s-00001-crawler.example.arc" % when
    with open(os.path.join(JOB, "arcs", name), "wb") as f:
        w = ArcWriter(f, name, "20240315103009", gzip_members=False)
        w.record("http://%s/events/spring fair.html" % HOST, IP, "20240315103009", "text/html", ok("text/html; charset=utf-8", FAIR))
        w.record("http://%s/favicon.ico" % HOST, IP, "20240315103010", "image/png", ok("image/png", png(4, 4, (128, 0, 51))))
    print("samples written under %s" % JOB)


if __name__ == "__main__":
    main()
