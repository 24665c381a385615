#!/usr/bin/env python3
"""`webaip identify --csv` beside siegfried (pygfried, in process, or `sf` when installed) on
the same files: agreement, speed per CPU-second, and webaip's peak memory.

  identify_bench.py [--webaip BIN] [--jobs N] [--repeat N] [--payloads-of ARCHIVE...]
                    [--siegfried-path DIR] [--keep DIR] INPUT...

--siegfried-path puts DIR first on siegfried's Python path: a pygfried installed there with
`pip install --target DIR` (bench/run-identify-compare.sh installs the one whose signature files
are webaip's). The signature files siegfried used are printed beside its version.

INPUT is a folder (every regular file below it) or a ZIP file (a mirror's .zip: unpacked
first). --payloads-of adds the payload of every record of the given WARC/ARC files, extracted
with warcio as tests/oracle/siegfried_payloads.py extracts them (one file each, no extension).

The files are gathered into one work folder as hard links (copies across file systems), with
WARC, ARC and WACZ files left out: `webaip identify` reads inside them and siegfried without
-z does not, so both identify exactly the same files, one item each.

Prints:
  (a) agreement: on every file where siegfried gives exactly one PUID on a byte or container
      match, the share where webaip gives that same single PUID; every disagreement listed
      (file, siegfried's PUID and basis, webaip's PUIDs and bases), and how many of them are
      files where webaip gives several PUIDs, siegfried's among them (DROID reports every
      format its priorities leave; siegfried the one it found first);
  (b) speed: files per CPU-second of each (user + system time: getrusage of the webaip child;
      of the siegfried child around its identification only, signature loading left out) and
      the ratio; webaip's figure is also given net of its start-up (a run on one file: the
      signature file compiled), which siegfried's leaves out;
  (c) webaip's peak RSS.
Each tool runs --repeat times (default 3); the least CPU time of each is taken.
"""
import argparse
import contextlib
import csv
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
ARCHIVE_ENDINGS = (".warc", ".warc.gz", ".arc", ".arc.gz", ".wacz", ".warc.gz.open")

# Run in a child: siegfried's CPU time around identification only (loading left out).
SIEGFRIED_CHILD = r"""
import json, resource, shutil, subprocess, sys
paths = [l.rstrip("\n") for l in open(sys.argv[1], encoding="utf-8")]
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime
sf = shutil.which("sf")
if sf:
    start = cpu()
    out = subprocess.run([sf, "-json", "-multi", "1", sys.argv[2]], capture_output=True, check=True)
    files, tool, seconds = json.loads(out.stdout)["files"], "sf", cpu() - start
else:
    import pygfried
    pygfried.identify(paths[0])  # loads the signatures
    start = cpu()
    result = pygfried.identify_many(paths, workers=1)
    seconds = cpu() - start
    files = result["files"]
    signatures = "; ".join(i["details"] for i in result.get("identifiers", []))
    tool = "pygfried %s (%s)" % (pygfried.version(), signatures)
print(json.dumps({"tool": tool, "cpu": seconds, "files": files}))
"""


def is_archive(name):
    return name.lower().endswith(ARCHIVE_ENDINGS)


def place(src, dst):
    """A hard link of src at dst, else a copy."""
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def gather(inputs, payloads_of, work):
    """The files to identify, linked or copied under work/files; returns (their paths, the
    archives left out)."""
    root = os.path.join(work, "files")
    left_out = []
    for n, given in enumerate(inputs):
        into = os.path.join(root, "%02d-%s" % (n, os.path.basename(given.rstrip("/"))))
        if zipfile.is_zipfile(given) and not os.path.isdir(given):
            with zipfile.ZipFile(given) as z:
                for m in z.infolist():
                    if not m.is_dir() and ".." not in m.filename.split("/"):
                        z.extract(m, into)
            given = into
            into = into + "-files"
        for d, _, names in os.walk(given):
            for name in names:
                src = os.path.join(d, name)
                if os.path.islink(src) or not os.path.isfile(src):
                    continue
                if is_archive(name):
                    left_out.append(src)
                    continue
                place(src, os.path.join(into, os.path.relpath(src, given)))
    if payloads_of:
        sys.path.insert(0, os.path.join(REPO, "tests", "oracle"))
        import siegfried_payloads  # the extraction the identification tests use

        out = os.path.join(root, "payloads")
        os.makedirs(out, exist_ok=True)
        with contextlib.redirect_stderr(io.StringIO()):  # warcio's warnings on odd records
            siegfried_payloads.extract(out, payloads_of)
    files = []
    for d, _, names in os.walk(root):
        files.extend(os.path.join(d, n) for n in names)
    return sorted(files), left_out


def run_webaip(binary, jobs, args, csv_path):
    """Runs `webaip identify --csv`; returns (CPU seconds, peak RSS in MB)."""
    cmd = [binary, "identify", "--csv", "-q", "-j", str(jobs), "-o", csv_path] + args
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit("webaip identify failed (%d): %s" % (code, proc.stderr.read().decode()[-2000:]))
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def webaip_rows(csv_path):
    """webaip's matches by file name: [(id, basis)]."""
    by_name = {}
    with open(csv_path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["id"]:
                by_name.setdefault(row["filename"], []).append((row["id"], row["basis"]))
    return by_name


def run_siegfried(files, work, path):
    """siegfried's results, its tool and its CPU seconds of identification; `path`: a folder
    put first on its Python path (or None)."""
    listing = os.path.join(work, "files.txt")
    with open(listing, "w", encoding="utf-8") as f:
        f.write("\n".join(files) + "\n")
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [path, env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-c", SIEGFRIED_CHILD, listing, os.path.join(work, "files")],
        capture_output=True,
        check=True,
        env=env,
    )
    return json.loads(out.stdout)


def by_signature(match):
    basis = match.get("basis", "")
    return "byte match" in basis or "container" in basis


def agreement(sf_files, ours):
    """(compared, agreed, disagreements)."""
    compared, agreed, differ = 0, 0, []
    for f in sf_files:
        matches = f["matches"]
        if len(matches) != 1 or matches[0]["id"] == "UNKNOWN" or not by_signature(matches[0]):
            continue
        compared += 1
        mine = ours.get(f["filename"], [])
        if [m[0] for m in mine] == [matches[0]["id"]]:
            agreed += 1
        else:
            differ.append((f["filename"], matches[0]["id"], matches[0]["basis"], mine))
    return compared, agreed, differ


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("inputs", nargs="*", help="folders or ZIP files")
    ap.add_argument("--webaip", default=os.path.join(REPO, "target", "release", "webaip"))
    ap.add_argument("--jobs", type=int, default=1, help="webaip's -j (1: per-core figures)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the fastest counts")
    ap.add_argument("--payloads-of", nargs="+", default=[], metavar="ARCHIVE")
    ap.add_argument("--keep", help="work folder to keep (default: a temporary one)")
    ap.add_argument("--siegfried-path", help="a folder with pygfried, first on its Python path")
    a = ap.parse_args()
    if not a.inputs and not a.payloads_of:
        ap.error("give folders, ZIP files or --payloads-of ARCHIVE...")
    work = a.keep or tempfile.mkdtemp(prefix="identify-bench-", dir=os.path.join(HERE, "work"))
    os.makedirs(work, exist_ok=True)
    try:
        report(a, work)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


def report(a, work):
    files, left_out = gather(a.inputs, a.payloads_of, work)
    if not files:
        sys.exit("no files to identify")
    total = sum(os.path.getsize(f) for f in files)
    print("files: %d (%.1f MB); left out %d WARC/ARC/WACZ file(s)" % (len(files), total / 1e6, len(left_out)))
    ours_csv = os.path.join(work, "webaip.csv")
    runs = [run_webaip(a.webaip, a.jobs, [os.path.join(work, "files")], ours_csv) for _ in range(a.repeat)]
    cpu, rss = min(r[0] for r in runs), max(r[1] for r in runs)
    start_cpu = min(run_webaip(a.webaip, 1, [files[0]], os.path.join(work, "one.csv"))[0] for _ in range(a.repeat))
    ours = webaip_rows(ours_csv)
    sf = min((run_siegfried(files, work, a.siegfried_path) for _ in range(a.repeat)),
             key=lambda r: r["cpu"])

    compared, agreed, differ = agreement(sf["files"], ours)
    print("(a) agreement where %s gives one PUID by a byte or container match: %d of %d (%.2f %%)"
          % (sf["tool"], agreed, compared, 100.0 * agreed / max(compared, 1)))
    for name, theirs, basis, mine in differ:
        shown = "; ".join("%s (%s)" % m for m in mine) or "nothing"
        print("    %s: siegfried %s (%s), webaip %s" % (os.path.relpath(name, work), theirs, basis, shown))
    among = sum(1 for _, theirs, _, mine in differ if len(mine) > 1 and theirs in [m[0] for m in mine])
    print("    of the %d disagreements, %d are several PUIDs from webaip with siegfried's among them; "
          "counted as agreement: %d of %d (%.2f %%)"
          % (len(differ), among, agreed + among, compared, 100.0 * (agreed + among) / max(compared, 1)))
    net = max(cpu - start_cpu, 1e-9)
    ours_rate, ours_net, theirs_rate = len(files) / max(cpu, 1e-9), len(files) / net, len(files) / max(sf["cpu"], 1e-9)
    print("(b) speed, files per CPU-second: webaip %.0f (%.0f net of its %.2f s start-up), %s %.0f; "
          "ratio %.2f (%.2f net)" % (ours_rate, ours_net, start_cpu, sf["tool"], theirs_rate,
                                     ours_rate / theirs_rate, ours_net / theirs_rate))
    print("(c) webaip peak RSS: %.0f MB (-j %d)" % (rss, a.jobs))
    print("    CPU seconds: webaip %.2f, siegfried %.2f" % (cpu, sf["cpu"]))


if __name__ == "__main__":
    main()
