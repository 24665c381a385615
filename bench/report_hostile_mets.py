#!/usr/bin/env python3
"""Peak memory of validating a hostile METS (bench/run-report.sh --hostile builds and runs it).

Packages one small sample once (no virus check), then makes `dmdid`: a copy of the package
whose METS gives each logical `div` a DMDID of --tokens tokens (4,000,000: 32 MB, as a
hostile review made it). Then runs, in turns with the reference binary when one is given
(--base), best of --runs each, pinned to the first --cores cores with taskset:
  validate      webaip validate --json dmdid/METS.xml
  report        webaip report --json --validate dmdid pkg
Prints wall seconds, CPU seconds and peak RSS (MB) of each, and the schema status.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def measured(cmd):
    """(wall s, CPU s, peak RSS MB, stdout) of cmd; exit 0 or 1 (findings) is a run."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            err.seek(0)
            sys.exit("failed: %s\n%s" % (" ".join(cmd[:6]), err.read()[-2000:].decode(errors="replace")))
        out.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, out.read()


def hostile_copy(pkg, dest, tokens):
    """dest: pkg with every logical div's DMDID `tokens` tokens long (its first ID repeated)."""
    shutil.copytree(pkg, dest, copy_function=os.link)
    path = os.path.join(dest, "METS.xml")
    mets = open(path, encoding="utf-8").read()
    os.unlink(path)

    def longer(m):
        # One-byte tokens (as the review's: 4 divs of 4,000,000 make 32 MB), each tag under
        # the reader's 8 MiB.
        return m.group(1) + " ".join(["d"] * tokens) + '"'
    mets = re.sub(r'(<mets:div [^>]*?DMDID=")([^"]*)"', longer, mets)
    with open(path, "w", encoding="utf-8") as f:
        f.write(mets)
    return os.path.getsize(path)


def xsd_status(stdout, which):
    v = json.loads(stdout)
    if which == "validate":
        x = v["reports"][0]["xsd"]
        return x["status"] + (": " + x.get("reason", "")[:90] if x["status"] != "validated" else "")
    return "mets_valid=%s" % v["packages"][0]["mets_valid"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--base", help="a reference binary, measured in turns")
    ap.add_argument("--sample", default="samples/mirror")
    ap.add_argument("--tokens", type=int, default=4_000_000)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--cores", type=int, default=2)
    a = ap.parse_args()
    pin = ["taskset", "-c", ",".join(str(i) for i in range(a.cores))]
    work = tempfile.mkdtemp(prefix="webaip-hostile-mets-")
    try:
        pkg = os.path.join(work, "pkg")
        subprocess.check_call([a.bin, "package", "-q", "--no-virus-check", "--out", pkg, a.sample])
        dmdid = os.path.join(work, "dmdid")
        size = hostile_copy(pkg, dmdid, a.tokens)
        print("dmdid METS: %.1f MB, every div's DMDID %d tokens" % (size / 1e6, a.tokens))
        bins = [("this", a.bin)] + ([("base", a.base)] if a.base else [])
        cmds = {
            "validate": lambda b: [b, "validate", "--json", os.path.join(dmdid, "METS.xml")],
            "report": lambda b: [b, "report", "--json", "--validate", dmdid, pkg],
        }
        best = {}
        for _ in range(a.runs):
            for which, make in cmds.items():
                for name, b in bins:
                    wall, cpu, rss, out = measured(pin + make(b))
                    key = (which, name)
                    if key not in best or wall < best[key][0]:
                        best[key] = (wall, cpu, rss, xsd_status(out, which))
        print("%-10s %-5s %8s %8s %10s  %s" % ("command", "bin", "wall s", "CPU s", "peak MB", "schemas"))
        for (which, name), (wall, cpu, rss, status) in sorted(best.items()):
            print("%-10s %-5s %8.2f %8.2f %10.1f  %s" % (which, name, wall, cpu, rss, status))
        print("load: %s" % open("/proc/loadavg").read().strip())
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
