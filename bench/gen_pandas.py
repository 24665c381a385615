#!/usr/bin/env python3
"""A PANDAS-like HTTrack instance for benchmarks: N pages (about 10 kB each) linking to each other,
N/10 stylesheets pointing at images, N/5 images of 20 kB (random bytes), deterministic.

  gen_pandas.py ROOT N   -> ROOT/999/20240101-1200/www.e.org/...
"""
import os, sys, random
root = sys.argv[1]; n = int(sys.argv[2])
random.seed(7)
host = os.path.join(root, "999", "20240101-1200", "www.e.org")
os.makedirs(os.path.join(host, "css"), exist_ok=True)
os.makedirs(os.path.join(host, "img"), exist_ok=True)
for i in range(n // 10):
    with open(os.path.join(host, "css", f"s{i}.css"), "w") as f:
        f.write("".join(f".c{j}{{background:url(../img/i{(i*7+j)%(n//5)}.png)}}\n" for j in range(40)))
for i in range(n // 5):
    with open(os.path.join(host, "img", f"i{i}.png"), "wb") as f:
        f.write(bytes(random.getrandbits(8) for _ in range(20000)))
for i in range(n):
    links = "".join(f'<a href="p{random.randrange(n)}.html">link {k}</a>\n' for k in range(30))
    body = "<p>" + "text " * 2000 + "</p>"
    with open(os.path.join(host, f"p{i}.html"), "w") as f:
        f.write(f'<html><head><title>Page {i}</title><link rel="stylesheet" href="css/s{i % (n//10)}.css"></head><body>{links}<img src="img/i{i % (n//5)}.png">{body}</body></html>')
