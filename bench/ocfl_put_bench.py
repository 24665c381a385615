"""`webaip store put` to OCFL storage roots on the file system, beside a plain copy with fsync
of the same files (the floor: every byte written and made durable once per replica).

Rounds alternate copy and put, each into fresh folders, best of N; one replica, then two (the
copy writes the package twice). Then `store check --deep` of the two-replica store. Prints
wall, CPU and peak RSS of each and the ratio put / copy.

    python3 bench/ocfl_put_bench.py --bin target/ci/webaip --package DIR [--runs 3] [--cores 2]
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time


def copy_with_fsync(src, dests):
    """Every file of `src` into each of `dests`, each file and folder fsynced, as a careful
    copy would do: what any durable put must do at least."""
    for dest in dests:
        for folder, dirs, files in os.walk(src):
            rel = os.path.relpath(folder, src)
            out = os.path.join(dest, rel)
            os.makedirs(out, exist_ok=True)
            for name in files:
                with open(os.path.join(folder, name), "rb") as i, \
                        open(os.path.join(out, name), "wb") as o:
                    shutil.copyfileobj(i, o, 8 << 20)
                    o.flush()
                    os.fsync(o.fileno())
            fd = os.open(out, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)


def timed(fn):
    """Wall seconds, CPU seconds (children included) and peak RSS (children) of `fn`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    fn()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024


def config(dir_, replicas):
    lines = [f'state = "{dir_}/state.sqlite"', "", "[user]", 'name = "bench"',
             'address = "mailto:bench@example.org"']
    for i in range(replicas):
        lines += ["", "[[replica]]", f'name = "r{i}"', 'type = "fs"', 'layout = "ocfl"',
                  f'root = "{dir_}/r{i}"']
    path = os.path.join(dir_, "store.toml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def run(cmd, pin):
    subprocess.run(pin + cmd, check=True, stdout=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--package", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--scratch", default="bench/work")
    a = ap.parse_args()
    pin = ["taskset", "-c", ",".join(str(c) for c in range(a.cores))]
    size = sum(os.path.getsize(os.path.join(d, f))
               for d, _, fs in os.walk(a.package) for f in fs)
    count = sum(len(fs) for _, _, fs in os.walk(a.package))
    print(f"package: {count} files, {size / 1e6:.1f} MB; {a.cores} cores (taskset), "
          f"best of {a.runs}, copy and put in turns")
    rows = {}
    loads = []
    for replicas in (1, 2):
        best = {"copy": None, "put": None}
        for _ in range(a.runs):
            loads.append(os.getloadavg()[0])
            with tempfile.TemporaryDirectory(dir=a.scratch) as t:
                dests = [os.path.join(t, f"c{i}") for i in range(replicas)]
                copy = [sys.executable, __file__, "--copy", a.package] + dests
                m = timed(lambda: run(copy, pin))
                if best["copy"] is None or m[0] < best["copy"][0]:
                    best["copy"] = m
            with tempfile.TemporaryDirectory(dir=a.scratch) as t:
                cfg = config(t, replicas)
                m = timed(lambda: run([a.bin, "store", "--config", cfg, "--quiet", "put",
                                       a.package], pin))
                if best["put"] is None or m[0] < best["put"][0]:
                    best["put"] = m
                if replicas == 2:
                    c = timed(lambda: run([a.bin, "store", "--config", cfg, "--quiet", "check",
                                           "--deep"], pin))
                    if "check" not in best or c[0] < best["check"][0]:
                        best["check"] = c
        rows[replicas] = best
    print(f"{'':34}{'wall s':>8}{'CPU s':>8}{'MB/s':>8}  put speed / copy's")
    for replicas, best in rows.items():
        for what in ("copy", "put", "check"):
            if what not in best:
                continue
            wall, cpu, _ = best[what]
            label = {"copy": f"copy + fsync, {replicas} replica(s)",
                     "put": f"store put (OCFL), {replicas} replica(s)",
                     "check": f"store check --deep, {replicas} replicas"}[what]
            ratio = ""
            if what == "put":
                ratio = f"  {best['copy'][0] / wall * 100:5.0f} %"
            print(f"{label:34}{wall:8.2f}{cpu:8.2f}{size * replicas / 1e6 / wall:8.1f}{ratio}")
    print("load while measuring: " + " ".join(f"{x:.1f}" for x in loads))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--copy":
        copy_with_fsync(sys.argv[2], sys.argv[3:])
    else:
        main()
