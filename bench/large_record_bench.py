#!/usr/bin/env python3
"""Times `webaip migrate` on a crawl whose bytes are mostly one large record.

Run it through bench/run-large-record.sh, which builds webaip and installs warcio first.

The ARC (scripts/gen_arc.py large: an 8 MB crawl, then one 48 MB PDF-like record, half text and
half noise) is generated once into bench/work/. Timed in turns (-j 1, -j 2, warcio, again),
the fastest of each counts:
  webaip migrate -j 1 and -j 2 (level 6, the default), warcio recompress (zlib, one core).
A large record is one gzip member compressed in parallel chunks (src/formats/gzip_member.rs),
so -j 2 should take at least 1.6x less time than -j 1 on two cores, and at least 2.5x less
than warcio. Peak RSS of every webaip run is printed (target: under 64 MB), and the outputs
of -j 1 and -j 2 are compared byte for byte (the chunks do not depend on the threads).

Exit status 1 if a target is missed.
"""
import argparse
import filecmp
import os
import subprocess
import sys

from benchlib import REPO, VENV, WEBAIP, WORK, run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="8M", help="bytes of ordinary records before the large one")
    ap.add_argument("--record-size", default="48M", help="size of the large record")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    name = "IAH-20240315103000-00001-large-%s-%s.arc.gz" % (a.size, a.record_size)
    arc = os.path.join(WORK, name)
    if not os.path.exists(arc):
        print("generating %s ..." % name, flush=True)
        subprocess.check_call([sys.executable, os.path.join(REPO, "scripts", "gen_arc.py"), "large", arc + ".part",
                               "--size", a.size, "--record-size", a.record_size])
        os.rename(arc + ".part", arc)
    size_mb = os.path.getsize(arc) / 1e6
    outs = {j: os.path.join(WORK, "large-j%d" % j) for j in (1, 2)}
    for d in outs.values():
        os.makedirs(d, exist_ok=True)
    warcio_out = os.path.join(WORK, "large-warcio.warc.gz")
    cmds = {
        "webaip migrate -j 1": [WEBAIP, "migrate", "-q", "--force", "--deterministic", "-j", "1", "--out", outs[1], arc],
        "webaip migrate -j 2": [WEBAIP, "migrate", "-q", "--force", "--deterministic", "-j", "2", "--out", outs[2], arc],
        "warcio recompress": [os.path.join(VENV, "warcio"), "recompress", arc, warcio_out],
    }
    best = {k: None for k in cmds}
    for _ in range(a.repeat):
        for label, cmd in cmds.items():
            wall, rss = run(cmd)
            if best[label] is None or wall < best[label][0]:
                best[label] = (wall, rss)
    print()
    print("input: %s (%.1f MB), %d cores, best of %d runs in turns" % (name, size_mb, os.cpu_count(), a.repeat))
    print("%-22s %9s %9s %10s" % ("tool", "wall s", "MB/s", "peak RSS"))
    for label, (wall, rss) in best.items():
        print("%-22s %9.2f %9.1f %7.1f MB" % (label, wall, size_mb / wall, rss))
    j1, j2, wio = (best[k][0] for k in cmds)
    out_name = name.replace(".arc.gz", ".warc.gz")
    same = filecmp.cmp(os.path.join(outs[1], out_name), os.path.join(outs[2], out_name), shallow=False)
    rss = max(best[k][1] for k in cmds if k.startswith("webaip"))
    print()
    print("-j 1 / -j 2:          %.2fx  (target >= 1.6x)" % (j1 / j2))
    print("warcio / webaip -j 2: %.2fx  (target >= 2.5x)" % (wio / j2))
    print("peak RSS:             %.1f MB (target < 64 MB)" % rss)
    print("-j 1 and -j 2 outputs %s" % ("identical" if same else "DIFFER"))
    ok = j1 / j2 >= 1.6 and wio / j2 >= 2.5 and rss < 64 and same
    print("\nall targets met" if ok else "\nTARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
