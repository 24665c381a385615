#!/usr/bin/env python3
"""N small generated harvests and a manifest listing them, for the batch benchmarks.

  gen_harvests.py WORK N

writes WORK/harvests/IAH-...-NNNNN-small.arc.gz (gzipped ARC files of 20 KB to 150 KB, each a
crawl of its own: pages, styles, images, redirects; scripts/gen_arc.py's `bench` kind, seeded by
its number) and WORK/manifest.csv, made last (through a temporary name), so a manifest means
every harvest is there.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import gen_arc  # noqa: E402


def main(work, n):
    os.makedirs(os.path.join(work, "harvests"), exist_ok=True)
    with open(os.path.join(work, "manifest.csv.tmp"), "w") as m:
        m.write("source\n")
        for i in range(n):
            name = "IAH-20240315103000-%05d-small.arc.gz" % i
            gen_arc.write_bench(os.path.join(work, "harvests", name), 20000, i + 1)
            m.write("harvests/%s\n" % name)
    os.rename(os.path.join(work, "manifest.csv.tmp"), os.path.join(work, "manifest.csv"))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
