#!/usr/bin/env python3
"""The floor of reading a WARC of one gzip member per record, at this machine's primitive rates:
each rate measured here, on one core, in this process (run it under `taskset -c 0`).

- inflate: every member of the file inflated whole by libdeflate (the system's libdeflate.so,
  through ctypes), best of 3: the time itself, not a rate, since it depends on the data;
- SHA-512 and SHA-1: OpenSSL's (Python's hashlib) over a 64 MiB buffer, best of 3;
- read: the file read from the page cache.

Times are CPU seconds of this process (on a shared machine another process on the core does
not count against a primitive).

With `--audit METS`, also the work of `webaip audit --deep` on the package of that METS: the
container read and hashed (SHA-512), every member inflated, every record's WARC block and
payload digests (SHA-1) and every listed bytestream (SHA-512, the SIZEs the METS states).
Prints one `key value` line per figure (seconds of one core), for the shell scripts:

  member_floor.py WARC [--audit METS]

run-index.sh and run-audit.sh use it; the floor on N cores is the sum divided by N.
"""
import argparse
import ctypes
import hashlib
import re
import sys
import time

MAX_MEMBER = 64 << 20


def best(n, fn):
    """The least CPU time of n runs of fn (CPU time: another process on the core, on a shared
    machine, does not count against the primitive)."""
    t = None
    for _ in range(n):
        s = time.process_time()
        fn()
        e = time.process_time() - s
        t = e if t is None or e < t else t
    return t


def hash_rate(name):
    """Bytes per second of hashlib's `name` over a 64 MiB buffer, best of 3."""
    buf = bytes(range(256)) * (256 << 10)
    return len(buf) / best(3, lambda: hashlib.new(name, buf).digest())


class Libdeflate:
    def __init__(self):
        lib = ctypes.CDLL("libdeflate.so.0")
        lib.libdeflate_alloc_decompressor.restype = ctypes.c_void_p
        size_p = ctypes.POINTER(ctypes.c_size_t)
        lib.libdeflate_gzip_decompress_ex.argtypes = [
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
            ctypes.c_size_t, size_p, size_p]
        self.lib = lib
        self.d = lib.libdeflate_alloc_decompressor()
        self.out = ctypes.create_string_buffer(MAX_MEMBER)

    def members(self, data, keep=None):
        """Inflates every member of `data` (a ctypes buffer); hands each inflated member's bytes
        to `keep` when given. Returns the bytes inflated."""
        used, made = ctypes.c_size_t(), ctypes.c_size_t()
        base, at, total = ctypes.addressof(data), 0, 0
        while at < len(data):
            r = self.lib.libdeflate_gzip_decompress_ex(
                self.d, base + at, len(data) - at, self.out, MAX_MEMBER,
                ctypes.byref(used), ctypes.byref(made))
            if r != 0:
                sys.exit("member_floor.py: the member at %d does not inflate (%d)" % (at, r))
            if keep:
                keep(ctypes.string_at(self.out, made.value))
            at += used.value
            total += made.value
        return total


def digest_bytes(member):
    """(block bytes hashed, payload bytes hashed) of the record in `member`, as audit --deep
    hashes them: SHA-1 of the block when a WARC-Block-Digest is stated, of the payload (after
    an HTTP header section) when a WARC-Payload-Digest is, but for a revisit."""
    head_end = member.find(b"\r\n\r\n")
    head = member[:head_end].decode("latin-1").lower()
    block = len(member) - head_end - 4 - 4
    m = re.search(r"^content-length:\s*(\d+)", head, re.M)
    if m:
        block = int(m.group(1))
    hashed_block = block if "\nwarc-block-digest:" in head else 0
    payload = 0
    if "\nwarc-payload-digest:" in head and "\nwarc-type: revisit" not in head:
        payload = block
        uri = re.search(r"^warc-target-uri:\s*<?(\S+)", head, re.M)
        if uri and uri.group(1).startswith(("http:", "https:")):
            http_end = member.find(b"\r\n\r\n", head_end + 4)
            if http_end >= 0:
                payload = block - (http_end + 4 - (head_end + 4))
    return hashed_block, payload


def bytestream_bytes(mets):
    """Sum of the SIZEs of the ranges inside records the METS lists with a SHA-512 (a
    `<mets:file>` with BEGIN and CHECKSUM nested in a record's)."""
    text = open(mets, encoding="utf-8", errors="replace").read()
    total = 0
    for m in re.finditer(r"<(?:mets:)?file\b[^>]*/>", text):
        tag = m.group(0)
        size = re.search(r'\bSIZE="(\d+)"', tag)
        if size and " BEGIN=" in tag and 'CHECKSUMTYPE="SHA-512"' in tag:
            total += int(size.group(1))
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("warc")
    ap.add_argument("--audit", metavar="METS")
    a = ap.parse_args()
    raw = open(a.warc, "rb").read()
    size = len(raw)
    data = (ctypes.c_char * size).from_buffer_copy(raw)
    inflater = Libdeflate()
    inflated = inflater.members(data)
    inflate_s = best(3, lambda: inflater.members(data))
    read_s = best(3, lambda: open(a.warc, "rb").read())
    sha512, sha1 = hash_rate("sha512"), hash_rate("sha1")
    print("file_mb %.1f" % (size / 1e6))
    print("inflated_mb %.1f" % (inflated / 1e6))
    print("inflate_mb_s %.0f" % (inflated / inflate_s / 1e6))
    print("sha512_mb_s %.0f" % (sha512 / 1e6))
    print("sha1_mb_s %.0f" % (sha1 / 1e6))
    print("read_s %.3f" % read_s)
    print("inflate_s %.3f" % inflate_s)
    if a.audit:
        sums = [0, 0]

        def count(member):
            b, p = digest_bytes(member)
            sums[0] += b
            sums[1] += p

        inflater.members(data, keep=count)
        streams = bytestream_bytes(a.audit)
        sha512_s = (size + streams) / sha512
        sha1_s = (sums[0] + sums[1]) / sha1
        print("sha1_mb %.1f" % ((sums[0] + sums[1]) / 1e6))
        print("bytestream_mb %.1f" % (streams / 1e6))
        print("audit_s %.3f" % (read_s + inflate_s + sha512_s + sha1_s))


if __name__ == "__main__":
    main()
