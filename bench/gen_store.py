#!/usr/bin/env python3
"""A simulated store of the webaip layout, for `store check` at scale: N packages of K small
files each on one file system replica `disk`, and the state database a put would have left
(the schema before check runs were kept: `store check` migrates it in place). Nothing here
runs webaip; the packages are not valid AIPs, only what `store check` compares.

usage: gen_store.py OUT --objects N [--files K] [--size BYTES]
Writes OUT/store.toml, OUT/state.sqlite and OUT/disk/. Prints one JSON line of what it made.
"""

import argparse
import hashlib
import json
import os
import sqlite3
import sys

# The state database as `store put` wrote it before check runs were kept (src/store/state.rs).
OLD_SCHEMA = """
CREATE TABLE package (id INTEGER PRIMARY KEY, identifier TEXT NOT NULL UNIQUE,
    dir TEXT NOT NULL, accepted_at TEXT);
CREATE TABLE file (id INTEGER PRIMARY KEY, package_id INTEGER NOT NULL REFERENCES package(id),
    path TEXT NOT NULL, size INTEGER NOT NULL, sha512 TEXT NOT NULL, UNIQUE (package_id, path));
CREATE TABLE replica (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE replicafileinfo (file_id INTEGER NOT NULL REFERENCES file(id),
    replica_id INTEGER NOT NULL REFERENCES replica(id), upload_status TEXT NOT NULL,
    filelist_status TEXT NOT NULL, checksum_status TEXT NOT NULL, checked_at TEXT,
    message TEXT, PRIMARY KEY (file_id, replica_id));
"""


def safe_name(identifier):
    out = []
    for b in identifier.encode():
        c = chr(b)
        if c.isascii() and (c.isalnum() or c in ".-"):
            out.append(c)
        else:
            out.append("_%02X" % b)
    s = "".join(out)
    return "_2E" + s[1:] if s.startswith(".") else s


def package_dir(identifier):
    """As src/store/config.rs `package_dir`: the SHA-256's first byte, then the safe name."""
    return "%02x/%s" % (hashlib.sha256(identifier.encode()).digest()[0], safe_name(identifier))


def content(identifier, i, size):
    seed = ("%s/%d\n" % (identifier, i)).encode()
    return (seed * (size // len(seed) + 1))[:size]


def store_arguments():
    """The arguments of a simulated store (this one's and gen_store_ocfl.py's)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--objects", type=int, required=True)
    ap.add_argument("--files", type=int, default=2)
    ap.add_argument("--size", type=int, default=512)
    return ap


def main():
    ap = store_arguments()
    ap.add_argument("--checked-at", default="2026-01-01T00:00:00+00:00",
                    help="the copies' last check, as a put records it")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    disk = os.path.join(a.out, "disk")
    db_path = os.path.join(a.out, "state.sqlite")
    if os.path.exists(db_path):
        sys.exit(f"{db_path} exists: give a new OUT")
    db = sqlite3.connect(db_path)
    db.executescript(OLD_SCHEMA)
    db.execute("INSERT INTO replica (id, name) VALUES (1, 'disk')")
    made = 0
    for n in range(a.objects):
        identifier = "pkg-%07d" % n
        d = package_dir(identifier)
        cur = db.execute("INSERT INTO package (identifier, dir, accepted_at) VALUES (?, ?, ?)",
                         (identifier, d, a.checked_at))
        pid = cur.lastrowid
        os.makedirs(os.path.join(disk, d), exist_ok=True)
        for i in range(a.files):
            body = content(identifier, i, a.size)
            path = "f%d.bin" % i
            with open(os.path.join(disk, d, path), "wb") as f:
                f.write(body)
            made += len(body)
            cur = db.execute("INSERT INTO file (package_id, path, size, sha512) VALUES (?, ?, ?, ?)",
                             (pid, path, len(body), hashlib.sha512(body).hexdigest()))
            db.execute("INSERT INTO replicafileinfo VALUES (?, 1, 'uploaded', 'ok', 'ok', ?, NULL)",
                       (cur.lastrowid, a.checked_at))
    db.commit()
    db.close()
    with open(os.path.join(a.out, "store.toml"), "w") as f:
        f.write('state = "%s"\n\n[[replica]]\nname = "disk"\ntype = "fs"\nroot = "%s"\n'
                % (os.path.abspath(db_path), os.path.abspath(disk)))
    print(json.dumps({"objects": a.objects, "files": a.objects * a.files, "bytes": made}))


if __name__ == "__main__":
    main()
