#!/usr/bin/env python3
"""Independent check of a package made from a PANDAS instance, with warcio, Python's
html.parser and its own ZIP reading (not webaip's code).

  check_pandas.py PACKAGE INSTANCE_DIR [--timezone-offset-hours N]

Checks, over the content/ and original/ WARCs:
  * every mirror file of the instance is a resource record (X-Webaip-Mirror-Path);
  * files that were not rewritten are byte-identical to the input;
  * every rewritten file has its original, byte-identical to the input, in original/;
  * no link in an HTML or CSS payload is still a relative path into the mirror: every link
    that, in the harvested file, named a mirror file now names that file's record URL, and
    every other relative link is now absolute;
  * the URL and WARC-Date of every file the HTTrack cache (new.zip + new.txt) knows match the
    cache (instance date + new.txt time of day, in the given offset).
Prints a JSON summary; exit 1 with the problems listed when anything is wrong.
"""
import datetime
import json
import os
import re
import struct
import sys
import urllib.parse
from html.parser import HTMLParser

from warcio.archiveiterator import ArchiveIterator

URL_ATTRS = {"href", "src", "action", "background", "poster", "data", "longdesc", "cite", "formaction"}


class Links(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links = []
        self.in_style = False

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if v is None:
                continue
            if k in URL_ATTRS:
                self.links.append(v)
            elif k == "srcset":
                self.links += [c.strip().split()[0] for c in v.split(",") if c.strip()]
            elif k == "style":
                self.links += css_links(v)
        if tag == "style":
            self.in_style = True

    def handle_endtag(self, tag):
        if tag == "style":
            self.in_style = False

    def handle_data(self, data):
        if self.in_style:
            self.links += css_links(data)


def css_links(css):
    out = [m.strip().strip("'\"") for m in re.findall(r"url\(([^)]*)\)", css, re.I)]
    out += re.findall(r"@import\s+[\"']([^\"']+)[\"']", css, re.I)
    return out


def links_of(payload, mime):
    text = payload.decode("utf-8") if is_utf8(payload) else payload.decode("cp1252", "replace")
    if mime.startswith("text/css"):
        return css_links(text)
    p = Links()
    p.feed(text)
    return p.links


def is_utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def relative(link):
    return not (link.startswith("#") or link.startswith("//") or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", link))


def read_records(path):
    out = []
    with open(path, "rb") as f:
        for r in ArchiveIterator(f):
            if r.rec_type == "resource":
                out.append((r.rec_headers.get_header("X-Webaip-Mirror-Path"), r.rec_headers.get_header("WARC-Target-URI"),
                            r.rec_headers.get_header("WARC-Date"), r.rec_headers.get_header("Content-Type"), r.content_stream().read()))
    return out


def cache_entries(inst):
    """new.zip local headers: X-Save -> URL; new.txt: local file -> time of day."""
    urls, times = {}, {}
    z = os.path.join(inst, "hts-cache", "new.zip")
    if os.path.exists(z):
        d = open(z, "rb").read()
        i = 0
        while d[i:i + 4] == b"PK\x03\x04":
            _, flags, _, _, _, _, cs, _, nl, el = struct.unpack("<HHHHHIIIHH", d[i + 4:i + 30])
            name = d[i + 30:i + 30 + nl].decode("utf-8", "replace")
            extra = d[i + 30 + nl:i + 30 + nl + el].decode("utf-8", "replace")
            for line in extra.split("\r\n"):
                if line.lower().startswith("x-save:"):
                    urls[line.split(":", 1)[1].strip()] = name
            i = i + 30 + nl + el + cs
    t = os.path.join(inst, "hts-cache", "new.txt")
    if os.path.exists(t):
        for line in open(t, encoding="utf-8", errors="replace").read().splitlines()[1:]:
            cols = line.split("\t")
            if len(cols) >= 9 and cols[8]:
                times[cols[8]] = cols[0]
    return urls, times


def main(pkg, inst, offset_hours):
    problems = []
    content, original = [], []
    for sub, bucket in (("content", content), ("original", original)):
        for name in sorted(os.listdir(os.path.join(pkg, sub))):
            bucket += read_records(os.path.join(pkg, sub, name))
    by_path = {r[0]: r for r in content}
    orig_by_path = {r[0]: r for r in original}
    url_of = {r[0]: r[1] for r in content}
    urls = set(url_of.values())
    mirror = {}
    for root, _, files in os.walk(inst):
        for fn in files:
            rel = os.path.relpath(os.path.join(root, fn), inst).replace(os.sep, "/")
            if "/" in rel and not rel.startswith("hts-cache/") and not fn.startswith(".panaccess"):
                mirror[rel] = open(os.path.join(root, fn), "rb").read()
    stats = {"files": len(mirror), "rewritten": 0, "links_checked": 0, "cache_checked": 0}
    for rel, data in mirror.items():
        rec = by_path.get(rel)
        if rec is None:
            problems.append("%s: no resource record" % rel)
            continue
        if rel in orig_by_path:
            stats["rewritten"] += 1
            if orig_by_path[rel][4] != data:
                problems.append("%s: the original in original/ differs from the input" % rel)
            if rec[4] == data:
                problems.append("%s: kept as an original but not changed" % rel)
        elif rec[4] != data:
            problems.append("%s: changed, but no original kept" % rel)
        mime = rec[3] or ""
        if mime.startswith("text/html") or mime.startswith("text/css"):
            old, new = links_of(data, mime), links_of(rec[4], mime)
            if len(old) != len(new):
                problems.append("%s: %d links before, %d after" % (rel, len(old), len(new)))
                continue
            for o, n in zip(old, new):
                stats["links_checked"] += 1
                if relative(n):
                    problems.append("%s: link %r is still relative" % (rel, n))
                    continue
                if relative(o):
                    target = urllib.parse.urljoin("http://mirror/" + rel, o)
                    path = urllib.parse.unquote(urllib.parse.urlsplit(target).path.lstrip("/"))
                    frag = urllib.parse.urlsplit(o).fragment
                    if path.endswith("/") or path == "":
                        path += "index.html"
                    if path in url_of:
                        want = url_of[path] + ("#" + frag if frag else "")
                        if n != want:
                            problems.append("%s: %r should now be %r, is %r" % (rel, o, want, n))
                    elif n.split("#")[0] in urls:
                        problems.append("%s: %r names no mirror file but became a record URL %r" % (rel, o, n))
                elif n != o:
                    problems.append("%s: absolute link %r was changed to %r" % (rel, o, n))
    cache_urls, cache_times = cache_entries(inst)
    inst_name = os.path.basename(os.path.normpath(inst))
    day = datetime.datetime.strptime(inst_name[:8], "%Y%m%d")
    start = datetime.datetime.strptime(inst_name, "%Y%m%d-%H%M")
    for rel, url in cache_urls.items():
        rec = by_path.get(rel)
        if rec is None:
            continue
        stats["cache_checked"] += 1
        if rec[1] != url:
            problems.append("%s: URL %s, the cache says %s" % (rel, rec[1], url))
        if rel in cache_times:
            t = datetime.datetime.strptime(cache_times[rel], "%H:%M:%S").time()
            local = datetime.datetime.combine(day, t)
            if local < start:
                local += datetime.timedelta(days=1)
            want = (local - datetime.timedelta(hours=offset_hours)).strftime("%Y-%m-%dT%H:%M:%SZ")
            if rec[2] != want:
                problems.append("%s: WARC-Date %s, the cache says %s" % (rel, rec[2], want))
    json.dump({"stats": stats, "problems": problems}, sys.stdout)
    return 1 if problems else 0


if __name__ == "__main__":
    off = 0.0
    if "--timezone-offset-hours" in sys.argv:
        off = float(sys.argv[sys.argv.index("--timezone-offset-hours") + 1])
    sys.exit(main(sys.argv[1], sys.argv[2], off))
