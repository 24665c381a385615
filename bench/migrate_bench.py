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
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
WORK = os.path.join(HERE, "work")
VENV = os.path.join(REPO, ".venv", "bin")
WEBAIP = os.path.join(REPO, "target", "release", "webaip")


def run(cmd, stdout=None):
    """Runs cmd; returns (wall seconds, peak RSS in MB)."""
    # stderr goes to a file, not a pipe: a chatty tool (arc2warc logs every record) would
    # otherwise fill the pipe and block.
    with tempfile.TemporaryFile() as errf:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=stdout or subprocess.DEVNULL, stderr=errf)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        errf.seek(0)
        err = errf.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("benchmark command failed: %s\n%s" % (" ".join(cmd), err[-2000:]))
    return wall, usage.ru_maxrss / 1024.0


def best_of(n, make_cmd, out_path, to_stdout=False, keep=False, before=None):
    """The fastest of n runs; `before` (untimed) runs ahead of each."""
    best = None
    for _ in range(n):
        if before:
            before()
        if os.path.exists(out_path) and not keep:
            os.remove(out_path)
        cmd = make_cmd()
        if to_stdout:
            with open(out_path, "wb") as f:
                r = run(cmd, stdout=f)
        else:
            r = run(cmd)
        if best is None or r[0] < best[0]:
            best = r
    return best + (os.path.getsize(out_path),)


def extract_payloads(pkg_dir, dest):
    """Writes every non-empty response/resource payload of the package's containers to a file
    of its own (once), for clamdscan."""
    if os.path.isdir(dest) and os.listdir(dest):
        return
    os.makedirs(dest, exist_ok=True)
    code = (
        "import glob, os, sys\n"
        "from warcio.archiveiterator import ArchiveIterator\n"
        "n = 0\n"
        "for fn in sorted(glob.glob(os.path.join(sys.argv[1], 'content', '*.warc.gz'))):\n"
        "    for r in ArchiveIterator(open(fn, 'rb')):\n"
        "        if r.rec_type in ('response', 'resource'):\n"
        "            b = r.content_stream().read()\n"
        "            if b:\n"
        "                n += 1\n"
        "                open(os.path.join(sys.argv[2], '%06d' % n), 'wb').write(b)\n"
    )
    subprocess.check_call([os.path.join(VENV, "python"), "-c", code, pkg_dir, dest])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="200M", help="size of the generated crawl ARC")
    ap.add_argument("--single", default="1G", help="size of the single-record ARC")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-single", action="store_true")
    a = ap.parse_args()
    os.makedirs(WORK, exist_ok=True)
    arc = os.path.join(WORK, "IAH-20240315103000-00000-bench-%s.arc.gz" % a.size)
    if not os.path.exists(arc):
        print("generating %s ..." % arc, flush=True)
        subprocess.check_call([sys.executable, os.path.join(REPO, "scripts", "gen_arc.py"), "bench", arc + ".tmp", "--size", a.size])
        os.rename(arc + ".tmp", arc)
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
    payload_dir = os.path.join(WORK, "payloads")
    extract_payloads(pkg_dir, payload_dir)

    def clamd_for(tmp, port):
        env = dict(os.environ, WEBAIP_CLAMD_DIR="/tmp/webaip-clamd-bench-%d" % port,
                   WEBAIP_CLAMD_PORT=str(port))
        env.pop("CLAMD_TMP", None)
        if tmp:
            env["CLAMD_TMP"] = tmp
        script = os.path.join(REPO, "scripts", "clamd-local.sh")

        def restart():
            subprocess.run(["bash", script, "stop"], capture_output=True, check=True, env=env)
            return subprocess.run(["bash", script], capture_output=True, text=True, check=True, env=env).stdout
        addr = [l.split("=", 1)[1] for l in restart().splitlines() if l.startswith("WEBAIP_CLAMD=")][0]
        conf = os.path.join(env["WEBAIP_CLAMD_DIR"], "clamd.conf")
        return addr, conf, restart

    def scan_rows(label, tmp, port):
        clamd, conf, restart = clamd_for(tmp, port)
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
