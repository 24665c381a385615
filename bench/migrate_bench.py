#!/usr/bin/env python3
"""Times `webaip migrate` beside the peer tools on the same generated ARC.

Run it through bench/run.sh, which installs the peers and builds webaip first.

1. A realistic 200 MB crawl ARC (per-record gzip, HTML-like and incompressible payloads
   mixed) is generated once into bench/work/ by scripts/gen_arc.py.
2. Each tool converts it to a gzipped WARC, twice; the faster run counts:
     webaip migrate (level 6, the default), webaip migrate --level 9,
     warcio recompress (zlib level 9), warctools arc2warc -Z.
   Printed: wall seconds, MB/s of input, peak RSS, output size, and the ratio of each peer's
   time to webaip's. `webaip package` on the same ARC is timed too (target: at most 1.1x
   the time of `migrate`), and `webaip package --clamd` with a real clamd restarted before
   every run (target: at most 1.3x `package` without scanning), beside clamd's own client
   (`clamdscan --multiscan`) scanning the same payloads as files: the cost of scanning done
   apart from webaip.
3. An ARC holding a single 1 GiB record is generated on the fly and migrated; its peak RSS is
   printed (target: under 64 MB).

Everything is measured on this machine, nothing is hard-coded; exit status 1 if a target is
missed (2.5x warcio at level 6, 1.5x at level 9, package at most 1.1x migrate, scanning
adding at most 30 %, RSS under 64 MB).
"""
import argparse
import os
import subprocess
import sys

from benchlib import REPO, VENV, WEBAIP, WORK, Clamd, best_of, ensure_arc, extract_payloads, run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="200M", help="size of the generated crawl ARC")
    ap.add_argument("--single", default="1G", help="size of the single-record ARC")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-single", action="store_true")
    a = ap.parse_args()
    arc = ensure_arc(a.size)
    size_mb = os.path.getsize(arc) / 1e6
    out = os.path.join(WORK, "out")
    os.makedirs(out, exist_ok=True)
    webaip_out = os.path.join(out, os.path.basename(arc).replace(".arc.gz", ".warc.gz"))

    rows = []
    rows.append(("webaip migrate (level 6)",) + best_of(a.repeat, lambda: [WEBAIP, "migrate", "-q", "--force", "--out", out, arc], webaip_out))
    rows.append(("webaip migrate --level 9",) + best_of(a.repeat, lambda: [WEBAIP, "migrate", "-q", "--force", "--level", "9", "--out", out, arc], webaip_out))
    pkg_dir = os.path.join(WORK, "package")
    rows.append(("webaip package (level 6)",) + best_of(
        a.repeat,
        lambda: [WEBAIP, "package", "-q", "--force", "--no-virus-check", "--out", pkg_dir, arc],
        os.path.join(pkg_dir, "METS.xml"),
        keep=True,
    ))
    # The same, with every payload scanned by a real clamd (scripts/clamd-local.sh), a daemon
    # of its own for the benchmark, restarted before every timed run: clamd caches the MD5 of
    # every file it found clean and skips it when it sees it again, so a second run over the
    # same payloads would time cache look-ups, not scanning. clamd makes a work directory for
    # every scan in its TemporaryDirectory: timed with it on tmpfs (/dev/shm) and on disk
    # (clamd-local.sh's default).
    # Per size: payloads of another size left in bench/work/ would be scanned instead.
    payload_dir = os.path.join(WORK, "payloads-%s" % a.size)
    extract_payloads(pkg_dir, payload_dir)

    def scan_rows(label, tmp, port):
        daemon = Clamd("/tmp/webaip-clamd-bench-%d" % port, port, tmp=tmp)
        clamd, conf, restart = daemon.addr, daemon.conf, daemon.restart
        with_scan = (f"package + clamd ({label})",) + best_of(
            a.repeat,
            lambda: [WEBAIP, "package", "-q", "--force", "--clamd", clamd, "--out", pkg_dir, arc],
            os.path.join(pkg_dir, "METS.xml"),
            keep=True,
            before=restart,
        )
        # The peer: clamd's own client scanning the same payloads, one file each, in parallel
        # (MULTISCAN), after packaging: what scanning costs done apart from webaip.
        alone = (f"clamdscan -m ({label})",) + best_of(
            a.repeat,
            lambda: ["clamdscan", "-c", conf, "--multiscan", "--no-summary", payload_dir],
            os.path.join(pkg_dir, "METS.xml"),
            keep=True,
            before=restart,
        )
        daemon.stop()
        return [with_scan, alone]
    shm = "/dev/shm/webaip-clamd-bench" if os.access("/dev/shm", os.W_OK) else None
    rows.extend(scan_rows("tmp: shm", shm, 3331))
    rows.extend(scan_rows("tmp: disk", None, 3332))
    warcio_out = os.path.join(out, "warcio.warc.gz")
    rows.append(("warcio recompress",) + best_of(a.repeat, lambda: [os.path.join(VENV, "warcio"), "recompress", arc, warcio_out], warcio_out))
    a2w_out = os.path.join(out, "arc2warc.warc.gz")
    rows.append(("warctools arc2warc -Z",) + best_of(a.repeat, lambda: [os.path.join(VENV, "arc2warc"), "-Z", arc], a2w_out, to_stdout=True))

    print()
    print("input: %s (%.1f MB), %d cores, best of %d runs" % (os.path.basename(arc), size_mb, os.cpu_count(), a.repeat))
    print("%-28s %9s %9s %10s %12s" % ("tool", "wall s", "MB/s", "peak RSS", "output MB"))
    for name, wall, rss, osize in rows:
        print("%-28s %9.2f %9.1f %8.1f MB %12.1f" % (name, wall, size_mb / wall, rss, osize / 1e6))
    w6, w9, pkg, scan, alone, scan_disk, alone_disk, wio, a2w = (r[1] for r in rows)
    print()
    print("warcio / webaip (level 6):   %.2fx  (target >= 2.5x)" % (wio / w6))
    print("warcio / webaip (level 9):   %.2fx  (target >= 1.5x)" % (wio / w9))
    print("arc2warc / webaip (level 6): %.2fx" % (a2w / w6))
    print("package / migrate:           %.2fx  (target <= 1.1x)" % (pkg / w6))
    print("package with scan / without: %.2fx  (target <= 1.3x; clamd temp on tmpfs)" % (scan / pkg))
    print("  the same, clamd temp on disk: %.2fx" % (scan_disk / pkg))
    print("package with scan / (package, then clamdscan -m): %.2fx tmpfs, %.2fx disk"
          % (scan / (pkg + alone), scan_disk / (pkg + alone_disk)))
    ok = wio / w6 >= 2.5 and wio / w9 >= 1.5 and pkg / w6 <= 1.1 and scan / pkg <= 1.3

    if not a.skip_single:
        single = os.path.join(WORK, "IAH-20240315103000-00001-single-%s.arc.gz" % a.single)
        print("\ngenerating an ARC with one %s record ..." % a.single, flush=True)
        subprocess.check_call([sys.executable, os.path.join(REPO, "scripts", "gen_arc.py"), "single", single, "--record-size", a.single])
        wall, rss = run([WEBAIP, "migrate", "-q", "--force", "--out", out, single])
        print("single %s record: %.1f s, peak RSS %.1f MB (target < 64 MB)" % (a.single, wall, rss))
        ok = ok and rss < 64
        os.remove(single)
        for f in os.listdir(out):
            if "single" in f:
                os.remove(os.path.join(out, f))
    print("\nall targets met" if ok else "\nTARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
