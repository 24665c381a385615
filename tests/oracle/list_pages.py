#!/usr/bin/env python3
"""Independent lister for the tests: the HTML pages of a package, as warcio and html.parser see
them (not webaip).

Usage: list_pages.py PACKAGE_DIR [--all-statuses] [--harvested]

Reads METS.xml with ElementTree for the WARC containers of the DigitalManifestation group
(with --harvested, records of the Original group replace the content records of the same URL
and date: the bytes as harvested, before links were rewritten), then every response/resource
record with warcio. A record is a page when its payload type is text/html or
application/xhtml+xml: the HTTP Content-Type of a response, else (a migrated ARC record whose
HTTP header names no type) the type field of its X-Webaip-ARC-Header line; the WARC
Content-Type of a resource. Without --all-statuses, HTTP responses other than 2xx are left out.

The title is the text of the first <title> element found by html.parser in the first MiB of the
payload, decoded in the charset of the Content-Type (else a <meta charset>, else UTF-8 when it
decodes, else windows-1252), character references resolved with html.unescape, ASCII white
space collapsed.

Prints {"pages": [{"url", "captured", "size", "status", "title"}...]} sorted by URL and date.
"""
import html
import json
import re
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from warcio.archiveiterator import ArchiveIterator

METS = "{http://www.loc.gov/METS/}"
XLINK = "{http://www.w3.org/1999/xlink}"
WINDOW = 1 << 20
HTML_TYPES = ("text/html", "application/xhtml+xml")
# WHATWG labels that Python names otherwise.
ALIASES = {"iso-8859-1": "cp1252", "latin1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252"}


def containers(pkg, use):
    root = ET.parse(pkg + "/METS.xml").getroot()
    out = []
    for grp in root.iter(METS + "fileGrp"):
        if grp.get("USE") != use:
            continue
        for f in grp.findall(METS + "file"):
            loc = f.find(METS + "FLocat")
            if loc is not None:
                out.append(loc.get(XLINK + "href"))
    return out


def essence(ct):
    return (ct or "").split(";")[0].strip().lower()


def charset_of(ct):
    m = re.search(r"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", ct or "", re.I)
    return m.group(1).lower() if m else None


class Title(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.state = "before"  # before, in, done
        self.text = []

    def handle_starttag(self, tag, attrs):
        if tag == "title" and self.state == "before":
            self.state = "in"

    def handle_endtag(self, tag):
        if tag == "title" and self.state == "in":
            self.state = "done"

    def handle_data(self, data):
        if self.state == "in":
            self.text.append(data)

    # References are kept as written and resolved by html.unescape below.
    def handle_entityref(self, name):
        if self.state == "in":
            self.text.append("&%s;" % name)

    def handle_charref(self, name):
        if self.state == "in":
            self.text.append("&#%s;" % name)


def title_of(head, ct):
    cs = charset_of(ct)
    if cs is None:
        m = re.search(rb"<meta[^>]*charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", head[:1024], re.I)
        cs = m.group(1).decode("ascii").lower() if m else None
    if cs is not None:
        text = head.decode(ALIASES.get(cs, cs), errors="replace")
    else:
        try:
            text = head.decode("utf-8")
        except UnicodeDecodeError:
            text = head.decode("cp1252", errors="replace")
    p = Title()
    p.feed(text)
    p.close()
    if p.state == "before":
        return None
    t = html.unescape("".join(p.text))
    t = " ".join(w for w in re.split(r"[ \t\n\r\f]+", t) if w)
    return t or None


def arc_line_type(line):
    m = re.search(r" (\d{14}) (\S+)", line or "")
    return essence(m.group(2)) if m else None


def read(path, all_statuses):
    pages = []
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f):
            h = rec.rec_headers
            url = h.get_header("WARC-Target-URI")
            if rec.rec_type not in ("response", "resource") or not url:
                continue
            status = None
            if rec.http_headers is not None and rec.rec_type == "response":
                ct = rec.http_headers.get_header("Content-Type")
                mime = essence(ct) or arc_line_type(h.get_header("X-Webaip-ARC-Header"))
                status = int(rec.http_headers.get_statuscode())
            else:
                ct = h.get_header("Content-Type")
                mime = essence(ct)
            if mime not in HTML_TYPES:
                continue
            if status is not None and not 200 <= status < 300 and not all_statuses:
                continue
            stream = rec.raw_stream
            head = stream.read(WINDOW)
            size = len(head)
            while True:
                chunk = stream.read(65536)
                if not chunk:
                    break
                size += len(chunk)
            pages.append({
                "url": url,
                "captured": h.get_header("WARC-Date"),
                "size": size,
                "status": status,
                "title": title_of(head, ct),
            })
    return pages


def main(argv):
    pkg = argv[0]
    all_statuses = "--all-statuses" in argv[1:]
    pages = []
    for name in containers(pkg, "DigitalManifestation"):
        pages.extend(read(pkg + "/" + name, all_statuses))
    if "--harvested" in argv[1:]:
        originals = {}
        for name in containers(pkg, "Original"):
            for p in read(pkg + "/" + name, all_statuses):
                originals[(p["url"], p["captured"])] = p
        pages = [originals.get((p["url"], p["captured"]), p) for p in pages]
    pages.sort(key=lambda p: (p["url"], p["captured"]))
    json.dump({"pages": pages}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
