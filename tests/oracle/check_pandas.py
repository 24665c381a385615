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
    cache (instance date + new.txt time of day, in the given offset);
  * rewriting is byte-faithful: every rewritten HTML or CSS file, with the value of every URL
    attribute and every CSS URL masked, is byte-identical to its original masked the same way
    (tags found by html.parser, attribute values by a tokenizer of this script's own).
Prints a JSON summary; exit 1 with the problems listed when anything is wrong.

  check_pandas.py --masked-compare ORIGINAL REWRITTEN MIME

compares two files the byte-faithful way only (exit 1 and the first difference when they
differ).
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


class Masker(HTMLParser):
    """Finds, in a page decoded as latin-1 (one character per byte), the byte ranges of URL
    attribute values and of URLs in CSS (style attributes, <style> elements)."""

    def __init__(self, text):
        super().__init__(convert_charrefs=False)
        self.text = text
        self.line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        self.ranges = []
        self.in_style = False

    def here(self):
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    def handle_starttag(self, tag, attrs):
        raw = self.get_starttag_text() or ""
        at = self.here()
        assert self.text[at:at + len(raw)] == raw, "position of %r" % raw[:40]
        refresh = tag == "meta" and any(k == "http-equiv" and (v or "").lower() == "refresh" for k, v in attrs)
        for name, s, e in tag_attributes(raw):
            if name in URL_ATTRS or name == "srcset" or (name == "content" and refresh):
                self.ranges.append((at + s, at + e))
            elif name == "style":
                self.ranges += [(at + s + a, at + s + b) for a, b in css_spans(raw[s:e])]
        if tag == "style":
            self.in_style = True

    def handle_endtag(self, tag):
        if tag == "style":
            self.in_style = False

    def handle_data(self, data):
        if self.in_style:
            at = self.here()
            self.ranges += [(at + a, at + b) for a, b in css_spans(data)]


def tag_attributes(tag):
    """(lower-case name, value start, value end) of each attribute of a start tag's text, as the
    HTML tokenizer reads them; values without quotes end at whitespace or '>'."""
    out = []
    i, n = 1, len(tag)
    while i < n and tag[i] not in " \t\n\r\f/>":
        i += 1
    while i < n:
        while i < n and tag[i] in " \t\n\r\f/":
            i += 1
        if i >= n or tag[i] == ">":
            break
        s = i
        i += 1
        while i < n and tag[i] not in " \t\n\r\f/>=":
            i += 1
        name = tag[s:i].lower()
        j = i
        while j < n and tag[j] in " \t\n\r\f":
            j += 1
        if j >= n or tag[j] != "=":
            continue
        j += 1
        while j < n and tag[j] in " \t\n\r\f":
            j += 1
        if j < n and tag[j] in "\"'":
            q = tag[j]
            end = tag.find(q, j + 1)
            end = n if end < 0 else end
            out.append((name, j + 1, end))
            i = end + 1
        else:
            e = j
            while e < n and tag[e] not in " \t\n\r\f>":
                e += 1
            out.append((name, j, e))
            i = e
    return out


def css_spans(css):
    """Ranges of url(...) values (inside whitespace and quotes) and @import strings."""
    out = []
    for m in re.finditer(r"url\(([^)]*)\)", css, re.I):
        s, e = m.start(1), m.end(1)
        while s < e and css[s] in " \t\n\r\f":
            s += 1
        while e > s and css[e - 1] in " \t\n\r\f":
            e -= 1
        if s < e and css[s] in "\"'":
            q = css[s]
            s += 1
            if e > s and css[e - 1] == q:
                e -= 1
        out.append((s, e))
    for m in re.finditer(r"@import\s*([\"'])([^\"']*)\1", css, re.I):
        out.append((m.start(2), m.end(2)))
    return out


def masked(data, mime):
    """The bytes with every URL value replaced by one NUL."""
    text = data.decode("latin-1")
    if mime.startswith("text/css"):
        ranges = css_spans(text)
    else:
        p = Masker(text)
        p.feed(text)
        p.close()
        ranges = p.ranges
    out, pos = [], 0
    for s, e in sorted(set(ranges)):
        if s < pos:
            continue
        out.append(data[pos:s])
        out.append(b"\0")
        pos = e
    out.append(data[pos:])
    return b"".join(out)


def masked_difference(old, new, mime):
    """None when the masked pages are identical, else a description of the first difference."""
    a, b = masked(old, mime), masked(new, mime)
    if a == b:
        return None
    i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    return "masked bytes differ at %d: %r vs %r" % (i, a[max(0, i - 30):i + 30], b[max(0, i - 30):i + 30])


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
    stats = {"files": len(mirror), "rewritten": 0, "links_checked": 0, "cache_checked": 0, "masked_identical": 0}
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
        if rel in orig_by_path and (mime.startswith("text/html") or mime.startswith("text/css")):
            diff = masked_difference(data, rec[4], mime)
            if diff:
                problems.append("%s: rewriting changed bytes outside URL values: %s" % (rel, diff))
            else:
                stats["masked_identical"] += 1
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
    if sys.argv[1:2] == ["--masked-compare"]:
        old, new = open(sys.argv[2], "rb").read(), open(sys.argv[3], "rb").read()
        diff = masked_difference(old, new, sys.argv[4])
        json.dump({"identical": diff is None, "difference": diff}, sys.stdout)
        sys.exit(1 if diff else 0)
    off = 0.0
    if "--timezone-offset-hours" in sys.argv:
        off = float(sys.argv[sys.argv.index("--timezone-offset-hours") + 1])
    sys.exit(main(sys.argv[1], sys.argv[2], off))
