"""Independent check of the rebuild data (docs/arc-rebuild.md), with warcio and zlib only.

usage: rebuild_check.py ORIGINAL.arc[.gz] CONTAINER.warc.gz [MORE CONTAINERS...]

Rebuilds the ARC's stream from the containers' records (merged by ARC position), computes the
original's stream the way the document defines it (intact gzip members decompressed, other
regions as found), and prints one JSON line: lengths, whether they are equal, the first offset
where they differ, the member boundaries of both, and the CRC checks that failed.
"""
import base64, hashlib, json, re, struct, sys, zlib
from warcio.archiveiterator import ArchiveIterator

RUN = re.compile(r'(n|N|r|s|t|%[0-9A-Fa-f]{2})(\d*)')
UNIT = {'n': b'\n', 'N': b'\r\n', 'r': b'\r', 's': b' ', 't': b'\t'}


def decode(text):
    if text is None or text == '-':
        return b''
    out, pos = [], 0
    for m in RUN.finditer(text):
        assert m.start() == pos, text
        tok, count = m.group(1), int(m.group(2) or 1)
        unit = bytes([int(tok[1:], 16)]) if tok.startswith('%') else UNIT[tok]
        out.append(unit * count)
        pos = m.end()
    assert pos == len(text), text
    return b''.join(out)


def parse_field(value):
    f = {}
    for tok in value.split():
        k, _, v = tok.partition('=')
        f[k] = v
    return f


def original_stream(path):
    """(stream bytes, member boundaries as stream offsets) of the original."""
    data = open(path, 'rb').read()
    if data[:2] != b'\x1f\x8b':
        return data, []
    out, bounds, pos = [], [], 0
    total = 0
    while pos < len(data):
        if data[pos:pos + 2] == b'\x1f\x8b':
            d = zlib.decompressobj(31)
            try:
                chunk = d.decompress(data[pos:])
                ok = d.eof
            except zlib.error:
                ok = False
            if ok:
                bounds.append(total)
                out.append(chunk)
                total += len(chunk)
                pos = len(data) - len(d.unused_data)
                continue
        # Not an intact member: raw bytes up to the next gzip magic.
        nxt = data.find(b'\x1f\x8b\x08', pos + 1)
        nxt = len(data) if nxt < 0 else nxt
        out.append(data[pos:nxt])
        total += nxt - pos
        pos = nxt
    return b''.join(out), bounds


def pieces(containers):
    for c in containers:
        with open(c, 'rb') as f:
            for rec in ArchiveIterator(f, no_record_parse=True, arc2warc=False):
                h = rec.rec_headers
                off = h.get_header('X-Webaip-ARC-Offset')
                if off is None:
                    if (h.get_header('WARC-Target-URI') or '').startswith('metadata://webaip/arc-rebuild'):
                        yield ('summary', rec.raw_stream.read().decode())
                    continue
                field = parse_field(h.get_header('X-Webaip-ARC-Rebuild'))
                block = rec.raw_stream.read()
                yield ('record', off, field, h.get_header('X-Webaip-ARC-Header'), block)


def settings(text):
    """(level, memLevel) of `zlib:6[:mem=9]`, or None for `?`."""
    if not text or text == '?':
        return None
    parts = text.split(':')
    level, mem = int(parts[1]), 8
    for p in parts[2:]:
        if p.startswith('mem='):
            mem = int(p[4:])
    return level, mem


class FileBuilder:
    """The .arc.gz as the rebuild data says to write it: each member compressed again with
    its header and settings, raw regions and record-less members as found."""

    def __init__(self, header, deflate):
        self.header, self.deflate, self.out, self.cur = header, deflate, [], None

    def start(self, header, deflate):
        self.flush()
        self.cur = [header or self.header, settings(deflate) if deflate else settings(self.deflate), []]

    def add(self, data):
        self.cur[2].append(data)

    def flush(self):
        if self.cur is None:
            return
        header, sett, parts = self.cur
        data = b''.join(parts)
        level, mem = sett if sett else (6, 8)
        c = zlib.compressobj(level, zlib.DEFLATED, -15, mem)
        body = c.compress(data) + c.flush()
        self.out.append(header + body + struct.pack('<II', zlib.crc32(data), len(data) & 0xffffffff))
        self.cur = None

    def verbatim(self, data):
        self.flush()
        self.out.append(data)


def orphans(item, out, bounds, total, fb):
    """Adds the record-less members `OFFSET:HEX[:COUNT]` to the stream and the file; returns
    the stream's new length."""
    _, hexbytes, *count = item.split(':')
    member = bytes.fromhex(hexbytes)
    data = zlib.decompress(member, 31)
    for _ in range(int(count[0]) if count else 1):
        bounds.append(total)
        out.append(data)
        total += len(data)
        fb.verbatim(member)
    return total


def key(off, field):
    m, _, n = off.partition('+')
    raw = 'raw' in field
    return (int(m), 1 if raw else 0, 0 if raw or not n else int(n))


def main():
    original, containers = sys.argv[1], sys.argv[2:]
    records, summary = [], None
    for p in pieces(containers):
        if p[0] == 'summary':
            summary = p[1]
        else:
            records.append(p[1:])
    records.sort(key=lambda r: key(r[0], r[1]))
    out, bounds, crc_fail, member, total = [], [], [], None, 0
    gzip = summary is not None and 'compression gzip' in summary
    stated = dict(l.split(' ', 1) for l in (summary or '').splitlines()[1:] if ' ' in l)
    fb = FileBuilder(bytes.fromhex(stated.get('gzip-header', '')), stated.get('deflate'))
    for off, field, header, block in records:
        for item in filter(None, field.get('pre', '').split(',')):
            total = orphans(item, out, bounds, total, fb)
            member = None
        if 'damaged' in field:
            continue
        if 'raw' in field:
            out.append(block)
            total += len(block)
            fb.verbatim(block)
            member = None
            continue
        m = off.partition('+')[0]
        if gzip and m != member:
            bounds.append(total)
            member = m
            fb.start(bytes.fromhex(field['gz']) if 'gz' in field else None, field.get('z'))
        lead = decode(field.get('lead'))
        eol = decode(field['eol']) if 'eol' in field else b'\n'
        tail = decode(field['tail']) if 'tail' in field else b'\n'
        line = b''
        if header is not None:
            line = base64.b64decode(header[7:]) if header.startswith('base64:') else header.encode()
            line += eol
        if zlib.crc32(lead + line + tail) != int(field['crc'], 16):
            crc_fail.append(off)
        piece = lead + line + block + tail
        if gzip:
            fb.add(piece)
        out.append(piece)
        total += len(piece)
    for line in (summary or '').splitlines():
        if line.startswith('post '):
            total = orphans(line[5:], out, bounds, total, fb)
    fb.flush()
    rebuilt = b''.join(out)
    original_file = open(original, 'rb').read()
    file_identical = (b''.join(fb.out) == original_file) if gzip else (rebuilt == original_file)
    orig, orig_bounds = original_stream(original)
    first = next((i for i, (a, b) in enumerate(zip(rebuilt, orig)) if a != b), None)
    if first is None and len(rebuilt) != len(orig):
        first = min(len(rebuilt), len(orig))
    print(json.dumps({
        'file_identical': file_identical, 'deflate': stated.get('deflate'),
        'original_length': len(orig), 'rebuilt_length': len(rebuilt),
        'equal': rebuilt == orig, 'first_difference': first,
        'bounds_equal': (bounds == orig_bounds) if gzip else None,
        'members': len(orig_bounds), 'crc_failures': crc_fail[:10],
        'stated_stream_sha512_ok': stated.get('stream-sha512') == hashlib.sha512(orig).hexdigest(),
        'stated_file_sha512_ok': stated.get('file-sha512') == hashlib.sha512(open(original, 'rb').read()).hexdigest(),
        'rebuildable': stated.get('rebuildable'),
    }))


main()
