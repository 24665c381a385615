#!/usr/bin/env python3
"""`webaip index` against cdxj-indexer, `warcio index` and FastWARC's `fastwarc index` on one
WARC (the migrated 200 MB benchmark container), in the same run: wall time, MB/s of the
compressed input, peak RSS, and webaip's speed as a multiple of each peer's. Every tool runs
pinned to one core (`taskset -c 0`); webaip also with `-j 2` on two cores, on the one file (a
second thread starts at a guessed member boundary, its lines kept only when the first thread
lands exactly there) and over two copies of it. The cases run in turns (A-B-A-B ...), best of
`--runs` each, so that a machine busy for a moment slows every tool alike.

The floor beside them, measured in the same run (bench/member_floor.py, one core): every
member of the file inflated whole by libdeflate, and the file read; no indexer that inflates
the whole file can go below it. CPU seconds (user + system) are printed beside the wall times:
another process on a busy machine lengthens the wall time, not them.

With `--arc ARC`, also `package --index` against `package` of that ARC (migrated into the
package's container; one core each, `-j 1`): the index made while the records are written
should cost at most 5 % of the package's time.

Usage: index_bench.py WARC [--arc ARC] [--webaip PATH] [--runs N]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def floor_of(warc):
    """bench/member_floor.py's figures for `warc`, on one core."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.check_output(["taskset", "-c", "0", sys.executable, os.path.join(here, "member_floor.py"), warc])
    return {k: float(v) for k, v in (line.split() for line in out.decode().splitlines())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("warc")
    ap.add_argument("--webaip", default=benchlib.WEBAIP)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--arc")
    a = ap.parse_args()
    size = os.path.getsize(a.warc)
    venv = benchlib.VENV
    one = ["taskset", "-c", "0"]
    two = ["taskset", "-c", "0,1"]
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(a.warc))) as tmp:
        copy = os.path.join(tmp, "copy-" + os.path.basename(a.warc))
        shutil.copyfile(a.warc, copy)
        out = os.path.join(tmp, "out")
        fields = "warc-target-uri,warc-date,http:content-type,http:status,warc-payload-digest,length,offset,filename"
        cases = [
            ("webaip index -j 1", one + [a.webaip, "index", "-q", "-j", "1", "-o", out, a.warc], 1),
            ("webaip index -j 2 (1 file)", two + [a.webaip, "index", "-q", "-j", "2", "-o", out, a.warc], 1),
            ("webaip index -j 2 (2 files)", two + [a.webaip, "index", "-q", "-j", "2", "-o", out, a.warc, copy], 2),
            ("webaip index -j 1 (2 files)", one + [a.webaip, "index", "-q", "-j", "1", "-o", out, a.warc, copy], 2),
            ("cdxj-indexer --sort", one + [os.path.join(venv, "cdxj-indexer"), "-s", "-o", out, a.warc], 1),
            ("cdxj-indexer", one + [os.path.join(venv, "cdxj-indexer"), "-o", out, a.warc], 1),
            ("warcio index", one + [os.path.join(venv, "warcio"), "index", "-o", out, a.warc], 1),
            ("fastwarc index", one + [os.path.join(venv, "fastwarc"), "index", "-f", fields, "-o", out, a.warc], 1),
        ]
        results = {}
        if a.arc:
            pkg = os.path.join(tmp, "pkg")
            plain = one + [a.webaip, "package", "-q", "--no-virus-check", "--deterministic", "-j", "1", "--force", "--out", pkg, a.arc]
            indexed = plain[:5] + ["--index", out] + plain[5:]
            arc_size = os.path.getsize(a.arc)
            cases += [("package", plain, arc_size / size), ("package --index", indexed, arc_size / size)]
        for _ in range(a.runs):
            for name, cmd, files in cases:
                wall, cpu, rss = benchlib.measured(cmd)
                if name not in results or wall < results[name][0]:
                    results[name] = (wall, rss, size * files / wall / 1e6, cpu)
    floor = floor_of(a.warc)
    base = results["webaip index -j 1"][0]
    base_cpu = results["webaip index -j 1"][3]
    print("input: %s (%.1f MB)" % (a.warc, size / 1e6))
    print("%-30s %9s %9s %9s %9s %12s" % ("tool", "wall s", "CPU s", "MB/s", "RSS MB", "webaip -j1 x"))
    for name, (wall, rss, mbs, cpu) in results.items():
        if name.startswith("package"):
            print("%-30s %9.2f %9.2f %9s %9.1f" % (name, wall, cpu, "", rss))
            continue
        files = 2 if "2 files" in name else 1
        print("%-30s %9.2f %9.2f %9.1f %9.1f %12.2f" % (name, wall, cpu, mbs, rss, wall / files / base))
    one_core = floor["inflate_s"] + floor["read_s"]
    print("floor, one core: inflate every member (libdeflate, %.0f MB/s here) %.2f s + read %.2f s = %.2f s"
          % (floor["inflate_mb_s"], floor["inflate_s"], floor["read_s"], one_core))
    print("webaip index -j 1 / floor: %.2fx the wall time, %.2fx in CPU seconds" % (base / one_core, base_cpu / one_core))
    for peer in ("cdxj-indexer", "cdxj-indexer --sort", "fastwarc index"):
        t, c = results[peer][0], results[peer][3]
        print("webaip index vs %-20s -j 1: %.2fx (CPU s %.2fx)   -j 2 on the one file: %.2fx" % (
            peer, t / base, c / base_cpu, t / results["webaip index -j 2 (1 file)"][0]))
    print("target: -j 1 >= 5x cdxj-indexer; the floor alone is %.2fx its CPU seconds" % (results["cdxj-indexer"][3] / one_core))
    if a.arc:
        p, pi = results["package"][0], results["package --index"][0]
        print("package --index / package: %.3f (%+.1f %%)" % (pi / p, (pi / p - 1) * 100))


if __name__ == "__main__":
    main()
