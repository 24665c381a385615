#!/usr/bin/env python3
"""A simulated OCFL store, for `store check` at scale: N objects of K small content files
each, one version, in an OCFL 1.1 storage root `disk` laid out as webaip lays it out
(0003-hash-and-id-n-tuple-storage-layout, SHA-256, three tuples of three), and the records a
put would have left in the state database (each head inventory built and committed). Nothing
here runs webaip; the objects are valid OCFL objects (ocfl-py validates them) holding no AIP,
which is all `store check` reads.

usage: gen_store_ocfl.py OUT --objects N [--files K] [--size BYTES]
Writes OUT/store.toml, OUT/state.sqlite and OUT/disk/. Prints one JSON line of what it made.
"""

import hashlib
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_store import content, store_arguments  # noqa: E402

EXTENSION = "0003-hash-and-id-n-tuple-storage-layout"
CREATED = "2026-01-01T00:00:00Z"

# The OCFL rows of the state database as src/store/state.rs makes them (webaip adds the rest
# of its schema when it opens the database).
SCHEMA = """
CREATE TABLE IF NOT EXISTS ocfl_head (identifier TEXT NOT NULL, replica TEXT NOT NULL,
    head TEXT NOT NULL, inventory_sha512 TEXT NOT NULL, recorded_at TEXT NOT NULL,
    PRIMARY KEY (identifier, replica));
CREATE TABLE IF NOT EXISTS ocfl_inventory (identifier TEXT NOT NULL,
    inventory_sha512 TEXT NOT NULL, head TEXT NOT NULL, recorded_at TEXT NOT NULL,
    PRIMARY KEY (identifier, inventory_sha512));
CREATE TABLE IF NOT EXISTS ocfl_kept_recorded (identifier TEXT PRIMARY KEY,
    object TEXT NOT NULL, head TEXT NOT NULL);
"""


def object_path(identifier):
    """As src/store/ocfl/layout.rs `object_path`."""
    digest = hashlib.sha256(identifier.encode()).hexdigest()
    encoded = "".join(chr(b) if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "-_")
                      else "%%%02x" % b for b in identifier.encode())
    if len(encoded) > 100:
        encoded = encoded[:100] + "-" + digest
    return "/".join([digest[0:3], digest[3:6], digest[6:9], encoded])


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def json_bytes(value):
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()


def root(disk):
    write(os.path.join(disk, "0=ocfl_1.1"), b"ocfl_1.1\n")
    write(os.path.join(disk, "ocfl_layout.json"), json_bytes({
        "extension": EXTENSION,
        "description": "Hashed Truncated N-tuple Trees with Object ID Encapsulating Directory "
                       "for OCFL Storage Hierarchies"}))
    write(os.path.join(disk, "extensions", EXTENSION, "config.json"), json_bytes({
        "extensionName": EXTENSION, "digestAlgorithm": "sha256", "tupleSize": 3,
        "numberOfTuples": 3}))


def one_object(disk, identifier, files, size):
    """Writes the object; returns its inventory's SHA-512 and the content bytes written."""
    obj = os.path.join(disk, object_path(identifier))
    manifest, state, made = {}, {}, 0
    for i in range(files):
        body = content(identifier, i, size)
        name = "f%d.bin" % i
        write(os.path.join(obj, "v1", "content", name), body)
        digest = hashlib.sha512(body).hexdigest()
        manifest.setdefault(digest, []).append("v1/content/" + name)
        state.setdefault(digest, []).append(name)
        made += len(body)
    inventory = json_bytes({
        "id": identifier, "type": "https://ocfl.io/1.1/spec/#inventory",
        "digestAlgorithm": "sha512", "head": "v1", "contentDirectory": "content",
        "manifest": manifest,
        "versions": {"v1": {"created": CREATED, "message": "bench", "state": state,
                            "user": {"name": "bench", "address": "mailto:bench@example.org"}}}})
    sha = hashlib.sha512(inventory).hexdigest()
    sidecar = ("%s inventory.json\n" % sha).encode()
    write(os.path.join(obj, "0=ocfl_object_1.1"), b"ocfl_object_1.1\n")
    for where in (obj, os.path.join(obj, "v1")):
        write(os.path.join(where, "inventory.json"), inventory)
        write(os.path.join(where, "inventory.json.sha512"), sidecar)
    return sha, made


def main():
    a = store_arguments().parse_args()
    os.makedirs(a.out, exist_ok=True)
    disk = os.path.join(a.out, "disk")
    db_path = os.path.join(a.out, "state.sqlite")
    if os.path.exists(db_path):
        sys.exit(f"{db_path} exists: give a new OUT")
    root(disk)
    db = sqlite3.connect(db_path)
    db.executescript(SCHEMA)
    made = 0
    for n in range(a.objects):
        identifier = "urn:x-webaip-bench:obj-%07d" % n
        sha, size = one_object(disk, identifier, a.files, a.size)
        made += size
        db.execute("INSERT INTO ocfl_inventory VALUES (?, ?, 'v1', ?)", (identifier, sha, CREATED))
        db.execute("INSERT INTO ocfl_head VALUES (?, 'disk', 'v1', ?, ?)",
                   (identifier, sha, CREATED))
        db.execute("INSERT INTO ocfl_kept_recorded VALUES (?, ?, 'v1')", (identifier, identifier))
    db.commit()
    db.close()
    with open(os.path.join(a.out, "store.toml"), "w") as f:
        f.write('state = "%s"\n\n[user]\nname = "bench"\naddress = "mailto:bench@example.org"\n\n'
                '[[replica]]\nname = "disk"\ntype = "fs"\nlayout = "ocfl"\nroot = "%s"\n'
                % (os.path.abspath(db_path), os.path.abspath(disk)))
    files = a.objects * (a.files + 5)
    print(json.dumps({"objects": a.objects, "files": files, "bytes": made}))


if __name__ == "__main__":
    main()
