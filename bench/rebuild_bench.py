"""ARC rebuild data benchmark (issue 31): `webaip migrate` with the rebuild data against
`migrate --no-rebuild-data`, alternating (A B A B) in the same run on the 200 MB benchmark ARC
(the median of the pairs' ratios); then the rebuild of the stream against `gzip -dc` of the
original and of the .arc.gz against `migrate`; then the bytes the rebuild data adds, on that ARC
and on each ARC of the test corpus. Prints wall and CPU seconds, peak RSS and ratios.

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


def corpus_bytes(work):
    """The bytes the rebuild data adds on each ARC of the test corpus: the container's growth
    (migrate with against without), and beside the whole package (`package` of the ARC alone;
    its METS also states the two digests in the migration event, counted here too)."""
    import glob, re
    corpus = os.path.abspath(os.path.join('..', 'shared', 'corpus', 'arc'))
    arcs = sorted(glob.glob(os.path.join(corpus, '*.arc')) + glob.glob(os.path.join(corpus, '*.arc.gz')))
    note = re.compile(rb'; ARC file SHA-512 [0-9a-f]{128} \(\d+ bytes\); ARC stream SHA-512 [0-9a-f]{128} '
                      rb'\(\d+ bytes\); [^<]*')
    tot = {'with': 0, 'without': 0, 'package': 0, 'mets_note': 0, 'arcs': 0}
    for arc in arcs:
        d = {k: os.path.join(work, 'corpus', k, os.path.basename(arc)) for k in ('with', 'without', 'package')}
        base = [WEBAIP, 'migrate', '-q', '--deterministic', '--out']
        if subprocess.run(base + [d['with'], arc], capture_output=True).returncode != 0:
            continue  # not an ARC migrate takes (its verdict, tested elsewhere)
        subprocess.run(base[:3] + ['--deterministic', '--no-rebuild-data', '--out', d['without'], arc],
                       check=True, capture_output=True)
        subprocess.run([WEBAIP, 'package', '-q', '--no-virus-check', '--deterministic', '--out',
                        d['package'], arc], check=True, capture_output=True)
        for k in ('with', 'without', 'package'):
            tot[k] += sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d[k]) for f in fs)
        mets = open(os.path.join(d['package'], 'METS.xml'), 'rb').read()
        tot['mets_note'] += sum(len(m.group(0)) for m in note.finditer(mets))
        tot['arcs'] += 1
    extra = tot['with'] - tot['without']
    print(f"corpus: {tot['arcs']} ARCs; containers {tot['with']:,} bytes with the rebuild data, "
          f"{tot['without']:,} without: +{extra:,} bytes ({100 * extra / tot['without']:.3f} %); "
          f"packages {tot['package']:,} bytes, of which rebuild data {extra + tot['mets_note']:,} "
          f"({100 * (extra + tot['mets_note']) / tot['package']:.3f} %; {tot['mets_note']:,} of it the "
          f"METS's digest statements)")


def main():
    arc, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2
    work = tempfile.mkdtemp(prefix='rebuild-bench-')
    rows = {}
    outs = {'with': os.path.join(work, 'with'), 'without': os.path.join(work, 'without')}
    cmds = {
        'with': lambda: [WEBAIP, 'migrate', '-q', '--force', '--deterministic', '--out', outs['with'], arc],
        'without': lambda: [WEBAIP, 'migrate', '-q', '--force', '--deterministic', '--no-rebuild-data', '--out', outs['without'], arc],
    }
    pairs = []
    for _ in range(rounds):
        pair = {}
        for name in ('with', 'without'):
            r = timed(cmds[name]())
            rows[name] = min(rows.get(name, r), r)
            pair[name] = r
        pairs.append((pair['with'][0] / pair['without'][0], pair['with'][1] / pair['without'][1]))
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
    # The machine's speed drifts: each round's pair gives a ratio; their median is the figure.
    walls, cpus = sorted(p[0] for p in pairs), sorted(p[1] for p in pairs)
    print(f"migrate with / without, median of {rounds} pairs: wall {walls[len(walls) // 2]:.3f}x "
          f"(from {walls[0]:.3f} to {walls[-1]:.3f}), CPU {cpus[len(cpus) // 2]:.3f}x")
    extra = size['with'] - size['without']
    print(f"container: {size['with']:,} bytes with, {size['without']:,} without: "
          f"+{extra:,} bytes ({100 * extra / size['without']:.3f} %)")
    if unmigrate:
        print(f"gzip -dc / unmigrate --stream: {rows['gzip -dc (original)'][0] / rows['unmigrate --stream'][0]:.2f}x; "
              f"unmigrate (.arc.gz) / migrate: {rows['unmigrate (.arc.gz)'][0] / rows['with'][0]:.2f}x")
    corpus_bytes(work)
    shutil.rmtree(work)


main()
