#!/usr/bin/env python3
"""`report` beside `index` on the same package (bench/run-report.sh builds and runs it).

Packages the generated crawl once (no virus check), indexes it (`webaip index -o`), then
times in turns (best of --runs each, pinned to the first --cores cores with taskset):
  index                     the package's access index (the reference: the target is a report
                            costing at most 10 % of it);
  report --index            the page and its JSON from the METS, the package's logs and that
                            index (no payload read);
  report                    the same without an index: the containers' records are read, as
                            `index` reads them (so about its cost).
Prints wall seconds, CPU seconds and peak RSS of each and their ratios to index.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=benchlib.WEBAIP)
    ap.add_argument("--cores", type=int, default=min(2, os.cpu_count()))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--size", default="200M", help="the generated crawl's size (scripts/gen_arc.py bench)")
    a = ap.parse_args()
    webaip = os.path.abspath(a.bin)
    arc = benchlib.ensure_arc(a.size)
    pin = ["taskset", "-c", "0-%d" % (a.cores - 1)]
    with tempfile.TemporaryDirectory(dir=benchlib.WORK) as tmp:
        pkg, index = os.path.join(tmp, "pkg"), os.path.join(tmp, "pkg.cdxj")
        subprocess.check_call([webaip, "package", "-q", "--no-virus-check", "--out", pkg, arc])
        page = os.path.join(tmp, "pkg.html")
        cases = [
            ("index", [webaip, "index", "-q", "-o", index, pkg]),
            ("report --index", [webaip, "report", "-q", "-o", page, "--index", index, pkg]),
            ("report (containers read)", [webaip, "report", "-q", "-o", page, pkg]),
        ]
        subprocess.check_call(cases[0][1])
        lines = sum(1 for _ in open(index))
        best = {}
        for _ in range(a.runs):
            for label, cmd in cases:
                r = benchlib.measured(pin + cmd)
                if label not in best or r[0] < best[label][0]:
                    best[label] = r
        base = best["index"]
        size = sum(os.path.getsize(os.path.join(pkg, "content", n)) for n in os.listdir(os.path.join(pkg, "content")))
        print("%s packaged: %.1f MB of containers, %d index lines, METS %.1f MB; %d cores (taskset), best of %d in turns"
              % (os.path.basename(arc), size / 1e6, lines, os.path.getsize(os.path.join(pkg, "METS.xml")) / 1e6, a.cores, a.runs))
        print("%-26s %7s %7s %9s %9s %9s" % ("", "wall s", "CPU s", "peak RSS", "wall/idx", "CPU/idx"))
        for label, _ in cases:
            wall, cpu, rss = best[label]
            print("%-26s %7.2f %7.2f %6.1f MB %8.3fx %8.3fx" % (label, wall, cpu, rss, wall / base[0], cpu / base[1]))
        shutil.rmtree(tmp, ignore_errors=True)
    print("load while measuring: %s" % " ".join("%.1f" % x for x in os.getloadavg()))


if __name__ == "__main__":
    main()
