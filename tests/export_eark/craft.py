#!/usr/bin/env python3
"""Adds hostile entries to an E-ARK ZIP (Python's zipfile writes what the zip crate refuses to).

usage: craft.py IN.zip OUT.zip dup            a second entry of the first data file's name
       craft.py IN.zip OUT.zip dupdir         two entries of the folder ROOT/x/
       craft.py IN.zip OUT.zip filedir        ROOT/x as a file and ROOT/x/y below it
       craft.py IN.zip OUT.zip chains N DEPTH N files, each DEPTH folders deep
       craft.py IN.zip OUT.zip longdup N LEN  N entries of one LEN-byte name
"""
import sys, warnings, zipfile

warnings.simplefilter("ignore")


def main():
    src, dst, kind = sys.argv[1], sys.argv[2], sys.argv[3]
    with zipfile.ZipFile(src) as z:
        members = [(i, z.read(i)) for i in z.infolist()]
    root = members[0][0].filename.split("/")[0]
    with zipfile.ZipFile(dst, "w") as z:
        for info, data in members:
            z.writestr(info, data)
        if kind == "dup":
            info, data = next(m for m in members if "/data/" in m[0].filename)
            z.writestr(info.filename, data + b"other bytes")
        elif kind == "dupdir":
            z.writestr(f"{root}/x/", b"")
            z.writestr(f"{root}/x/", b"")
        elif kind == "filedir":
            z.writestr(f"{root}/x", b"a file")
            z.writestr(f"{root}/x/y", b"below a file")
        elif kind == "chains":
            n, depth = int(sys.argv[4]), int(sys.argv[5])
            for i in range(n):
                z.writestr(f"{root}/c{i}/" + "a/" * depth + "f", b"")
        elif kind == "longdup":
            n, length = int(sys.argv[4]), int(sys.argv[5])
            for _ in range(n):
                z.writestr(f"{root}/" + "d" * length, b"")
        else:
            sys.exit(f"unknown kind {kind}")


if __name__ == "__main__":
    main()
