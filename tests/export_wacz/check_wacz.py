"""Reads a WACZ exported from a package with Python's zipfile, hashlib and cdxj-indexer (no
webaip code) and says what is wrong with it.

    check_wacz.py WACZ PACKAGE

Checks: every member stored; datapackage.json lists every member but itself and its digest,
with the SHA-256 and size of its bytes; datapackage-digest.json holds the datapackage's SHA-256;
each archive/ member is byte for byte the package's content container of that name;
metadata/METS.xml is the package's METS, and its resource names the METS OBJID as its source;
the index (indexes/index.cdxj, or index.cdx.gz whose gzip members index.idx names with their
first key and SHA-256) equals, line for line, what cdxj-indexer writes for the archive/ members;
pages/pages.jsonl starts with its header and every page is a capture the index holds (URL and
14-digit timestamp). Prints JSON: members, pages, index lines, problems."""

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
import zlib

wacz, package = sys.argv[1], sys.argv[2]
problems = []
z = zipfile.ZipFile(wacz)
names = [i.filename for i in z.infolist()]
for i in z.infolist():
    if i.compress_type != zipfile.ZIP_STORED:
        problems.append("%s: compressed (method %d)" % (i.filename, i.compress_type))

dp = json.loads(z.read("datapackage.json"))
listed = {r["path"]: r for r in dp["resources"]}
for n in names:
    if n in ("datapackage.json", "datapackage-digest.json"):
        continue
    r = listed.get(n)
    data = z.read(n)
    if r is None:
        problems.append("%s: not in datapackage.json" % n)
        continue
    if r["hash"] != "sha256:" + hashlib.sha256(data).hexdigest() or r["bytes"] != len(data):
        problems.append("%s: datapackage states %s %s" % (n, r["hash"], r["bytes"]))
for p in listed:
    if p not in names:
        problems.append("%s: listed, not in the ZIP" % p)
digest = json.loads(z.read("datapackage-digest.json"))
if digest.get("hash") != "sha256:" + hashlib.sha256(z.read("datapackage.json")).hexdigest():
    problems.append("datapackage-digest.json: wrong hash")

mets = open(os.path.join(package, "METS.xml"), "rb").read()
if z.read("metadata/METS.xml") != mets:
    problems.append("metadata/METS.xml: not the package's METS")
objid = re.search(rb'OBJID="([^"]*)"', mets).group(1).decode()
if [s.get("path") for s in listed["metadata/METS.xml"].get("sources", [])] != [objid]:
    problems.append("metadata/METS.xml: its sources do not name %s" % objid)

archives = sorted(n for n in names if n.startswith("archive/"))
content = os.path.join(package, "content")
for n in archives:
    if z.read(n) != open(os.path.join(content, n.split("/", 1)[1]), "rb").read():
        problems.append("%s: not the package's container" % n)

with tempfile.TemporaryDirectory() as d:
    for n in archives:
        z.extract(n, d)
    files = [n.split("/", 1)[1] for n in archives]
    indexer = os.path.join(os.path.dirname(sys.executable), "cdxj-indexer")
    out = subprocess.run([indexer] + files, cwd=os.path.join(d, "archive"), capture_output=True,
                         check=True)
    # Sorted bytewise, each line once, as its --sort gives them.
    want = sorted(set(out.stdout.decode().splitlines()))
if "indexes/index.idx" in names:
    # cdxj-gzip-1.0: each .idx line names a gzip member of index.cdx.gz, its first key, its
    # SHA-256; the members hold the lines.
    data = z.read("indexes/index.cdx.gz")
    idx = z.read("indexes/index.idx").decode().splitlines()
    meta = json.loads(idx[0].split(" ", 2)[2]) if idx[0].startswith("!meta 0 ") else {}
    if meta != {"format": "cdxj-gzip-1.0", "filename": "index.cdx.gz"}:
        problems.append("indexes/index.idx: line 1 is not the cdxj-gzip-1.0 !meta line")
    got, at = [], 0
    for n, line in enumerate(idx[1:], 2):
        prefix, js = line.split(" {", 1)
        block = json.loads("{" + js)
        member = data[block["offset"]:block["offset"] + block["length"]]
        if block["offset"] != at or block["digest"] != "sha256:" + hashlib.sha256(member).hexdigest():
            problems.append("indexes/index.idx: line %d: wrong offset or digest" % n)
        at = block["offset"] + block["length"]
        lines = zlib.decompress(member, 16 + zlib.MAX_WBITS).decode().splitlines()
        if not lines[0].startswith(prefix + " {"):
            problems.append("indexes/index.idx: line %d: key %r is not its member's first" % (n, prefix))
        got.extend(lines)
    if at != len(data):
        problems.append("indexes/index.cdx.gz: %d bytes no .idx line names" % (len(data) - at))
else:
    got = z.read("indexes/index.cdxj").decode().splitlines()
if got != want:
    diff = [(a, b) for a, b in zip(got, want) if a != b][:3]
    problems.append("indexes/index.cdxj: %d lines, cdxj-indexer %d; first differences %s"
                    % (len(got), len(want), diff))

captures = set()
for line in got:
    key, ts, js = line.split(" ", 2)
    captures.add((json.loads(js)["url"], ts))
lines = z.read("pages/pages.jsonl").decode().splitlines()
if json.loads(lines[0]).get("format") != "json-pages-1.0":
    problems.append("pages/pages.jsonl: no header line")
pages = [json.loads(l) for l in lines[1:]]
for p in pages:
    ts = re.sub(r"\D", "", p["ts"])[:14]
    if (p["url"], ts) not in captures:
        problems.append("pages/pages.jsonl: %s %s is no capture of the index" % (p["url"], p["ts"]))

print(json.dumps({"members": names, "pages": pages, "index_lines": len(got), "problems": problems}))
