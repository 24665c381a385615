#!/usr/bin/env python3
"""`report` of a collection (bench/run-report.sh --collection builds and runs it).

Packages one small sample once (no virus check), then makes N packages of it cheaply: each a
folder whose METS.xml is the sample's with its own title and OBJID, every other file hard
linked. Writes a batch journal (SQLite, one done row a package) beside them. Then times, in
turns (best of --runs each, pinned to the first --cores cores with taskset), for each count:
  journal      webaip report JOURNAL -o page.html  (the journal's done packages)
  folders      webaip report DIR/p00000 DIR/p00001 ... -o page.html
Prints wall seconds, CPU seconds, peak RSS and packages per second of each.
"""
import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def measured(cmd):
    """(wall s, CPU s, peak RSS MB) of cmd; exit 0 or 1 (findings) is a run, else it stops."""
    with tempfile.TemporaryFile() as errf:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            errf.seek(0)
            sys.exit("benchmark command failed: %s\n%s" % (" ".join(cmd[:6]), errf.read()[-2000:].decode(errors="replace")))
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def copies(sample_pkg, dest, n):
    """n packages in dest (p00000...), each METS its own, the rest hard linked."""
    mets = open(os.path.join(sample_pkg, "METS.xml"), encoding="utf-8").read()
    objid = mets.split('OBJID="', 1)[1].split('"', 1)[0]
    names = []
    for i in range(n):
        name = "p%05d" % i
        pkg = os.path.join(dest, name)
        for root, dirs, files in os.walk(sample_pkg):
            rel = os.path.relpath(root, sample_pkg)
            os.makedirs(os.path.join(pkg, rel), exist_ok=True)
            for f in files:
                if rel == "." and f == "METS.xml":
                    continue
                os.link(os.path.join(root, f), os.path.join(pkg, rel, f))
        text = mets.replace(objid, "urn:uuid:00000000-0000-4000-8000-%012d" % i)
        text = text.replace("<mods:title>", "<mods:title>Copy %d of " % i, 1)
        with open(os.path.join(pkg, "METS.xml"), "w", encoding="utf-8") as out:
            out.write(text)
        names.append(name)
    return names


def journal(path, names):
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE items (key TEXT PRIMARY KEY NOT NULL, line INTEGER, source TEXT NOT NULL, "
        "package TEXT NOT NULL, state TEXT NOT NULL, package_id TEXT, size INTEGER, mets_sha512 TEXT, "
        "findings INTEGER NOT NULL DEFAULT 0, error_kind TEXT, error TEXT, attempts INTEGER NOT NULL DEFAULT 0, "
        "updated TEXT NOT NULL, stored TEXT, wacz TEXT, eark TEXT); PRAGMA user_version = 2;")
    db.executemany("INSERT INTO items (key, source, package, state, attempts, updated) VALUES (?, ?, ?, 'done', 1, '2026-01-01T00:00:00Z')",
                   [("src/" + n, "src/" + n, n) for n in names])
    db.commit()
    db.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=benchlib.WEBAIP)
    ap.add_argument("--cores", type=int, default=min(2, os.cpu_count()))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--counts", default="1000,10000")
    ap.add_argument("--sample", default=os.path.join(benchlib.REPO, "samples", "mirror"))
    a = ap.parse_args()
    webaip = os.path.abspath(a.bin)
    pin = ["taskset", "-c", "0-%d" % (a.cores - 1)]
    counts = [int(c) for c in a.counts.split(",")]
    os.makedirs(benchlib.WORK, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=benchlib.WORK) as tmp:
        sample = os.path.join(tmp, "sample")
        subprocess.check_call([webaip, "package", "-q", "--no-virus-check", "--out", sample, a.sample])
        cases = []
        for n in counts:
            coll = os.path.join(tmp, "c%d" % n)
            os.makedirs(coll)
            names = copies(sample, coll, n)
            jpath = os.path.join(coll, "journal.sqlite")
            journal(jpath, names)
            page = os.path.join(tmp, "page-%d.html" % n)
            cases.append(("%6d journal" % n, n, [webaip, "report", "-q", "-o", page, jpath]))
            cases.append(("%6d folders" % n, n, [webaip, "report", "-q", "-o", page] + [os.path.join(coll, x) for x in names]))
        best = {}
        for _ in range(a.runs):
            for label, _n, cmd in cases:
                r = measured(pin + cmd)
                if label not in best or r[0] < best[label][0]:
                    best[label] = r
        mets = os.path.getsize(os.path.join(sample, "METS.xml"))
        print("collection of copies of %s packaged (METS %.1f kB); %d cores (taskset), best of %d in turns"
              % (os.path.basename(os.path.normpath(a.sample)), mets / 1e3, a.cores, a.runs))
        print("%-16s %7s %7s %9s %10s" % ("", "wall s", "CPU s", "peak RSS", "packages/s"))
        for label, n, _ in cases:
            wall, cpu, rss = best[label]
            print("%-16s %7.2f %7.2f %6.1f MB %10.0f" % (label, wall, cpu, rss, n / wall))
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
