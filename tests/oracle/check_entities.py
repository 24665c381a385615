#!/usr/bin/env python3
"""Independent reading of the webpages and associated objects a package describes (P1.3, P2).

For every WEBPAGE / ASSOCIATEDOBJECT div below the website div of the logical structMap, with
Python's own XML, zlib, hashlib and html.parser, warcio and Archivematica's metsrw (not webaip's
code): its DMDID's MODS title and primary URL (and relatedItem host URL); the <file> its fptr
names, the record <file> around it and the container; the record read by warcio from the
member BEGIN..END (gunzipped by zlib when a GZIP transform is stated): its WARC-Target-URI and
WARC-Date, whether the SHA-512 of the payload warcio reads equals the bytestream's CHECKSUM, and
the page's <title> as html.parser reads it; and the MODS title metsrw reads from the dmdSec,
found through the logical structMap metsrw keeps. Prints JSON: {"entities": [...], "depth": N}.
"""
import hashlib
import io
import json
import os
import sys
import xml.etree.ElementTree as ET
import zlib
from html.parser import HTMLParser

M = "{http://www.loc.gov/METS/}"
MODS = "{http://www.loc.gov/mods/v3}"
XLINK = "{http://www.w3.org/1999/xlink}href"
ASCII_WS = " \t\n\r\x0c"


class TitleParser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.inside, self.done, self.parts = False, False, None

    def handle_starttag(self, tag, attrs):
        if tag == "title" and not self.done and self.parts is None:
            self.inside, self.parts = True, []

    def handle_endtag(self, tag):
        if tag == "title" and self.inside:
            self.inside, self.done = False, True

    def handle_data(self, data):
        if self.inside:
            self.parts.append(data)


def charset_of(content_type, body):
    for source in (content_type or "", body[:1024].decode("ascii", "replace")):
        low = source.lower()
        if "charset=" in low:
            label = low.split("charset=", 1)[1].lstrip("\"'")
            label = "".join(ch for ch in label if ch.isalnum() or ch in "-_")
            try:
                "".encode(label)
                return label
            except LookupError:
                pass
    try:
        body.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        return "cp1252"


def html_title(body, content_type):
    p = TitleParser()
    p.feed(body.decode(charset_of(content_type, body), "replace"))
    p.close()
    if p.parts is None:
        return None
    words = [w for w in "".join(p.parts).translate({ord(c): " " for c in ASCII_WS}).split(" ") if w]
    return " ".join(words) or None


def mods_facts(dmd):
    mods = dmd.find(".//" + MODS + "mods")
    if mods is None:
        return None, None, None
    title = mods.findtext(MODS + "titleInfo/" + MODS + "title")
    url = None
    for loc in mods.findall(MODS + "location"):
        for u in loc.findall(MODS + "url"):
            if url is None or u.get("usage") == "primary":
                url = u.text
    host = mods.findtext(MODS + "relatedItem[@type='host']/" + MODS + "location/" + MODS + "url")
    return title, url, host


def read_record(pkg, container, record_file):
    from warcio.archiveiterator import ArchiveIterator
    path = os.path.join(pkg, container.find(M + "FLocat").get(XLINK))
    b, e = int(record_file.get("BEGIN")), int(record_file.get("END"))
    with open(path, "rb") as f:
        f.seek(b)
        member = f.read(e - b + 1)
    if record_file.find(M + "transformFile") is not None:
        member = zlib.decompressobj(31).decompress(member)
    # The URI as the header bytes state it: warcio rewrites one holding spaces.
    raw_uri = None
    for line in member[:member.find(b"\r\n\r\n")].split(b"\r\n"):
        if line.lower().startswith(b"warc-target-uri:"):
            raw_uri = line.split(b":", 1)[1].strip().decode("utf-8")
    for rec in ArchiveIterator(io.BytesIO(member)):
        ct = rec.http_headers.get_header("Content-Type") if rec.http_headers else rec.rec_headers.get_header("Content-Type")
        return raw_uri, rec.rec_headers.get_header("WARC-Date"), rec.raw_stream.read(), ct
    return None, None, b"", None


def metsrw_titles(path):
    import metsrw
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from check_metsrw import wait_past_createdate
    wait_past_createdate(path)
    doc = metsrw.METSDocument.fromfile(path)
    out = {}
    for smap in doc._custom_structmaps:
        if smap.get("TYPE") != "logical":
            continue
        for div in smap.iter(M + "div"):
            if div.get("TYPE") not in ("WEBPAGE", "ASSOCIATEDOBJECT") or not div.get("DMDID"):
                continue
            sec = doc.tree.find('mets:dmdSec[@ID="%s"]' % div.get("DMDID"), namespaces=metsrw.utils.NAMESPACES)
            sub = metsrw.SubSection.parse(sec)
            mods = sub.contents.document
            out[div.get("ID")] = mods.findtext(".//" + MODS + "titleInfo/" + MODS + "title")
    return out


def main(pkg):
    mets_path = os.path.join(pkg, "METS.xml")
    tree = ET.parse(mets_path)
    dmd = {d.get("ID"): d for d in tree.iter(M + "dmdSec")}
    files, parent = {}, {}
    for grp in tree.iter(M + "fileGrp"):
        for container in grp.findall(M + "file"):
            files[container.get("ID")] = container
            for rec in container.findall(M + "file"):
                files[rec.get("ID")] = rec
                parent[rec.get("ID")] = container
                for c in rec.findall(M + "file"):
                    files[c.get("ID")] = c
                    parent[c.get("ID")] = rec
    logical = [s for s in tree.iter(M + "structMap") if s.get("TYPE") == "logical"][0]

    def depth(div):
        return 1 + max([depth(d) for d in div.findall(M + "div")] or [0])

    website = logical.find(M + "div")
    from_metsrw = metsrw_titles(mets_path)
    entities = []
    for div in website.findall(M + "div"):
        fid = div.find(M + "fptr").get("FILEID")
        f = files[fid]
        if fid.endswith("-P") and parent[fid].get("ID") in parent:
            record, container = parent[fid], parent[parent[fid].get("ID")]
        else:
            record, container = f, parent[fid]
        uri, date, payload, ct = read_record(pkg, container, record)
        title, url, host = mods_facts(dmd[div.get("DMDID")]) if div.get("DMDID") else (None, None, None)
        entities.append({
            "id": div.get("ID"),
            "type": div.get("TYPE"),
            "label": div.get("LABEL"),
            "dmdid": div.get("DMDID"),
            "file_id": fid,
            "container": container.find(M + "FLocat").get(XLINK),
            "group": None,
            "mods_title": title,
            "mods_url": url,
            "mods_host": host,
            "metsrw_title": from_metsrw.get(div.get("ID")),
            "warc_uri": uri,
            "warc_date": date,
            "payload_sha512_matches": fid.endswith("-P") and hashlib.sha512(payload).hexdigest() == f.get("CHECKSUM"),
            "html_title": html_title(payload, ct) if ct and "html" in ct.lower() else None,
        })
    for grp in tree.iter(M + "fileGrp"):
        for e in entities:
            if any(c.find(M + "FLocat").get(XLINK) == e["container"] for c in grp.findall(M + "file")):
                e["group"] = grp.get("USE")
    json.dump({"entities": entities, "depth": depth(website)}, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main(sys.argv[1])
