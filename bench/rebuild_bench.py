"""ARC rebuild data benchmark (issue 31): `webaip migrate` with the rebuild data against
`migrate --no-rebuild-data`, alternating (A B A B) in the same run, on the 200 MB benchmark
ARC; then, when `webaip unmigrate` exists, the rebuild of the stream against `gzip -dc` of the
original and of the .arc.gz against `migrate`. Prints wall and CPU seconds, peak RSS, ratios,
and the bytes the rebuild data adds to the container.

usage: rebuild_bench.py ARC [ROUNDS]
"""
import json, os, resource, shutil, subprocess, sys, tempfile, time

WEBAIP = os.path.abspath('target/release/webaip')


def timed(cmd, stdout=subprocess.DEVNULL):
    """(wall s, cpu s, peak RSS MB) of one run of cmd (a child process of its own)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.Popen(['/usr/bin/time', '-f', '%M', *cmd], stdout=stdout, stderr=subprocess.PIPE)
    _, err = p.communicate()
    wall = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f'{cmd} failed: {err.decode()[-2000:]}')
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rss = int(err.decode().strip().splitlines()[-1]) / 1024
    return wall, cpu, rss


def main():
    arc, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2
    work = tempfile.mkdtemp(prefix='rebuild-bench-')
    rows = {}
    outs = {'with': os.path.join(work, 'with'), 'without': os.path.join(work, 'without')}
    cmds = {
        'with': lambda: [WEBAIP, 'migrate', '-q', '--force', '--deterministic', '--out', outs['with'], arc],
        'without': lambda: [WEBAIP, 'migrate', '-q', '--force', '--deterministic', '--no-rebuild-data', '--out', outs['without'], arc],
    }
    for _ in range(rounds):
        for name in ('with', 'without'):
            r = timed(cmds[name]())
            rows[name] = min(rows.get(name, r), r)
    size = {k: sum(os.path.getsize(os.path.join(v, f)) for f in os.listdir(v)) for k, v in outs.items()}
    unmigrate = shutil.which(WEBAIP) and subprocess.run([WEBAIP, 'unmigrate', '--help'], capture_output=True).returncode == 0
    if unmigrate:
        warc = [os.path.join(outs['with'], f) for f in os.listdir(outs['with'])]
        for _ in range(rounds):
            dest = os.path.join(work, 'stream')
            shutil.rmtree(dest, ignore_errors=True)
            r = timed([WEBAIP, 'unmigrate', '-q', '--stream', '--out', dest, *warc])
            rows['unmigrate --stream'] = min(rows.get('unmigrate --stream', r), r)
            with open(os.devnull, 'wb') as null:
                r = timed(['gzip', '-dc', arc], stdout=null)
            rows['gzip -dc (original)'] = min(rows.get('gzip -dc (original)', r), r)
            dest = os.path.join(work, 'file')
            shutil.rmtree(dest, ignore_errors=True)
            r = timed([WEBAIP, 'unmigrate', '-q', '--out', dest, *warc])
            rows['unmigrate (.arc.gz)'] = min(rows.get('unmigrate (.arc.gz)', r), r)
    base = rows['without'][0]
    print(f"input: {arc} ({os.path.getsize(arc) / 1e6:.1f} MB), best of {rounds}, same run")
    print(f"{'command':28} {'wall s':>7} {'cpu s':>7} {'RSS MB':>7} {'x migrate w/o':>14}")
    for name, (wall, cpu, rss) in rows.items():
        label = {'with': 'migrate (rebuild data)', 'without': 'migrate --no-rebuild-data'}.get(name, name)
        print(f"{label:28} {wall:7.2f} {cpu:7.2f} {rss:7.1f} {wall / base:14.3f}")
    extra = size['with'] - size['without']
    print(f"container: {size['with']:,} bytes with, {size['without']:,} without: "
          f"+{extra:,} bytes ({100 * extra / size['without']:.3f} %)")
    if unmigrate:
        print(f"gzip -dc / unmigrate --stream: {rows['gzip -dc (original)'][0] / rows['unmigrate --stream'][0]:.2f}x; "
              f"unmigrate (.arc.gz) / migrate: {rows['unmigrate (.arc.gz)'][0] / rows['with'][0]:.2f}x")
    shutil.rmtree(work)


main()
