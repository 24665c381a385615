#!/usr/bin/env python3
"""Writes the committed sample inputs under samples/ (deterministic: same bytes every run).

samples/heritrix-job/ is a small Heritrix 1.x job directory of an invented site: order.xml,
seeds.txt, logs/ (crawl.log and the error and progress logs), a report; samples/heritrix-job.metadata.toml holds
the curator's description, documented field by field; and in arcs/ two ARC files the way Heritrix
writes them:
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


ORDER_XML = """<?xml version="1.0" encoding="UTF-8"?>
<crawl-order xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="heritrix_settings.xsd">
  <meta>
    <name>example-heritage-20240315</name>
    <description>Selective crawl of the Example Heritage Society website</description>
    <operator>webaip sample generator</operator>
    <organization>Example National Library</organization>
    <audience>legal deposit</audience>
    <date>20240315103000</date>
  </meta>
  <controller>
    <string name="settings-directory">settings</string>
    <string name="disk-path"></string>
    <string name="logs-path">logs</string>
    <string name="checkpoints-path">checkpoints</string>
    <string name="state-path">state</string>
    <string name="scratch-path">scratch</string>
    <long name="max-bytes-download">0</long>
    <long name="max-document-download">0</long>
    <long name="max-time-sec">3600</long>
    <integer name="max-toe-threads">5</integer>
    <newObject name="scope" class="org.archive.crawler.deciderules.DecidingScope">
      <boolean name="enabled">true</boolean>
      <string name="seedsfile">seeds.txt</string>
    </newObject>
    <map name="write-processors">
      <newObject name="Archiver" class="org.archive.crawler.writer.ARCWriterProcessor">
        <boolean name="enabled">true</boolean>
        <boolean name="compress">true</boolean>
        <string name="prefix">IAH</string>
        <stringList name="path"><string>arcs</string></stringList>
      </newObject>
    </map>
  </controller>
</crawl-order>
"""

METADATA_TOML = """# Curator metadata for `webaip package --metadata` (PROFILE.md P3.4). Every field is
# optional; what is missing is taken from the crawl (seeds, dates) and the package report says so.

title = "Example Heritage Society website"
description = "Website of a local history society: collections, events, contact."
subjects = ["Local history", "Archives", "Societies"]
creator = "Example Heritage Society"        # mapped to MODS name (creator) and dc:creator
publisher = "Example Heritage Society"      # mapped to MODS name (publisher) and dc:publisher
urls = ["http://www.example.org/"]          # target URL(s): MODS location/url, dc:identifier
languages = ["eng"]                         # ISO 639-2/B codes

# The organisation making the package: METS header and PREMIS agent.
organisation = { name = "Example National Library", code = "XX-ENL" }

[rights]                                    # P3.3, written in xsd/webaip-rights.xsd
access = "embargoed"                        # open | restricted | embargoed
embargo_until = "2027-01-01"                # required for embargoed
statement = "Collected under legal deposit; reading-room access only until 2027."

[dc]                                        # broad Dublin Core elements, kept only in DC (P3.2)
source = "Heritrix 1.14.4 job example-heritage-20240315"
coverage = "2024"
"""


def crawl_log_lines():
    # One line per URI attempted, as Heritrix 1.x writes them (status, size right-aligned).
    rows = [
        ("2024-03-15T10:30:01.120Z", 1, 57, "dns:www.example.org", "P", "http://www.example.org/", "text/dns"),
        ("2024-03-15T10:30:02.340Z", 200, 36, "http://www.example.org/robots.txt", "P", "http://www.example.org/", "text/plain"),
        ("2024-03-15T10:30:03.410Z", 200, len(HOME), "http://www.example.org/", "-", "-", "text/html"),
        ("2024-03-15T10:30:04.200Z", 200, len(CSS), "http://www.example.org/css/style.css", "E", "http://www.example.org/", "text/css"),
        ("2024-03-15T10:30:05.050Z", 200, 90, "http://www.example.org/img/logo.png", "E", "http://www.example.org/", "image/png"),
        ("2024-03-15T10:30:06.000Z", 301, 0, "http://www.example.org/old-page", "L", "http://www.example.org/", "text/html"),
        ("2024-03-15T10:30:07.300Z", 200, len(ABOUT), "http://www.example.org/about.html", "LR", "http://www.example.org/old-page", "text/html"),
        ("2024-03-15T10:30:08.100Z", 404, 46, "http://www.example.org/missing.html", "L", "http://www.example.org/", "text/html"),
        ("2024-03-15T10:30:09.000Z", 200, len(FAIR), "http://www.example.org/events/spring fair.html", "L", "http://www.example.org/", "text/html"),
        ("2024-03-15T10:30:10.000Z", 200, 70, "http://www.example.org/favicon.ico", "E", "http://www.example.org/", "image/png"),
        # Blocked by robots.txt: fetched by nobody, so no record exists for it.
        ("2024-03-15T10:30:11.000Z", -9998, 0, "http://www.example.org/private/index.html", "L", "http://www.example.org/", "no-type"),
    ]
    out = []
    for ts, status, size, uri, hop, via, mime in rows:
        out.append("%s %5d %10s %s %s %s %s #001 20240315103000000+100 - - -" % (ts, status, size if size else "-", uri, hop, via, mime))
    return "\n".join(out) + "\n"


def write_job_files():
    def put(rel, text):
        path = os.path.join(JOB, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", newline="\n") as f:
            f.write(text)
    put("order.xml", ORDER_XML)
    with open(os.path.join("samples", "heritrix-job.metadata.toml"), "w", newline="\n") as f:
        f.write(METADATA_TOML)
    put("seeds.txt", "# seeds of the sample crawl\nhttp://www.example.org/\n")
    put("logs/crawl.log", crawl_log_lines())
    put("logs/progress-statistics.log",
        "20240315103000 CRAWL STARTED - Running\n"
        "           timestamp  discovered      queued   downloaded       doc/s(avg)  KB/s(avg)   dl-failures   busy-thread   mem-use-KB\n"
        "2024-03-15T10:30:20Z          12           0           11     0.55(0.55)     1(1)            0             0        20480\n"
        "20240315103021 CRAWL ENDED - Finished\n")
    put("logs/local-errors.log", "")
    put("logs/runtime-errors.log", "")
    put("logs/uri-errors.log", "")
    put("responsecode-report.txt", "[#urls] [rescode]\n8 200\n1 301\n1 404\n1 1\n")


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
    write_job_files()
    print("samples written under %s" % JOB)


if __name__ == "__main__":
    main()
