#!/usr/bin/env python3
"""`webaip export wacz` against copying the package's bytes (`cp` of its content containers and
METS), against hashing the same bytes (the SHA-256 every WACZ member carries in its
datapackage, and the SHA-512 the export checks against the METS: coreutils and OpenSSL, which
uses the CPU's SHA instructions as webaip does) and against py-wacz's `wacz create
--detect-pages` of the same containers, in the same run: wall time, CPU time (user + system),
peak RSS, and each as a multiple of the copy's, of `sha256sum`'s (coreutils) and of the
SHA-256 floor's (OpenSSL). The cases run in turns (A-B-A-B ...), best of `--runs` each. The
target: export at most 1.3x `sha256sum` of the same bytes, memory constant. `--baseline PATH`
adds the export of another webaip build (an earlier one) to the same turns.

Usage: export_bench.py PACKAGE [--webaip PATH] [--baseline PATH] [--runs N] [--no-peer]
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

CP = "cp (containers and METS)"
SHA256SUM = "sha256sum (same bytes)"
FLOOR = "openssl dgst -sha256 (same bytes)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("package")
    ap.add_argument("--webaip", default=benchlib.WEBAIP)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline", help="another webaip build whose export runs in the same turns")
    ap.add_argument("--no-peer", action="store_true")
    a = ap.parse_args()
    containers = sorted(glob.glob(os.path.join(a.package, "content", "*.warc.gz")))
    mets = os.path.join(a.package, "METS.xml")
    size = sum(os.path.getsize(c) for c in containers + [mets])
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(a.package))) as tmp:
        out = os.path.join(tmp, "out.wacz")
        copy = os.path.join(tmp, "copy")
        os.mkdir(copy)
        export = [a.webaip, "export", "wacz", "-q", a.package, "-o", out]
        cases = [
            (CP, ["cp"] + containers + [mets, copy]),
            (SHA256SUM, ["sha256sum"] + containers + [mets]),
            ("sha512sum (same bytes)", ["sha512sum"] + containers + [mets]),
            (FLOOR, ["openssl", "dgst", "-sha256"] + containers + [mets]),
            ("openssl dgst -sha512 (same bytes)", ["openssl", "dgst", "-sha512"] + containers + [mets]),
            ("webaip export wacz", export),
            ("webaip export wacz --no-verify", export + ["--no-verify"]),
            ("webaip export wacz on one core", ["taskset", "-c", "0"] + export),
        ]
        if a.baseline:
            cases.append(("baseline export wacz", [a.baseline] + export[1:]))
        if not a.no_peer:
            wacz = os.path.join(benchlib.VENV, "wacz")
            cases.append(("py-wacz create --detect-pages", [wacz, "create", "--detect-pages", "-o", out] + containers))
        results = {}
        for _ in range(a.runs):
            for name, cmd in cases:
                r = benchlib.measured(cmd)
                if name not in results or r[0] < results[name][0]:
                    results[name] = r
    base, sums, floor = results[CP][0], results[SHA256SUM][0], results[FLOOR][0]
    print("package: %s (%d containers and METS, %.1f MB)" % (a.package, len(containers), size / 1e6))
    head = ("command", "wall s", "CPU s", "RSS MB", "x cp", "x sha256sum", "x openssl")
    print("%-36s %8s %8s %8s %8s %12s %10s" % head)
    for name, (wall, cpu, rss) in results.items():
        row = (name, wall, cpu, rss, wall / base, wall / sums, wall / floor)
        print("%-36s %8.2f %8.2f %8.1f %8.2f %12.2f %10.2f" % row)
    print("target: webaip export wacz <= 1.3x sha256sum: %.2fx" % (results["webaip export wacz"][0] / sums))
    print("load average: %s" % " ".join("%.1f" % x for x in os.getloadavg()))


if __name__ == "__main__":
    main()
