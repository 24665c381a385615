#!/usr/bin/env python3
"""Writes a NEDLIB harvest for benchmarks: N pairs of <md5>.meta + <md5> under one day folder,
payloads of random bytes (16-128 KiB, seeded), a fraction of them repeating earlier payloads
byte for byte (the same file served at several URLs, as crawls do).

Usage: gen_nedlib.py OUT N REPEAT_FRACTION
"""
import hashlib
import os
import random
import sys


def main(out, n, repeat):
    rng = random.Random(42)
    day = os.path.join(out, "2003-7-20", "0000")
    os.makedirs(day, exist_ok=True)
    bodies = []
    for i in range(n):
        if bodies and rng.random() < repeat:
            body = rng.choice(bodies)
        else:
            body = rng.randbytes(rng.randint(16 << 10, 128 << 10))
            bodies.append(body)
        url = "http://www.example.no:80/file/%d.bin" % i
        name = hashlib.md5(url.encode()).hexdigest()
        meta = ("HTTP/1.1 200 OK\r\nDate: Sun, 20 Jul 2003 10:00:00 GMT\r\nContent-Type: application/octet-stream\r\n"
                "Content-Length: %d\r\nArc-Url: %s\r\nArc-Length: %d\r\n\r\n" % (len(body), url, len(body)))
        with open(os.path.join(day, name + ".meta"), "w", newline="") as f:
            f.write(meta)
        with open(os.path.join(day, name), "wb") as f:
            f.write(body)
    print("%d pairs, %d distinct payloads, %.1f MB" % (n, len(bodies), sum(len(b) for b in bodies) / 1e6))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
