#!/usr/bin/env python3
"""`package` beside `migrate` on the same ARC, as the floor benchmark's "package" row compares
them, alone and small enough to iterate on (bench/run-package.sh builds and runs it).

Runs, in turns (best of --runs each, pinned to the first --cores cores with taskset):
migrate, package --identify none and package with its default identification, all without a
virus check. Prints wall seconds, CPU seconds (user + system) and peak RSS of each, and the
ratios to migrate: what identification costs is the third row less the second, what the
package adds otherwise (its METS, the container's SHA-256) the second less the first.
"""
import argparse
import os
import shutil
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
    j = ["-j", str(a.cores)]
    with tempfile.TemporaryDirectory(dir=benchlib.WORK) as tmp:
        out = {name: os.path.join(tmp, name) for name in ("migrate", "none", "default")}
        cases = [
            ("migrate", [webaip, "migrate", "-q", "--force", *j, "--out", out["migrate"], arc]),
            ("package --identify none", [webaip, "package", "-q", "--force", *j, "--no-virus-check",
                                         "--identify", "none", "--out", out["none"], arc]),
            ("package", [webaip, "package", "-q", "--force", *j, "--no-virus-check",
                         "--out", out["default"], arc]),
        ]
        os.makedirs(out["migrate"])
        best = {}
        for _ in range(a.runs):
            for label, cmd in cases:
                r = benchlib.measured(pin + cmd)
                if label not in best or r[0] < best[label][0]:
                    best[label] = r
        base = best["migrate"]
        print("%s, %d cores (taskset), best of %d in turns" % (os.path.basename(arc), a.cores, a.runs))
        print("%-26s %7s %7s %9s %8s %8s" % ("", "wall s", "CPU s", "peak RSS", "wall/mig", "CPU/mig"))
        for label, _ in cases:
            wall, cpu, rss = best[label]
            print("%-26s %7.2f %7.2f %6.1f MB %7.3fx %7.3fx" % (label, wall, cpu, rss, wall / base[0], cpu / base[1]))
        shutil.rmtree(tmp, ignore_errors=True)
    print("load while measuring: %s" % " ".join("%.1f" % x for x in os.getloadavg()))


if __name__ == "__main__":
    main()
