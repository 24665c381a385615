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

  audit                         webaip audit of the package each side made

Targets (exit status 1 when one is missed):
  new package / new migrate                                   <= 1.05x
  new package --clamd / new (package, then clamdscan -m)      <= 1.00x
  with --max-ratio R: new / base of migrate, package and audit <= R (a restructuring that must
  not cost time: --max-ratio 1.02)
--no-clamd leaves out the two clamd rows (and their target).
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
    ap.add_argument("--no-clamd", action="store_true", help="time migrate, package and audit only")
    ap.add_argument("--max-ratio", type=float, help="target for new/base of migrate, package and audit")
    a = ap.parse_args()

    arc = ensure_arc(a.size)
    size_mb = os.path.getsize(arc) / 1e6
    work = os.path.join(WORK, "compare")
    os.makedirs(work, exist_ok=True)
    bins = {"base": os.path.abspath(a.base), "new": os.path.abspath(a.new)}
    for b in bins.values():
        if not os.access(b, os.X_OK):
            sys.exit("no webaip binary at %s" % b)

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
    print("timing audit ...", flush=True)
    rows.append(("audit", measure(lambda s: [bins[s], "audit", "-q", out(s, "package")])))
    if not a.no_clamd:
        rows.extend(clamd_rows(a, work, out, package, measure))
    report(a, arc, size_mb, rows)
    return 1 if targets_missed(a, rows) else 0


def clamd_rows(a, work, out, package, measure):
    """package with a real clamd beside package followed by clamd's own client."""
    tmp = None
    if a.clamd_tmp == "shm":
        if not os.access("/dev/shm", os.W_OK):
            sys.exit("/dev/shm is not writable: use --clamd-tmp disk")
        tmp = "/dev/shm/webaip-clamd-compare"
    clamd = Clamd(os.path.join(work, "clamd"), 3335, tmp=tmp)
    rows = []
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
    return rows


def report(a, arc, size_mb, rows):
    print()
    print("input: %s (%.1f MB), %d cores, best of %d runs each, alternating; clamd temp on %s"
          % (os.path.basename(arc), size_mb, os.cpu_count(), a.repeat, a.clamd_tmp))
    print("base: %s\nnew:  %s" % (a.base_label, a.new_label))
    print()
    print("%-28s %9s %9s %9s" % ("", "base s", "new s", "new/base"))
    for name, t in rows:
        print("%-28s %9.2f %9.2f %8.2fx" % (name, t["base"], t["new"], t["new"] / t["base"]))


def targets_missed(a, rows):
    t = {name: v for name, v in rows}
    missed = []
    pkg_mig = {s: t["package"][s] / t["migrate"][s] for s in ("base", "new")}
    print()
    print("package / migrate:                             %.2fx  (target <= %.2fx; base %.2fx)"
          % (pkg_mig["new"], PACKAGE_PER_MIGRATE, pkg_mig["base"]))
    if pkg_mig["new"] > PACKAGE_PER_MIGRATE:
        missed.append("package / migrate")
    if "package --clamd" in t:
        scan = {s: t["package --clamd"][s] / t["package, then clamdscan -m"][s] for s in ("base", "new")}
        print("package --clamd / (package, then clamdscan -m): %.2fx  (target <= %.2fx; base %.2fx)"
              % (scan["new"], CLAMD_PER_APART, scan["base"]))
        if scan["new"] > CLAMD_PER_APART:
            missed.append("package --clamd")
    if a.max_ratio:
        for name in ("migrate", "package", "audit"):
            ratio = t[name]["new"] / t[name]["base"]
            print("%-46s %.2fx  (target <= %.2fx)" % ("new / base, %s:" % name, ratio, a.max_ratio))
            if ratio > a.max_ratio:
                missed.append("%s new/base" % name)
    print("\nall targets met" if not missed else "\nTARGET MISSED: " + ", ".join(missed))
    return missed

if __name__ == "__main__":
    sys.exit(main())
