#!/usr/bin/env python3
"""`store check` at scale: simulated stores of N small packages (two 512-byte files each, one
file system replica: bench/gen_store.py for the webaip layout, bench/gen_store_ocfl.py for an
OCFL storage root) checked by list and size, then deep (every copy hashed), then a 1 %
sample; wall time, CPU time, peak RSS and the state database's size for each N, and the time
per object (linear in N when it stays flat).

usage: store_fixity_bench.py --bin WEBAIP [--layout webaip|ocfl] [--counts 10000,30000,100000]
       [--work DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from benchlib import measured  # noqa: E402


def db_size(path):
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--layout", choices=["webaip", "ocfl"], default="webaip")
    ap.add_argument("--counts", default="10000,30000,100000")
    ap.add_argument("--work", default=os.path.join(HERE, "work", "store-fixity"))
    a = ap.parse_args()
    rows = []
    for n in [int(c) for c in a.counts.split(",")]:
        out = os.path.join(a.work, str(n))
        shutil.rmtree(out, ignore_errors=True)
        generator = "gen_store_ocfl.py" if a.layout == "ocfl" else "gen_store.py"
        gen = subprocess.run([sys.executable, os.path.join(HERE, generator), out,
                              "--objects", str(n)], check=True, capture_output=True, text=True)
        made = json.loads(gen.stdout)
        cfg = os.path.join(out, "store.toml")
        db = os.path.join(out, "state.sqlite")
        before = db_size(db)
        for label, extra in [("check", []), ("check --deep", ["--deep"]),
                             ("check --sample 1%", ["--sample", "1%"])]:
            cmd = ["taskset", "-c", "0,1", a.bin, "store", "--config", cfg, "--quiet", "check"]
            wall, cpu, rss = measured(cmd + extra)
            rows.append({"layout": a.layout, "objects": n, "files": made["files"], "command": label, "wall_s": wall,
                         "cpu_s": cpu, "rss_mb": rss, "us_per_object": wall / n * 1e6,
                         "db_before_mb": before / 1e6, "db_after_mb": db_size(db) / 1e6})
            print("%7d objects  %-18s %7.2f s wall %7.2f s CPU %6.1f MB RSS %6.1f us/object  "
                  "state DB %.1f MB (was %.1f)"
                  % (n, label, wall, cpu, rss, wall / n * 1e6, db_size(db) / 1e6, before / 1e6),
                  flush=True)
        shutil.rmtree(out, ignore_errors=True)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
