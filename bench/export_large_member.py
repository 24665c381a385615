#!/usr/bin/env python3
"""`webaip export wacz` of packages whose container holds one record larger than the 64 MiB
the index's reader inflates whole: the bytes the export reads (the kernel's `rchar`, every
read of the process, sampled until it exits) beside the size of the package's containers,
and its peak RSS, for each record size given. Reading each container once for the copy and
once for the index reads twice the containers; a fallback that reads them again shows here,
and so does memory that grows with the record.

Usage: export_large_member.py [--webaip PATH] [--sizes 100M,300M] [--work DIR]
(packages are made once in DIR, default bench/work, by `gen_arc.py large` and `webaip package`).
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

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def package_of(webaip, work, size):
    """A package of a 1 MB crawl then one record of `size` (made once)."""
    arc = os.path.join(work, f"IAH-20240315103000-00002-large-1M-{size}.arc.gz")
    pkg = os.path.join(work, f"export-large-{size}-pkg")
    if not os.path.exists(arc):
        gen = os.path.join(REPO, "scripts", "gen_arc.py")
        subprocess.run([sys.executable, gen, "large", arc, "--size", "1M", "--record-size", size], check=True)
    if not os.path.exists(os.path.join(pkg, "METS.xml")):
        subprocess.run([webaip, "package", "-q", "--no-virus-check", "--force", "--out", pkg, arc], check=True)
    return pkg


def read_and_rss(cmd):
    """Runs `cmd`: (bytes it read, peak RSS in kB, wall seconds)."""
    started = time.monotonic()
    p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", "/dev/stderr"] + cmd,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    rchar = 0
    child = None
    while p.poll() is None:
        if child is None:
            try:
                child = open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()[0]
            except (OSError, IndexError):
                pass
        if child is not None:
            try:
                for line in open(f"/proc/{child}/io"):
                    if line.startswith("rchar:"):
                        rchar = int(line.split()[1])
            except OSError:
                pass
        time.sleep(0.002)
    err = p.stderr.read().decode().strip().splitlines()
    if p.returncode != 0:
        sys.exit(f"{cmd}: failed: {err}")
    return rchar, int(err[-1]), time.monotonic() - started


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--webaip", default=benchlib.WEBAIP)
    ap.add_argument("--sizes", default="100M,300M")
    ap.add_argument("--work", default=os.path.join(REPO, "bench", "work"))
    a = ap.parse_args()
    print("| record | containers MB | read MB | read / containers | peak RSS MB | wall s |")
    print("|---|---:|---:|---:|---:|---:|")
    for size in a.sizes.split(","):
        pkg = package_of(a.webaip, a.work, size)
        containers = sum(os.path.getsize(c) for c in glob.glob(os.path.join(pkg, "content", "*.warc.gz")))
        with tempfile.TemporaryDirectory(dir=a.work) as tmp:
            out = os.path.join(tmp, "out.wacz")
            rchar, rss, wall = read_and_rss([a.webaip, "export", "wacz", "-q", pkg, "-o", out])
        print(f"| {size} | {containers / 1e6:.1f} | {rchar / 1e6:.1f} | {rchar / containers:.2f} "
              f"| {rss / 1024:.0f} | {wall:.2f} |")


if __name__ == "__main__":
    main()
