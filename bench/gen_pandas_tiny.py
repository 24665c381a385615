#!/usr/bin/env python3
"""A PANDAS-like HTTrack instance of N tiny pages (about 200 bytes each), every one linking to
three others by relative paths, so every page is rewritten; deterministic. For the shape of
mirror packaging in the page count (bench/run-mirror-scale.sh, tests/package/mirror_scale).

  gen_pandas_tiny.py ROOT N   -> ROOT/999/20240101-1200/www.e.org/d{K}/p{I}.html
"""
import os, sys
root = sys.argv[1]; n = int(sys.argv[2])
host = os.path.join(root, "999", "20240101-1200", "www.e.org")
for i in range(n):
    d = os.path.join(host, f"d{i // 1000}")
    os.makedirs(d, exist_ok=True)
    links = "".join(f'<a href="../d{j // 1000}/p{j}.html">{j}</a>' for j in ((i * 7 + k * 13 + 1) % n for k in range(3)))
    with open(os.path.join(d, f"p{i}.html"), "w") as f:
        f.write(f"<html><head><title>Page {i}</title></head><body>{links}</body></html>\n")
