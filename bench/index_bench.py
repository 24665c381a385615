#!/usr/bin/env python3
"""`webaip index` against cdxj-indexer, `warcio index` and FastWARC's `fastwarc index` on one
WARC (the migrated 200 MB benchmark container), in the same run: wall time, MB/s of the
compressed input, peak RSS, and webaip's speed as a multiple of each peer's. Every tool runs
pinned to one core (`taskset -c 0`); webaip also with `-j 2` on two cores, on the one file (a
second thread starts at a guessed member boundary, its lines kept only when the first thread
lands exactly there) and over two copies of it. The cases run in turns (A-B-A-B ...), best of
`--runs` each, so that a machine busy for a moment slows every tool alike.

With `--arc ARC`, also `package --index` against `package` of that ARC (migrated into the
package's container; one core each, `-j 1`): the index made while the records are written
should cost at most 5 % of the package's time.

Usage: index_bench.py WARC [--arc ARC] [--webaip PATH] [--runs N]
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
                wall, rss = benchlib.run(cmd)
                if name not in results or wall < results[name][0]:
                    results[name] = (wall, rss, size * files / wall / 1e6)
    base = results["webaip index -j 1"][0]
    print("input: %s (%.1f MB)" % (a.warc, size / 1e6))
    print("%-30s %9s %9s %9s %12s" % ("tool", "wall s", "MB/s", "RSS MB", "webaip -j1 x"))
    for name, (wall, rss, mbs) in results.items():
        if name.startswith("package"):
            print("%-30s %9.2f %9s %9.1f" % (name, wall, "", rss))
            continue
        files = 2 if "2 files" in name else 1
        print("%-30s %9.2f %9.1f %9.1f %12.2f" % (name, wall, mbs, rss, wall / files / base))
    for peer in ("cdxj-indexer", "cdxj-indexer --sort", "fastwarc index"):
        t = results[peer][0]
        print("webaip index vs %-20s -j 1: %.2fx   -j 2 on the one file: %.2fx" % (
            peer, t / base, t / results["webaip index -j 2 (1 file)"][0]))
    if a.arc:
        p, pi = results["package"][0], results["package --index"][0]
        print("package --index / package: %.3f (%+.1f %%)" % (pi / p, (pi / p - 1) * 100))


if __name__ == "__main__":
    main()
