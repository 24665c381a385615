#!/usr/bin/env python3
"""What the benchmark scripts share: timing a command (wall time, peak RSS), the generated crawl
ARC, the payloads of a package as files (for clamdscan), and a fresh clamd of the benchmark's
own (scripts/clamd-local.sh; optionally with clamd's clean cache disabled).

Imported by migrate_bench.py and compare_bench.py. From a shell (run-scan-reuse.sh):

  benchlib.py clamd-restart DIR PORT [--no-cache]   (re)start a clamd in DIR listening on
                                                    DIR/clamd.sock and 127.0.0.1:PORT; prints
                                                    WEBAIP_CLAMD=unix:DIR/clamd.sock
  benchlib.py clamd-stop DIR PORT                   stop it
"""
import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
WORK = os.path.join(HERE, "work")
VENV = os.path.join(REPO, ".venv", "bin")
WEBAIP = os.path.join(REPO, "target", "release", "webaip")
CLAMD_LOCAL = os.path.join(REPO, "scripts", "clamd-local.sh")


def measured(cmd):
    """Runs cmd, its output discarded: (wall s, CPU s, peak RSS MB). Exits naming the command
    if it fails."""
    with tempfile.TemporaryFile() as errf:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            errf.seek(0)
            err = errf.read().decode(errors="replace")
            sys.exit("benchmark command failed: %s\n%s" % (" ".join(cmd), err[-2000:]))
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def run_all(cmds, stdout=None):
    """Runs the commands one after the other; returns (wall seconds of all, the largest peak
    RSS in MB). Exits naming the command when one fails."""
    wall, rss = 0.0, 0.0
    for cmd in cmds:
        # stderr goes to a file, not a pipe: a chatty tool (arc2warc logs every record) would
        # otherwise fill the pipe and block.
        with tempfile.TemporaryFile() as errf:
            start = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=stdout or subprocess.DEVNULL, stderr=errf)
            _, status, usage = os.wait4(proc.pid, 0)
            wall += time.perf_counter() - start
            errf.seek(0)
            err = errf.read().decode(errors="replace")
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit("benchmark command failed: %s\n%s" % (" ".join(cmd), err[-2000:]))
        rss = max(rss, usage.ru_maxrss / 1024.0)
    return wall, rss


def run(cmd, stdout=None):
    """Runs cmd; returns (wall seconds, peak RSS in MB)."""
    return run_all([cmd], stdout=stdout)


def best_of(n, make_cmd, out_path, to_stdout=False, keep=False, before=None):
    """The fastest of n runs of make_cmd() (one command, or a list of commands timed together);
    `before` (untimed) runs ahead of each. Returns (wall, peak RSS, size of out_path)."""
    best = None
    for _ in range(n):
        r = time_once(make_cmd, out_path, to_stdout, keep, before)
        if best is None or r[0] < best[0]:
            best = r
    return best + (os.path.getsize(out_path),)


def time_once(make_cmd, out_path, to_stdout=False, keep=False, before=None):
    """One timed run, as best_of makes them: (wall, peak RSS)."""
    if before:
        before()
    if out_path and not keep and os.path.exists(out_path):
        os.remove(out_path)
    cmd = make_cmd()
    cmds = cmd if isinstance(cmd[0], list) else [cmd]
    if to_stdout:
        with open(out_path, "wb") as f:
            return run_all(cmds, stdout=f)
    return run_all(cmds)


def ensure_arc(size):
    """The generated crawl ARC of the given size (scripts/gen_arc.py bench), made once into
    bench/work/ and reused by every benchmark asking for the same size."""
    os.makedirs(WORK, exist_ok=True)
    arc = os.path.join(WORK, "IAH-20240315103000-00000-bench-%s.arc.gz" % size)
    if not os.path.exists(arc):
        print("generating %s ..." % arc, flush=True)
        subprocess.check_call([sys.executable, os.path.join(REPO, "scripts", "gen_arc.py"), "bench", arc + ".tmp", "--size", size])
        os.rename(arc + ".tmp", arc)
    return arc


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
        "if n == 0:\n"
        "    sys.exit('no payloads found in ' + sys.argv[1])\n"
    )
    subprocess.check_call([os.path.join(VENV, "python"), "-c", code, pkg_dir, dest])


class Clamd:
    """A clamd of the benchmark's own in `directory` (its socket, config, database, log and pid
    file there; loopback TCP `port` for scripts/clamd-local.sh's liveness check), restarted
    before every timed run: clamd caches the MD5 of every file it found clean and skips it when
    it sees it again, so a second run over the same payloads would time cache look-ups, not
    scanning.

    tmp: clamd's TemporaryDirectory (None: clamd-local.sh's default, on disk in `directory`).
    cache=False: clamd.conf gets `DisableCache yes` (clamd-local.sh has no setting for it: its
    config is written, then copied with that line added, and clamd started on the copy)."""

    def __init__(self, directory, port, tmp=None, cache=True):
        self.dir = os.path.abspath(directory)
        self.cache = cache
        self.env = dict(os.environ, WEBAIP_CLAMD_DIR=self.dir, WEBAIP_CLAMD_PORT=str(port))
        self.env.pop("CLAMD_TMP", None)
        if tmp:
            self.env["CLAMD_TMP"] = tmp
        self.sock = os.path.join(self.dir, "clamd.sock")
        # A Unix socket's path is limited to 107 bytes.
        if len(self.sock.encode()) > 107:
            sys.exit("clamd socket path too long for a Unix socket: %s" % self.sock)
        self.addr = "unix:" + self.sock
        self.conf = os.path.join(self.dir, "clamd.conf" if cache else "clamd-nocache.conf")
        self._configured = False

    def _local(self, *args):
        return subprocess.run(["bash", CLAMD_LOCAL, *args], capture_output=True, text=True,
                              check=True, env=self.env).stdout

    def stop(self):
        self._local("stop")

    def restart(self):
        """Stops the daemon if it runs and starts a fresh one; returns its address."""
        self.stop()
        if self.cache:
            self._local("start")
            return self.addr
        if not self._configured:
            # clamd-local.sh installs ClamAV if needed and writes the config and the signature
            # database; its daemon is stopped again and one started on the copy without cache.
            self._local("start")
            self.stop()
            with open(os.path.join(self.dir, "clamd.conf")) as f:
                conf = f.read()
            with open(self.conf, "w") as f:
                f.write(conf + "DisableCache yes\n")
            self._configured = True
        try:
            os.remove(self.sock)
        except FileNotFoundError:
            pass
        subprocess.run(["/usr/sbin/clamd", "--config-file=" + self.conf], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not self._pong():
            if time.monotonic() > deadline:
                sys.exit("no PONG from clamd (%s); see %s/clamd.log" % (self.conf, self.dir))
            time.sleep(0.2)
        return self.addr

    def _pong(self):
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(5)
                s.connect(self.sock)
                s.sendall(b"zPING\0")
                return s.recv(16).rstrip(b"\0") == b"PONG"
        except OSError:
            return False


def main():
    ap = argparse.ArgumentParser(description="clamd for the shell benchmarks")
    ap.add_argument("action", choices=["clamd-restart", "clamd-stop"])
    ap.add_argument("dir")
    ap.add_argument("port", type=int)
    ap.add_argument("--no-cache", action="store_true", help="clamd.conf gets DisableCache yes")
    a = ap.parse_args()
    clamd = Clamd(a.dir, a.port, cache=not a.no_cache)
    if a.action == "clamd-stop":
        clamd.stop()
    else:
        print("WEBAIP_CLAMD=" + clamd.restart())


if __name__ == "__main__":
    main()
