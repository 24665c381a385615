#!/usr/bin/env python3
"""Turns an E-ARK ZIP into a zip bomb, written with Python's zipfile and patched by hand.

usage: bomb.py IN.zip OUT.zip overlap N MB   N members, each MB MiB of zeros, all of them
                                             pointing at the same compressed data (the
                                             central directory repeats one entry)
       bomb.py IN.zip OUT.zip liar MB        one member of MB MiB of zeros whose central
                                             directory and local header declare 1,000 bytes
"""
import struct, sys, zipfile


def main():
    src, dst, kind = sys.argv[1], sys.argv[2], sys.argv[3]
    with zipfile.ZipFile(src) as z:
        members = [(i, z.read(i)) for i in z.infolist()]
    root = members[0][0].filename.split("/")[0]
    mb = int(sys.argv[-1])
    with zipfile.ZipFile(dst, "w") as z:
        for info, data in members:
            z.writestr(info, data)
        z.writestr(f"{root}/zeros-000.bin", b"\0" * (mb << 20), compress_type=zipfile.ZIP_DEFLATED)
    data = bytearray(open(dst, "rb").read())
    eocd = data.rindex(b"PK\x05\x06")
    count, cd_size, cd_off = struct.unpack("<HII", data[eocd + 10:eocd + 20])
    cd = data[cd_off:cd_off + cd_size]
    last = cd.rindex(b"PK\x01\x02")
    entry = cd[last:]
    if kind == "overlap":
        n = int(sys.argv[4])
        name = f"{root}/zeros-000.bin".encode()
        copies = b"".join(bytes(entry).replace(name, f"{root}/zeros-{i:03}.bin".encode()) for i in range(1, n))
        cd = cd + copies
        count += n - 1
    elif kind == "liar":
        local = struct.unpack("<I", entry[42:46])[0]
        struct.pack_into("<I", entry, 24, 1000)
        struct.pack_into("<I", data, local + 22, 1000)
        cd = cd[:last] + entry
    else:
        sys.exit(f"unknown kind {kind}")
    tail = bytearray(data[eocd:])
    struct.pack_into("<HHII", tail, 8, count, count, len(cd), cd_off)
    open(dst, "wb").write(bytes(data[:cd_off]) + bytes(cd) + bytes(tail))


if __name__ == "__main__":
    main()
