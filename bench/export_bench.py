#!/usr/bin/env python3
"""`webaip export wacz` against copying the package's bytes (`cp` of its content containers and
METS) and against py-wacz's `wacz create` of the same containers, in the same run: wall time,
peak RSS, and export's time as a multiple of the copy's. The cases run in turns (A-B-A-B ...),
best of `--runs` each. The target: export at most 1.2x the copy, memory constant.

Usage: export_bench.py PACKAGE [--webaip PATH] [--runs N] [--no-peer]
"""
import argparse
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("package")
    ap.add_argument("--webaip", default=benchlib.WEBAIP)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true")
    a = ap.parse_args()
    containers = sorted(glob.glob(os.path.join(a.package, "content", "*.warc.gz")))
    size = sum(os.path.getsize(c) for c in containers)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(a.package))) as tmp:
        out = os.path.join(tmp, "out.wacz")
        copy = os.path.join(tmp, "copy")
        os.mkdir(copy)
        cases = [
            ("cp (containers and METS)", ["cp"] + containers + [os.path.join(a.package, "METS.xml"), copy]),
            ("webaip export wacz", [a.webaip, "export", "wacz", "-q", a.package, "-o", out]),
            ("webaip export wacz --no-verify", [a.webaip, "export", "wacz", "-q", "--no-verify", a.package, "-o", out]),
            ("webaip export wacz -j1", ["taskset", "-c", "0", a.webaip, "export", "wacz", "-q", a.package, "-o", out]),
        ]
        if not a.no_peer:
            cases.append(("py-wacz create", [os.path.join(benchlib.VENV, "wacz"), "create", "-o", out] + containers))
        results = {}
        for _ in range(a.runs):
            for name, cmd in cases:
                wall, rss = benchlib.run(cmd)
                if name not in results or wall < results[name][0]:
                    results[name] = (wall, rss)
    base = results["cp (containers and METS)"][0]
    print("package: %s (%d containers, %.1f MB)" % (a.package, len(containers), size / 1e6))
    print("%-34s %9s %9s %9s" % ("command", "wall s", "RSS MB", "x cp"))
    for name, (wall, rss) in results.items():
        print("%-34s %9.2f %9.1f %9.2f" % (name, wall, rss, wall / base))


if __name__ == "__main__":
    main()
