#!/usr/bin/env python3
"""Writes the committed sample inputs under samples/ (deterministic: same bytes every run).

samples/heritrix-job/ is a small Heritrix 1.x job directory of an invented site: order.xml,
seeds.txt, logs/ (crawl.log and the error and progress logs), a report; samples/heritrix-job.metadata.toml holds
the curator's description, documented field by field; and in arcs/ two ARC files the way Heritrix
writes them:
  ...-00000-... .arc.gz  per-record gzip, ARC v1.1 filedesc with XML, a dns: record, robots.txt,
                         an HTML home page, a CSS file, a PNG image, a 301 redirect, the page it
                         points to and a 404;
  ...-00001-... .arc     uncompressed, two more pages, one with a space in its URL, an icon
                         and an ISO-8859-1 page (a second seed) whose title only the HTTP
                         charset decodes.

samples/pandas/40123/20040517-1412/ is a PANDAS instance (an HTTrack mirror): pages in two
directories, a query page saved under HTTrack's hashed name, CSS with url() and @import, an
image, a windows-1252 page, links to pages outside the instance, and an hts-cache with new.zip,
new.txt, new.lst and doit.log, plus hts-log.txt.

samples/mirror/ is a plain website mirror made by `wget -r -x -o wget-log`: a host directory with
an index page, a page saved without extension, a query page saved as `index.html?p=1`, a
stylesheet, an image saved without extension, and the wget log giving URLs and capture times.

Run from the repository root: python3 scripts/make_samples.py
"""
import hashlib
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

# The friends' association page: ISO-8859-1, declared only in the HTTP header, its title
# holding raw Latin-1 bytes and character references (a second seed of the crawl).
VEREIN = (b"<html><head><title>F\xf6rderverein &amp; Freunde &ndash; Heimatgeschichte</title></head>\n"
          b"<body><h1>F\xf6rderverein</h1><p>Mitglieder unterst\xfctzen die Sammlung.</p>"
          b"<a href=\"/\">Home</a></body></html>\n")

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

METADATA_TOML = """# Curator metadata for `webaip package --metadata` (docs/profile.md P3.4). Every field is
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

# Webpages and associated objects worth describing on their own (P1.3): each becomes a div
# below the website with its own MODS record, pointing at the capture of its URL. `webaip
# pages SOURCE` lists the harvest's pages with their titles and capture dates. A URL that was
# not harvested, or that was captured several times with no `captured` to choose, stops the run.
[[page]]
url = "http://www.example.org/about.html"   # as harvested (scheme/host case and %-escapes aside)
title = "About the Example Heritage Society"
description = "Who the society is and how to reach it."
subjects = ["Volunteers"]
creator = "Example Heritage Society"
date = "2024-03"                            # the page's own date: 2024, 2024-03 or 2024-03-15
language = "eng"

[[page]]
url = "http://www.example.org/events/spring%20fair.html"
captured = "2024-03-15T10:30:09Z"           # chooses among several captures: the closest one
subjects = ["Events"]                       # no title: the page's own <title> is used

[[page]]
url = "http://www.example.org/img/logo.png"
kind = "associated-object"                  # webpage (default) or associated-object
part_of = "http://www.example.org/"         # the page it belongs to (MODS relatedItem host)
title = "Logo of the Example Heritage Society"
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
        ("2024-03-15T10:30:10.500Z", 200, len(VEREIN), "http://www.example.org/verein.html", "-", "-", "text/html"),
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
    put("seeds.txt", "# seeds of the sample crawl\nhttp://www.example.org/\nhttp://www.example.org/verein.html\n")
    put("logs/crawl.log", crawl_log_lines())
    put("logs/progress-statistics.log",
        "20240315103000 CRAWL STARTED - Running\n"
        "           timestamp  discovered      queued   downloaded       doc/s(avg)  KB/s(avg)   dl-failures   busy-thread   mem-use-KB\n"
        "2024-03-15T10:30:20Z          13           0           12     0.60(0.60)     1(1)            0             0        20480\n"
        "20240315103021 CRAWL ENDED - Finished\n")
    put("logs/local-errors.log", "")
    put("logs/runtime-errors.log", "")
    put("logs/uri-errors.log", "")
    put("responsecode-report.txt", "[#urls] [rescode]\n9 200\n1 301\n1 404\n1 1\n")


PANDAS = os.path.join("samples", "pandas", "40123", "20040517-1412")
GOV = "www.example.gov.au"


def httrack_name(query):
    """HTTrack's query hash: the first 4 hex digits of MD5(query)."""
    import hashlib
    return hashlib.md5(query.encode()).hexdigest()[:4]


def write_pandas():
    """A PANDAS instance as HTTrack left it: pages in two directories, a query page under its
    hashed name, CSS with url() and @import, an image, a windows-1252 page, links outside, and
    an hts-cache with new.zip (headers in the local extra fields), new.txt, new.lst, doit.log."""
    import zipfile
    item = "news/item%s.html" % httrack_name("id=3")
    files = {
        "index.html": (b"<!DOCTYPE html>\n<html><head><title>Example Agency</title>\n"
                       b"<link rel=\"stylesheet\" href=\"css/site.css\"></head>\n"
                       b"<body><img src=\"images/logo.png\" alt=\"logo\" srcset=\"images/logo.png 1x\">\n"
                       b"<p><a href=\"" + item.encode() + b"?id=3\">Item 3</a> | <a href=\"about/\">About</a> | "
                       b"<a href=\"docs/guide.html#start\">Guide</a> | <a href=\"contact.html\">Contact (not captured)</a> | "
                       b"<a href=\"http://www.elsewhere.com.au/\">Elsewhere</a> | <a href=\"mailto:info@example.gov.au\">Mail</a></p>\n"
                       b"<div style=\"background: url('images/logo.png')\">banner</div>\n</body></html>\n", "text/html"),
        item: (b"<html>\n<!-- Mirrored from " + GOV.encode() + b"/news/item.php?id=3 by HTTrack Website Copier/3.x [XR&CO'2004], Mon, 17 May 2004 04:13:02 GMT -->\n"
               b"<head><title>Item 3</title></head>\n<body><a href=\"../index.html\">home</a> "
               b"<img src=\"../images/logo.png\"></body>\n</html>\n", "text/html"),
        "about/index.html": (b"<html><head><meta charset=\"windows-1252\"><title>\xdcber uns</title>"
                             b"<style>h1 { background: url(../images/logo.png) }</style></head>\n"
                             b"<body><h1>\xdcber uns \x96 caf\xe9</h1><a href=\"../index.html\">zur\xfcck</a></body></html>\n", "text/html"),
        "docs/guide.html": (b"<html>\n<!-- Mirrored from " + GOV.encode() + b"/docs/guide.html by HTTrack Website Copier/3.x [XR&CO'2004], Mon, 17 May 2004 04:13:05 GMT -->\n"
                            b"<body><h1 id=\"start\">Guide</h1><p>No links here.</p></body></html>\n", "text/html"),
        "css/site.css": (b"@import \"print.css\";\nbody { font-family: serif; background: url(../images/logo.png) no-repeat; }\n", "text/css"),
        "images/logo.png": (png(8, 8, (10, 80, 160)), "image/png"),
        "misc/notes.txt": (b"Plain notes, reached by no cache entry.\n", "text/plain"),
    }
    urls = {
        "index.html": "http://%s/" % GOV,
        item: "http://%s/news/item.php?id=3" % GOV,
        "about/index.html": "http://%s/about/" % GOV,
        "css/site.css": "http://%s/css/site.css" % GOV,
        "images/logo.png": "http://%s/images/logo.png" % GOV,
    }
    times = {"index.html": "14:12:03", item: "14:13:02", "about/index.html": "14:13:04",
             "css/site.css": "14:12:04", "images/logo.png": "14:12:05"}
    for rel, (body, _) in files.items():
        path = os.path.join(PANDAS, GOV, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(body)
    cache = os.path.join(PANDAS, "hts-cache")
    os.makedirs(cache, exist_ok=True)
    with zipfile.ZipFile(os.path.join(cache, "new.zip"), "w") as z:
        def entry(url, extra, body):
            zi = zipfile.ZipInfo(url, date_time=(2004, 5, 17, 4, 12, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.extra = extra.encode()
            z.writestr(zi, body)
        entry("http://%s/robots.txt" % GOV, "HTTP/1.1 404 Not Found\r\nX-In-Cache: 1\r\nX-StatusCode: 404\r\nX-StatusMessage: Not Found\r\n"
              "Content-Type: text/html\r\nX-Addr: %s\r\nX-Fil: /robots.txt\r\n" % GOV, b"not found")
        # The about page is deliberately not in the cache: its URL comes from new.txt.
        for rel in ["index.html", item, "css/site.css", "images/logo.png"]:
            body, mime = files[rel]
            in_cache = not mime.startswith("image/")
            fil = urls[rel].split(GOV, 1)[1]
            extra = ("HTTP/1.1 200 OK\r\nX-In-Cache: %d\r\nX-StatusCode: 200\r\nX-StatusMessage: OK\r\nX-Size: %d\r\n"
                     "Content-Type: %s\r\nLast-Modified: Mon, 10 May 2004 01:00:00 GMT\r\nX-Addr: %s\r\nX-Fil: %s\r\nX-Save: %s/%s\r\n"
                     % (1 if in_cache else 0, len(body), mime, GOV, fil, GOV, rel))
            entry(urls[rel], extra, body if in_cache else b"")
    legend = "date\tsize'/'remotesize\tflags(request:Update,Range state:File response:Modified,Chunked,gZipped)\tstatuscode\tstatus ('servermsg')\tMIME\tEtag|Date\tURL\tlocalfile\t(from URL)\n"
    lines = [legend, "14:12:02\t9/9\t---M--\t404\terror ('Not%20Found')\ttext/html\tdate:Mon,%2017%20May%202004%2004:12:02%20GMT\thttp://" + GOV + "/robots.txt\t\t(from )\n"]
    for rel in ["index.html", "css/site.css", "images/logo.png", item, "about/index.html"]:
        body, mime = files[rel]
        lines.append("%s\t%d/%d\t---M--\t200\tadded ('OK')\t%s\tdate:Mon,%%2017%%20May%%202004%%2004:12:00%%20GMT\t%s\t%s/%s\t(from http://%s/)\n"
                     % (times[rel], len(body), len(body), mime, urls[rel], GOV, rel, GOV))
    with open(os.path.join(cache, "new.txt"), "w", newline="\n") as f:
        f.write("".join(lines))
    with open(os.path.join(cache, "new.lst"), "w", newline="\n") as f:
        f.write("".join("[%s/%s]\n" % (GOV, r) for r in sorted(files)))
    with open(os.path.join(cache, "doit.log"), "w", newline="\n") as f:
        f.write("-qwC2%%Ps2u1%%s%%uN0%%I0p3DaK0H0%%kf2A25000%%f#f -F \"Mozilla/4.5\" http://%s/\n"
                "File generated automatically on Mon, 17 May 2004 14:12:02, do NOT edit\n" % GOV)
    with open(os.path.join(PANDAS, "hts-log.txt"), "w", newline="\n") as f:
        f.write("HTTrack3.49-2 launched on Mon, 17 May 2004 14:12:02 at http://%s/\n"
                "(httrack http://%s/ -O 40123/20040517-1412 )\n"
                "HTTrack Website Copier/3.49-2 mirror complete in 3 seconds : 7 links scanned, 7 files written\n" % (GOV, GOV))


MIRROR = os.path.join("samples", "mirror")
MIRROR_HOST = "www.example.net"


def write_mirror():
    """A wget mirror with its log (wget -r -x -o wget-log): times in the log's own format."""
    site = os.path.join(MIRROR, MIRROR_HOST)
    files = [
        ("10:11:12", "http://%s/" % MIRROR_HOST, "index.html",
         b"<!DOCTYPE html>\n<html><head><title>Example Net  Home</title>"
         b"<link rel=\"stylesheet\" href=\"/site.css\"></head><body>"
         b"<a href=\"about\">About</a> <a href=\"/?p=1\">Page 1</a> <img src=\"img/logo\"/></body></html>\n"),
        ("10:11:13", "http://%s/site.css" % MIRROR_HOST, "site.css", b"body { background: url(img/logo) }\n"),
        ("10:11:14", "http://%s/about" % MIRROR_HOST, "about",
         b"\n  <HTML><HEAD><TITLE>About us</TITLE></HEAD><BODY><a href=\"/\">Home</a> "
         b"<a href=\"./?p=1\">Page 1</a></BODY></HTML>\n"),
        ("10:11:15", "http://%s/?p=1" % MIRROR_HOST, "index.html?p=1", b"<div><a href=\"about\">About</a></div>\n"),
        ("10:11:16", "http://%s/img/logo" % MIRROR_HOST, "img/logo", png(8, 8, (0, 85, 51))),
    ]
    log = []
    for t, url, path, body in files:
        full = os.path.join(site, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(body)
        log.append("--2024-01-02 %s--  %s\nResolving %s... 192.0.2.20\n"
                   "HTTP request sent, awaiting response... 200 OK\nLength: %d\n"
                   "Saving to: \u2018%s/%s\u2019\n\n"
                   "2024-01-02 %s (1 MB/s) - \u2018%s/%s\u2019 saved [%d/%d]\n\n"
                   % (t, url, MIRROR_HOST, len(body), MIRROR_HOST, path, t, MIRROR_HOST, path, len(body), len(body)))
    with open(os.path.join(MIRROR, "wget-log"), "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(log))


NEDLIB = os.path.join("samples", "nedlib")
NEDLIB_HOST = "http://www.example.no:80"

GIF = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00"
       b",\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")


def write_nedlib():
    """samples/nedlib/: a NEDLIB harvest (INPUT_FORMATS.md section 5), 15 files in two day folders.

    Each pair is <md5 of the Arc-Url>.meta (status line, server fields, then the harvester's Arc-Url
    and Arc-Length, no empty line at the end, as section 5.3 shows) and the data file of that name.
    2003-7-18/0000/ (Friday):
      <md5 of />.meta           CRLF line ends, a conforming Date: the plain case (HTML page).
      <md5 of /logo.gif>.meta   LF line ends, Date with second 60 (GIF image).
      <md5 of /nyheter.html>    RFC 850 Date with a broken year (18-Jul-103) and a Content-Length
                                line with the Last-Modified value merged into it (the digits are the
                                real length).
      <md5 of /bilder/kart.png> Arc-Length and Content-Length larger than the stored PNG: truncated;
                                ANSI C Date with a zone.
      <md5 of /gammel.html>     a data file without its .meta.
      access0.data              an opaque accessX.data side-car.
    2003-7-19/0000/ (Saturday):
      <md5 of /kontakt.html>    Norwegian Date in ISO-8859-1 bytes (l\xf8, 19 jul 2003 ... CET).
      <md5 of /arkiv/>.meta     a .meta without its data file; RFC 2822 Date without weekday.
      <md5 of /stil.css>        CRLF, ended by its empty line (nothing appended), Date without a
                                leading zero, Arc-Length shorter than the stored file.
    """
    def md5(url):
        return hashlib.md5(url.encode("latin-1")).hexdigest()

    def put(day, url, lines, body, eol=b"\n", arc_length=None, tail=b""):
        run = os.path.join(NEDLIB, day, "0000")
        os.makedirs(run, exist_ok=True)
        name = md5(NEDLIB_HOST + url)
        n = len(body) if body is not None and arc_length is None else arc_length
        meta = b"".join(line + eol for line in lines)
        meta += tail
        meta += b"Arc-Url: " + (NEDLIB_HOST + url).encode("latin-1") + eol
        meta += b"Arc-Length: " + str(n).encode() + eol
        with open(os.path.join(run, name + ".meta"), "wb") as f:
            f.write(meta)
        if body is not None:
            with open(os.path.join(run, name), "wb") as f:
                f.write(body)

    home = (b"<html><head><title>Eksempel</title></head><body><h1>Velkommen</h1>"
            b"<img src=\"/logo.gif\"><a href=\"/nyheter.html\">Nyheter</a> "
            b"<a href=\"/kontakt.html\">Kontakt</a></body></html>\n")
    put("2003-7-18", "/", [b"HTTP/1.1 200 OK", b"Date: Fri, 18 Jul 2003 09:39:49 GMT", b"Server: Apache/1.3.27 (Unix)",
                           b"Content-Type: text/html", b"Content-Length: %d" % len(home)], home, eol=b"\r\n")
    put("2003-7-18", "/logo.gif", [b"HTTP/1.0 200 OK", b"Date: Fri, 18 Jul 2003 12:15:60 GMT",
                                   b"Content-Type: image/gif", b"Content-Length: %d" % len(GIF)], GIF)
    news = b"<html><head><title>Nyheter</title></head><body><p>Sommerstengt i juli.</p></body></html>\n"
    put("2003-7-18", "/nyheter.html", [b"HTTP/1.0 200 OK", b"Date: Friday, 18-Jul-103 09:41:02 GMT",
                                       b"Content-Type: text/html",
                                       b"Content-Length: %dFri, 04 Apr 2003 08:36:47 GMT" % len(news)], news)
    kart = png(6, 6, (0, 102, 51))
    cut = kart[:len(kart) - 20]
    put("2003-7-18", "/bilder/kart.png", [b"HTTP/1.0 200 OK", b"Date: Fri Jul 18 11:02:03 2003 CEST",
                                          b"Content-Type: image/png", b"Content-Length: %d" % len(kart)],
        cut, arc_length=len(kart))
    run = os.path.join(NEDLIB, "2003-7-18", "0000")
    with open(os.path.join(run, md5(NEDLIB_HOST + "/gammel.html")), "wb") as f:
        f.write(b"<html><body>Gammel side</body></html>\n")
    with open(os.path.join(run, "access0.data"), "wb") as f:
        f.write(b"\x00\x00\x00\x02" + bytes.fromhex(md5(NEDLIB_HOST + "/")) + bytes.fromhex(md5(NEDLIB_HOST + "/logo.gif")))
    contact = b"<html><head><title>Kontakt</title></head><body><p>Ring oss p\xe5 telefon.</p></body></html>\n"
    put("2003-7-19", "/kontakt.html", [b"HTTP/1.0 200 OK", b"Date: l\xf8, 19 jul 2003 04:45:41 CET",
                                       b"Content-Type: text/html; charset=iso-8859-1",
                                       b"Content-Length: %d" % len(contact)], contact)
    put("2003-7-19", "/arkiv/", [b"HTTP/1.0 200 OK", b"Date: 19 Jul 2003 05:02:03 GMT", b"Content-Type: text/html",
                                 b"Content-Length: 120"], None, arc_length=120)
    css = b"body { font-family: sans-serif; color: #003366 }\n"
    put("2003-7-19", "/stil.css", [b"HTTP/1.1 200 OK", b"Date: Sat, 19 Jul 2003 6:07:08 GMT", b"Content-Type: text/css",
                                   b"Content-Length: %d" % len(css), b""], css, eol=b"\r\n", arc_length=len(css) - 8)


KW3 = os.path.join("samples", "kulturarw3", "archive")


def md5hex(data):
    return hashlib.md5(data).hexdigest()


def kw3_path(host, snapshot, url, epoch):
    """archive/<hh>/<host>/<snapshot>/<md5url>[.<epoch>]: hh from MD5(host incl. :port)."""
    name = md5hex(url.encode()) + ("" if epoch is None else ".%d" % epoch)
    return os.path.join(KW3, md5hex(host.encode())[:2], host, snapshot, name)


def kw3_heritrix(url, ip, http_header, body, content_type, archive_time, status, content_length=None,
                 content_md5=None, header_md5=None, stored=None, epilogue=b""):
    """A file as Heritrix's Kw3WriterProcessor writes it: ArchiveInfo block, Header part (the
    header bytes directly followed by the next delimiter), Content part only for a non-empty
    body, then LF "--boundary--" LF. content_length/content_md5/header_md5 override what the
    writer would state; stored cuts the body (a truncated write)."""
    boundary = "KulturArw3_" + md5hex(url.encode())
    length = len(body) if content_length is None else content_length
    info = ("MIME-version: 1.1\nContent-Type: multipart/mixed; boundary=%s\nHTTP-Part: ArchiveInfo\n"
            "HTTP-Collection: kw3\nHTTP-Harvester: heritrix\nHTTP-URL: %s\nHTTP-IP-Address: %s\n"
            "HTTP-Header-Length: %d\nHTTP-Header-MD5: %s\nHTTP-Content-Length: %d\nHTTP-Content-MD5: %s\n"
            "HTTP-Archive-Time: %d\nHTTP-Status-Code: %d\n\n") % (
        boundary, url, ip, len(http_header), header_md5 or md5hex(http_header), length,
        content_md5 or (hashlib.sha1(body).hexdigest() if length else "null"), archive_time, status)
    out = info.encode() + ("--%s\nContent-Type: text/plain; charset=\"US-ascii\"\nHTTP-Part: Header\n\n"
                           % boundary).encode() + http_header
    if length:
        out += ("--%s\nContent-Type: %s\nHTTP-Part: Content\n\n" % (boundary, content_type)).encode()
        out += body if stored is None else body[:stored]
    return out + ("\n--%s--\n" % boundary).encode() + epilogue


def http_header(status, headers):
    return ("HTTP/1.1 %s\r\n" % status).encode() + b"".join(
        ("%s: %s\r\n" % kv).encode() for kv in headers) + b"\r\n"


def write_kw3(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def write_kulturarw3():
    """samples/kulturarw3/archive/: a Kulturarw3 archive (INPUT_FORMATS.md section 4), one MIME
    file per fetch under <hh>/<host>/<snapshot>/<md5url>.<epoch>. Invented hosts and times. Files:
      3f/www.example.se/17/4443...          the section 4.3 example, byte for byte: a clean
                                            Heritrix file (SHA-1 content digest);
      3f/www.example.se/17/<about.html>     a Location redirect (301) with an empty body: no
                                            Content part, HTTP-Content-Length 0, digest null;
      3f/www.example.se/17/<logo.png>       a binary PNG body (CR, LF, NUL bytes in it);
      3f/www.example.se/17/<report.pdf>     a truncated body: HTTP-Content-Length 4096, 1000
                                            bytes stored (as Heritrix cuts at 100 MB);
      3f/www.example.se/17/<format.html>    a body that holds the boundary text, both a part
                                            delimiter and a closing one, at line starts;
      3f/www.example.se/17/<news.html>      HTTP-Header-MD5 and HTTP-Content-MD5 that do not
                                            match, HTTP-Archive-Time before the name's epoch,
                                            and bytes after the closing delimiter (epilogue);
      3f/www.example.se/current/<style.css> the `current` snapshot Heritrix writes into;
      <hh>/www.example.se:8080/17/<page>    a host:port directory;
      <hh>/www.kb.se/1/<md5>.874310400      the older v0.01 header names (HTTP-www-archiver,
                                            HTTP-IP-addr, HTTP-part: header-info / content), a
                                            quoted boundary, a MIME preamble, the LF before each
                                            delimiter (MIME style), an MD5 content digest;
      <hh>/ftp.example.se/1/<md5>           a file name without epoch (dated by
                                            HTTP-Archive-Time) whose header-info part is not
                                            HTTP (read as a resource).
    """
    host = "www.example.se"
    ip = "192.0.2.77"
    # The section 4.3 example.
    url = "http://www.example.se/"
    hdr = http_header("200 OK", [("Date", "Mon, 02 Jan 2006 15:04:05 GMT"), ("Content-Type", "text/html"),
                                 ("Content-Length", "25")])
    write_kw3(kw3_path(host, "17", url, 1136214245),
              kw3_heritrix(url, ip, hdr, b"<html>Hello Sweden</html>", "text/html", 1136214246, 200))
    # A redirect with no body: no Content part.
    url = "http://www.example.se/about.html"
    hdr = http_header("301 Moved Permanently", [("Date", "Mon, 02 Jan 2006 15:04:07 GMT"),
                                                 ("Location", "http://www.example.se/om/"), ("Content-Length", "0")])
    write_kw3(kw3_path(host, "17", url, 1136214247), kw3_heritrix(url, ip, hdr, b"", "text/html", 1136214248, 301))
    # A binary body.
    url = "http://www.example.se/logo.png"
    body = png(6, 6, (0, 106, 167))
    hdr = http_header("200 OK", [("Date", "Mon, 02 Jan 2006 15:04:09 GMT"), ("Content-Type", "image/png"),
                                 ("Content-Length", str(len(body)))])
    write_kw3(kw3_path(host, "17", url, 1136214249), kw3_heritrix(url, ip, hdr, body, "image/png", 1136214250, 200))
    # A truncated body: 1000 of 4096 bytes stored.
    url = "http://www.example.se/report.pdf"
    body = (b"%PDF-1.4\n" + b"".join(b"%% line %04d of an invented report\n" % i for i in range(200)))[:4096]
    hdr = http_header("200 OK", [("Date", "Mon, 02 Jan 2006 15:04:11 GMT"), ("Content-Type", "application/pdf"),
                                 ("Content-Length", str(len(body)))])
    write_kw3(kw3_path(host, "17", url, 1136214251),
              kw3_heritrix(url, ip, hdr, body, "application/pdf", 1136214260, 200, stored=1000))
    # A body holding the boundary text.
    url = "http://www.example.se/format.html"
    b = "KulturArw3_" + md5hex(url.encode())
    body = ("<html><pre>\nA Kulturarw3 file of this very page ends its parts with\n--%s\n"
            "and the whole file with\n--%s--\nwhich this page quotes.\n</pre></html>" % (b, b)).encode()
    hdr = http_header("200 OK", [("Date", "Mon, 02 Jan 2006 15:04:13 GMT"), ("Content-Type", "text/html"),
                                 ("Content-Length", str(len(body)))])
    write_kw3(kw3_path(host, "17", url, 1136214253), kw3_heritrix(url, ip, hdr, body, "text/html", 1136214254, 200))
    # Digests that do not match, a write time before the fetch, an epilogue.
    url = "http://www.example.se/news.html"
    body = b"<html>Nyheter</html>"
    hdr = http_header("200 OK", [("Date", "Mon, 02 Jan 2006 15:04:15 GMT"), ("Content-Type", "text/html"),
                                 ("Content-Length", str(len(body)))])
    write_kw3(kw3_path(host, "17", url, 1136214255),
              kw3_heritrix(url, ip, hdr, body, "text/html", 1136214200, 200, header_md5=md5hex(b"other"),
                           content_md5=hashlib.sha1(b"other").hexdigest(), epilogue=b"stray bytes after the end\n"))
    # The snapshot Heritrix is still writing.
    url = "http://www.example.se/style.css"
    body = b"body { color: #006aa7 }\n"
    hdr = http_header("200 OK", [("Date", "Sun, 21 Jan 2007 13:03:57 GMT"), ("Content-Type", "text/css"),
                                 ("Content-Length", str(len(body)))])
    write_kw3(kw3_path(host, "current", url, 1169384637),
              kw3_heritrix(url, ip, hdr, body, "text/css", 1169384638, 200))
    # A host:port directory.
    url = "http://www.example.se:8080/page.html"
    body = b"<html>Port 8080</html>"
    hdr = http_header("200 OK", [("Date", "Mon, 02 Jan 2006 15:04:17 GMT"), ("Content-Type", "text/html"),
                                 ("Content-Length", str(len(body)))])
    write_kw3(kw3_path(host + ":8080", "17", url, 1136214257),
              kw3_heritrix(url, ip, hdr, body, "text/html", 1136214258, 200))
    # The v0.01 header names (Lundberg & Arvidson), MIME style.
    url = "http://www.kb.se/"
    body = b"<HTML><HEAD><TITLE>Kungliga biblioteket</TITLE></HEAD><BODY>V\xe4lkommen</BODY></HTML>\n"
    b = "kw3-0.01-" + md5hex(url.encode())
    hdr = (b"HTTP/1.0 200 OK\r\nServer: NCSA/1.5\r\nDate: Mon, 15 Sep 1997 08:00:00 GMT\r\n"
           b"Content-Type: text/html\r\n\r\n")
    data = ("HTTP-www-archiver: Kulturarw3\nHTTP-archiver-version: 0.01\nMIME-version: 1.0\n"
            "Content-Type: multipart/mixed; boundary=\"%s\"\nHTTP-URL: %s\nHTTP-IP-addr: 192.0.2.33\n"
            "HTTP-Content-MD5: %s\nHTTP-Archive-Time: 874310405\n\n"
            "This is a multi-part message in MIME format.\n"
            "--%s\nContent-Type: text/plain\nHTTP-part: header-info\n\n" % (b, url, md5hex(body), b)).encode()
    data += hdr + ("\n--%s\nContent-Type: text/html\nHTTP-part: content\n\n" % b).encode() + body
    data += ("\n--%s--\n" % b).encode()
    write_kw3(kw3_path("www.kb.se", "1", url, 874310400), data)
    # No epoch in the name; a header-info part that is not HTTP.
    url = "ftp://ftp.example.se/pub/README"
    body = b"Welcome to ftp.example.se\n"
    b = "kw3-0.01-" + md5hex(url.encode())
    data = ("HTTP-www-archiver: Kulturarw3\nHTTP-archiver-version: 0.01\nMIME-version: 1.0\n"
            "Content-Type: multipart/mixed; boundary=%s\nHTTP-URL: %s\nHTTP-IP-addr: 192.0.2.34\n"
            "HTTP-Content-MD5: %s\nHTTP-Archive-Time: 874310410\n\n"
            "--%s\nContent-Type: text/plain\nHTTP-part: header-info\n\n"
            "226 Transfer complete.\r\n"
            "\n--%s\nContent-Type: text/plain\nHTTP-part: content\n\n" % (b, url, md5hex(body), b, b)).encode()
    data += body + ("\n--%s--\n" % b).encode()
    write_kw3(kw3_path("ftp.example.se", "1", url, None), data)


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
        w.record("http://%s/verein.html" % HOST, IP, "20240315103010", "text/html",
                 ok("text/html; charset=iso-8859-1", VEREIN))
    write_job_files()
    write_pandas()
    write_mirror()
    write_nedlib()
    write_kulturarw3()
    print("samples written under samples/")


if __name__ == "__main__":
    main()
