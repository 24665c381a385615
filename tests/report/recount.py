#!/usr/bin/env python3
"""Recounts what a webaip report states of a package, with other tools than webaip's: the
METS read with lxml, the captures indexed by cdxj-indexer (pywb's indexer) from the package's
containers and counted here, each line's record type read by warcio at the line's offset (a
capture is a response, revisit or resource of an http, https, ftp or dns URL; other lines are
counted by URL scheme, or for those URLs by record type).

usage: recount.py PACKAGE
       recount.py --collection [--journal JOURNAL]... [--state STATE_DB] [--ocfl ROOT]...
                  [PACKAGE]...
Prints one JSON object whose keys mirror the report's JSON (`webaip report --json`). With
--collection: each package's row facts (lxml over its METS), the journals' rows (sqlite3),
the state database's copies and each package's files (sqlite3), and each object of an OCFL
storage root (its inventory read as JSON, the row facts of the METS at its head), counted
here.
"""
import argparse, collections, json, os, sqlite3, subprocess, sys, urllib.parse

from lxml import etree
from warcio.archiveiterator import ArchiveIterator

NS = {"mets": "http://www.loc.gov/METS/", "premis": "http://www.loc.gov/premis/v3",
      "mods": "http://www.loc.gov/mods/v3", "xlink": "http://www.w3.org/1999/xlink"}
SIZE_BOUNDS = [1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000]


def text(el, path):
    found = el.xpath(path, namespaces=NS)
    return found[0].strip() if found else ""


def mets_facts(pkg, mets=None):
    doc = etree.parse(mets or os.path.join(pkg, "METS.xml"))
    root = doc.getroot()
    website = root.xpath("//mets:structMap[@TYPE='logical']//mets:div[@TYPE='WEBSITE']", namespaces=NS)[0]
    dmd = website.get("DMDID", "").split()
    title = ""
    for d in dmd:
        title = title or text(root, f"//mets:dmdSec[@ID='{d}']//mods:titleInfo/mods:title/text()")
    events = collections.Counter(e.strip() for e in root.xpath("//premis:event/premis:eventType/text()", namespaces=NS))
    folders = collections.Counter()
    sizes = collections.Counter()
    for f in root.xpath("//mets:fileSec//mets:file[not(ancestor::mets:file)]", namespaces=NS):
        href = text(f, "mets:FLocat/@xlink:href")
        folder = href.split("/", 1)[0] if "/" in href else "."
        folders[folder] += 1
        sizes[folder] += int(f.get("SIZE", "0"))
    requires = sorted({r.xpath("premis:relatedObjectIdentifier/premis:relatedObjectIdentifierValue/text()", namespaces=NS)[0].strip()
                       for r in root.xpath("//premis:relationship", namespaces=NS)
                       if text(r, "premis:relationshipType/text()") == "dependency"
                       and text(r, "premis:relationshipSubType/text()") == "requires"})
    pages = root.xpath("//mets:structMap[@TYPE='logical']//mets:div[@TYPE='WEBPAGE' or @TYPE='ASSOCIATEDOBJECT']", namespaces=NS)
    return {
        "objid": root.get("OBJID"), "package_type": root.get("TYPE"), "title": title,
        "events_by_type": dict(events), "events": sum(events.values()),
        "agents": len(root.xpath("//premis:agent", namespaces=NS)),
        "pages": len(pages), "requires": requires,
        "folders": {k: {"files": folders[k], "bytes": sizes[k]} for k in folders},
    }


def host(url):
    if url.startswith("dns:"):
        return url[4:].strip().lower()
    h = urllib.parse.urlsplit(url).hostname
    return h if h else "(no host)"


def record_types(path):
    """warcio's record type of each record of a container, by its offset."""
    with open(path, "rb") as f:
        it = ArchiveIterator(f)
        return {it.get_record_offset(): r.rec_type for r in it}


def captures(pkg, venv_bin):
    content = os.path.join(pkg, "content")
    lines = []
    for name in sorted(os.listdir(content)):
        path = os.path.join(content, name)
        out = subprocess.run([os.path.join(venv_bin, "cdxj-indexer"), path],
                             check=True, capture_output=True, text=True).stdout
        types = record_types(path)
        for l in out.splitlines():
            if l and not l.startswith("!"):
                lines.append((l, types[int(json.loads(l.split(" ", 2)[2])["offset"])]))
    days, hosts, statuses, mimes = (collections.Counter() for _ in range(4))
    size_counts = [0] * 7
    total, revisits, with_status, stamps, others = 0, 0, 0, [], collections.Counter()
    for line, rec_type in lines:
        _key, ts, fields = line.split(" ", 2)
        f = json.loads(fields)
        scheme = urllib.parse.urlsplit(f["url"]).scheme.lower() or "(none)"
        if scheme not in ("http", "https", "ftp", "dns"):
            others[scheme] += 1
            continue
        if rec_type not in ("response", "revisit", "resource"):
            others[rec_type] += 1
            continue
        stamps.append(ts)
        days[f"{ts[:4]}-{ts[4:6]}-{ts[6:8]}"] += 1
        hosts[host(f["url"])] += 1
        mime = f.get("mime", "(none)")
        mimes[mime] += 1
        revisits += mime == "warc/revisit"
        if "status" in f:
            with_status += 1
            statuses[f["status"]] += 1
        length = int(f["length"])
        total += length
        size_counts[next((i for i, b in enumerate(SIZE_BOUNDS) if length < b), 6)] += 1
    return {
        "lines": len(lines), "captures": len(stamps), "other_records": dict(others), "revisits": revisits, "with_status": with_status, "bytes": total,
        "first": min(stamps) if stamps else None, "last": max(stamps) if stamps else None,
        "by_day": dict(days), "hosts": dict(hosts), "statuses": dict(statuses),
        "mime_types": dict(mimes), "sizes": size_counts,
    }


def row_facts(pkg, mets=None):
    """What a collection row states of a package, from its METS alone."""
    mets = mets or os.path.join(pkg, "METS.xml")
    root = etree.parse(mets).getroot()
    facts = mets_facts(pkg, mets)
    records = 0
    for obj in root.xpath("//premis:object", namespaces=NS):
        for prop in obj.xpath("premis:significantProperties", namespaces=NS):
            if text(prop, "premis:significantPropertiesType/text()") == "WARC records":
                records += int(text(prop, "premis:significantPropertiesValue/text()"))
    files = root.xpath("//mets:fileSec//mets:file[not(ancestor::mets:file)]", namespaces=NS)
    website = root.xpath("//mets:structMap[@TYPE='logical']//mets:div[@TYPE='WEBSITE']", namespaces=NS)[0]
    dates = []
    for d in website.get("DMDID", "").split():
        found = root.xpath(f"//mets:dmdSec[@ID='{d}']//mods:dateCaptured/text()", namespaces=NS)
        if found:
            dates = [x.strip() for x in found]
            break
    return {"objid": facts["objid"], "title": facts["title"], "records": records,
            "files": len(files), "bytes": sum(int(f.get("SIZE", "0")) for f in files),
            "captured_first": min(dates) if dates else "", "captured_last": max(dates) if dates else ""}


def journal_facts(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    counts = collections.Counter(s for (s,) in db.execute("SELECT state FROM items"))
    failures = sorted([k, kind or "", err or ""] for k, kind, err in
                      db.execute("SELECT key, error_kind, error FROM items WHERE state = 'failed'"))
    done = sorted(p for (p,) in db.execute("SELECT package FROM items WHERE state = 'done'"))
    return {"items": sum(counts.values()), "counts": dict(counts), "failures": failures, "done": done}


def ocfl_facts(root):
    """Each OCFL object of a storage root (its inventory read as JSON): its head and the row
    facts of the METS.xml its head version holds."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        if "0=ocfl_object_1.1" not in files:
            continue
        dirs[:] = []
        with open(os.path.join(dirpath, "inventory.json"), encoding="utf-8") as f:
            inv = json.load(f)
        versions = {}
        for name, version in inv["versions"].items():
            digest = next((d for d, paths in version["state"].items() if "METS.xml" in paths), None)
            if digest:
                versions[name] = row_facts(None, os.path.join(dirpath, inv["manifest"][digest][0]))
        out[inv["id"]] = {"head": inv["head"], "row": versions[inv["head"]], "versions": versions,
                          "dir": os.path.relpath(dirpath, root),
                          "messages": {n: v.get("message") for n, v in inv["versions"].items()}}
    return out


def state_facts(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    packages = {i: {"identifier": ident, "accepted": acc is not None}
                for i, ident, acc in db.execute("SELECT id, identifier, accepted_at FROM package")}
    replicas = collections.defaultdict(lambda: {"files": 0, "ok": 0, "missing": 0, "corrupt": 0})
    checked = collections.defaultdict(list)
    for pkg, name, listed, summed, at in db.execute(
            "SELECT f.package_id, r.name, c.filelist_status, c.checksum_status, c.checked_at "
            "FROM replicafileinfo c JOIN file f ON f.id = c.file_id JOIN replica r ON r.id = c.replica_id"):
        rep = replicas[name]
        rep["files"] += 1
        rep["ok"] += listed == "ok" and summed in ("ok", "unknown")
        rep["missing"] += "missing" in (listed, summed)
        rep["corrupt"] += "corrupt" in (listed, summed)
        checked[packages[pkg]["identifier"]].append(at)
    oldest = {k: (None if None in v else min(v)) for k, v in checked.items()}
    files = {packages[pkg]["identifier"]: n for pkg, n in
             db.execute("SELECT package_id, count(*) FROM file GROUP BY package_id")}
    tables = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    checks = collections.defaultdict(dict)
    if "object_check" in tables:
        for obj, rep, at, outcome, deep in db.execute(
                "SELECT object, replica, checked_at, outcome, deep FROM object_check"):
            checks[obj][rep] = {"at": at, "outcome": outcome, "deep": bool(deep)}
    kept = {}
    if "ocfl_package" in tables:
        kept = {p: {"object": o, "version": v}
                for p, o, v in db.execute("SELECT package, object, version FROM ocfl_package")}
    return {"packages": len(packages), "accepted": sum(p["accepted"] for p in packages.values()),
            "replicas": dict(replicas), "oldest": oldest, "files": files, "checks": dict(checks),
            "kept": kept}


def collection():
    ap = argparse.ArgumentParser()
    ap.add_argument("--collection", action="store_true")
    ap.add_argument("--journal", action="append", default=[])
    ap.add_argument("--state")
    ap.add_argument("--ocfl", action="append", default=[])
    ap.add_argument("packages", nargs="*")
    a = ap.parse_args()
    out = {"packages": {p: row_facts(p) for p in a.packages},
           "journals": {j: journal_facts(j) for j in a.journal}}
    if a.state:
        out["state"] = state_facts(a.state)
    out["ocfl"] = {r: ocfl_facts(r) for r in a.ocfl}
    print(json.dumps(out))


def main():
    if sys.argv[1] == "--collection":
        return collection()
    pkg = sys.argv[1]
    venv_bin = os.path.dirname(os.path.abspath(sys.executable))
    print(json.dumps({"mets": mets_facts(pkg), "captures": captures(pkg, venv_bin)}))


if __name__ == "__main__":
    main()
