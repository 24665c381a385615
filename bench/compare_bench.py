#!/usr/bin/env python3
"""Times a base revision's webaip beside the current one on the same generated crawl ARC, the
same machine and the same run (issue 16's targets). Run it through bench/run-compare.sh, which
builds both binaries first.

Timed, alternating base and new, best of --repeat runs each:
  migrate                       webaip migrate (level 6)
  package                       webaip package --no-virus-check
  package --clamd               every payload scanned by a real clamd, restarted before every
                                run (it caches the MD5 of what it found clean)
  package, then clamdscan -m    package without scanning followed by clamd's own client
                                scanning the same payloads as files (MULTISCAN), clamd
                                restarted before: scanning done apart from webaip

Targets (exit status 1 when one is missed):
  new package / new migrate                                   <= 1.05x
  new package --clamd / new (package, then clamdscan -m)      <= 1.00x
"""
import argparse
import os
import sys

from benchlib import WEBAIP, WORK, Clamd, ensure_arc, extract_payloads, time_once

PACKAGE_PER_MIGRATE = 1.05
CLAMD_PER_APART = 1.00


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the base revision's webaip binary")
    ap.add_argument("--base-label", default="base")
    ap.add_argument("--new", default=WEBAIP, help="the current webaip binary")
    ap.add_argument("--new-label", default="new")
    ap.add_argument("--size", default="200M", help="size of the generated crawl ARC")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--clamd-tmp", choices=["shm", "disk"], default="shm",
                    help="clamd's TemporaryDirectory: tmpfs (/dev/shm, as the README's headline figures) or disk")
    a = ap.parse_args()

    arc = ensure_arc(a.size)
    size_mb = os.path.getsize(arc) / 1e6
    work = os.path.join(WORK, "compare")
    os.makedirs(work, exist_ok=True)
    bins = {"base": os.path.abspath(a.base), "new": os.path.abspath(a.new)}
    for b in bins.values():
        if not os.access(b, os.X_OK):
            sys.exit("no webaip binary at %s" % b)
    tmp = None
    if a.clamd_tmp == "shm":
        if not os.access("/dev/shm", os.W_OK):
            sys.exit("/dev/shm is not writable: use --clamd-tmp disk")
        tmp = "/dev/shm/webaip-clamd-compare"
    clamd = Clamd(os.path.join(work, "clamd"), 3335, tmp=tmp)

    def out(side, what):
        return os.path.join(work, "%s-%s" % (side, what))

    def package(side, *extra):
        return [bins[side], "package", "-q", "--force", *extra, "--out", out(side, "package"), arc]

    def measure(make_cmd, before=None):
        """Best of a.repeat for base and new, runs alternating so that a change in the machine's
        load falls on both."""
        best = {}
        for _ in range(a.repeat):
            for side in ("base", "new"):
                wall, _ = time_once(lambda: make_cmd(side), None, keep=True, before=before)
                best[side] = min(best.get(side, wall), wall)
        return best

    rows = []
    print("timing migrate ...", flush=True)
    rows.append(("migrate", measure(lambda s: [bins[s], "migrate", "-q", "--force", "--out", out(s, "migrate"), arc])))
    print("timing package ...", flush=True)
    rows.append(("package", measure(lambda s: package(s, "--no-virus-check"))))
    # The payloads as files for clamdscan: those of the new package (the same bytes as the
    # base's; kept per ARC size).
    payloads = os.path.join(work, "payloads-%s" % a.size)
    extract_payloads(out("new", "package"), payloads)
    print("timing package --clamd ...", flush=True)
    rows.append(("package --clamd", measure(lambda s: package(s, "--clamd", clamd.addr), before=clamd.restart)))
    print("timing package, then clamdscan -m ...", flush=True)
    rows.append(("package, then clamdscan -m", measure(
        lambda s: [package(s, "--no-virus-check"),
                   ["clamdscan", "-c", clamd.conf, "--multiscan", "--no-summary", payloads]],
        before=clamd.restart)))
    clamd.stop()

    print()
    print("input: %s (%.1f MB), %d cores, best of %d runs each, alternating; clamd temp on %s"
          % (os.path.basename(arc), size_mb, os.cpu_count(), a.repeat, a.clamd_tmp))
    print("base: %s\nnew:  %s" % (a.base_label, a.new_label))
    print()
    print("%-28s %9s %9s %9s" % ("", "base s", "new s", "new/base"))
    for name, t in rows:
        print("%-28s %9.2f %9.2f %8.2fx" % (name, t["base"], t["new"], t["new"] / t["base"]))
    t = {name: v for name, v in rows}
    pkg_mig = {s: t["package"][s] / t["migrate"][s] for s in ("base", "new")}
    scan = {s: t["package --clamd"][s] / t["package, then clamdscan -m"][s] for s in ("base", "new")}
    print()
    print("package / migrate:                             %.2fx  (target <= %.2fx; base %.2fx)"
          % (pkg_mig["new"], PACKAGE_PER_MIGRATE, pkg_mig["base"]))
    print("package --clamd / (package, then clamdscan -m): %.2fx  (target <= %.2fx; base %.2fx)"
          % (scan["new"], CLAMD_PER_APART, scan["base"]))
    missed = []
    if pkg_mig["new"] > PACKAGE_PER_MIGRATE:
        missed.append("package / migrate")
    if scan["new"] > CLAMD_PER_APART:
        missed.append("package --clamd")
    print("\nall targets met" if not missed else "\nTARGET MISSED: " + ", ".join(missed))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
