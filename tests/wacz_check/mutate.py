#!/usr/bin/env python3
"""Writes a damaged copy of a WACZ made by py-wacz, one damage at a time, with Python's zipfile
(an implementation independent of webaip's). Unless the damage is to the manifest itself, the
manifest is made consistent again (datapackage.json's hashes and sizes, datapackage-digest.json),
so only the damage named is left for a check to find.

usage: mutate.py IN.wacz OUT.wacz DAMAGE [ARG]
  shift-offsets N     every index line's offset moved by N bytes (index and idx rewritten)
  deflate MEMBER      MEMBER compressed (DEFLATE) instead of stored
  flip-byte MEMBER AT one byte of MEMBER changed at offset AT (manifest left as it was)
  flip-byte-fixed MEMBER AT   the same, with the manifest updated to the changed bytes
  digest MEMBER       datapackage.json's hash of MEMBER changed (digest file updated)
  drop-capture URL    the index lines of URL removed (the page of URL left)
  drop-unpaged        the first index line of a URL that is no page removed; prints its
                      filename and offset (JSON)
  empty-index         every index line and every page removed (the pages' header left)
  evil-name           a member named ../evil.txt added
  duplicate MEMBER    a second member named MEMBER (the same bytes) added after the first
  local-name MEMBER   the last letter of MEMBER's name changed to X in its local header only
  local-crc MEMBER    one byte of the CRC-32 in MEMBER's local header changed
  many N              N small members (notes/NNNNN.txt) added and listed in the manifest: no
                      damage, a valid WACZ of many members
  prefix N            N bytes put before the ZIP, its offsets left as they were (as `cat`
                      does; Python's zipfile still reads it)
  prefix-adjusted N   the same, with every offset moved by N (as `zip -A` does)
  hidden-local        a member (notes/hidden.txt) written, then its central directory entry
                      removed: its local header is left between the last member and the
                      central directory
  idx-garbage         a line that is no block line added to indexes/index.idx
"""
import gzip, hashlib, json, struct, sys, warnings, zipfile

warnings.simplefilter("ignore")  # zipfile warns of the duplicate name it is asked to write


def sha256(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()


def rewrite_index(members, edit):
    """Applies edit(lines) -> lines to indexes/index.cdx.gz (one block) and rewrites index.idx."""
    lines = gzip.decompress(members["indexes/index.cdx.gz"][1]).decode().splitlines()
    lines = edit(lines)
    block = gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0)
    members["indexes/index.cdx.gz"][1] = block
    if "indexes/index.idx" in members:
        meta = {"format": "cdxj-gzip-1.0", "filename": "index.cdx.gz"}
        idx = "!meta 0 " + json.dumps(meta) + "\n"
        if lines:
            first = lines[0].split(" ", 2)
            idx += f"{first[0]} {first[1]} " + json.dumps({"offset": 0, "length": len(block), "digest": sha256(block)}) + "\n"
        members["indexes/index.idx"][1] = idx.encode()


def refresh(members, skip=None):
    dp = json.loads(members["datapackage.json"][1])
    for r in dp["resources"]:
        if r["path"] != skip:
            data = members[r["path"]][1]
            r["hash"], r["bytes"] = sha256(data), len(data)
    members["datapackage.json"][1] = json.dumps(dp, indent=2).encode()
    refresh_digest(members)


def refresh_digest(members):
    if "datapackage-digest.json" in members:
        d = json.loads(members["datapackage-digest.json"][1])
        d["hash"] = sha256(members["datapackage.json"][1])
        members["datapackage-digest.json"][1] = json.dumps(d, indent=2).encode()


def main():
    src, dst, damage, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    with zipfile.ZipFile(src) as z:
        members = {i.filename: [i.compress_type, z.read(i)] for i in z.infolist()}
    extra = []
    if damage == "shift-offsets":
        n = int(args[0])

        def shift(lines):
            out = []
            for line in lines:
                key, ts, js = line.split(" ", 2)
                d = json.loads(js)
                d["offset"] = str(int(d["offset"]) + n)
                out.append(f"{key} {ts} {json.dumps(d)}")
            return out

        rewrite_index(members, shift)
        refresh(members)
    elif damage == "deflate":
        members[args[0]][0] = zipfile.ZIP_DEFLATED
    elif damage in ("flip-byte", "flip-byte-fixed"):
        data = bytearray(members[args[0]][1])
        data[int(args[1])] ^= 0x01
        members[args[0]][1] = bytes(data)
        if damage == "flip-byte-fixed":
            refresh(members)
    elif damage == "digest":
        dp = json.loads(members["datapackage.json"][1])
        for r in dp["resources"]:
            if r["path"] == args[0]:
                r["hash"] = "sha256:" + "0" * 64
        members["datapackage.json"][1] = json.dumps(dp, indent=2).encode()
        refresh_digest(members)
    elif damage == "drop-capture":
        rewrite_index(members, lambda lines: [l for l in lines if json.loads(l.split(" ", 2)[2])["url"] != args[0]])
        refresh(members)
    elif damage == "drop-unpaged":
        pages = {json.loads(l).get("url") for l in members["pages/pages.jsonl"][1].decode().splitlines()[1:] if l.strip()}
        dropped = []

        def drop(lines):
            for i, l in enumerate(lines):
                d = json.loads(l.split(" ", 2)[2])
                if d["url"] not in pages:
                    dropped.append(d)
                    return lines[:i] + lines[i + 1:]
            sys.exit("every index line is a page's")

        rewrite_index(members, drop)
        refresh(members)
        print(json.dumps({"filename": dropped[0]["filename"], "offset": int(dropped[0]["offset"])}))
    elif damage == "empty-index":
        rewrite_index(members, lambda lines: [])
        header = members["pages/pages.jsonl"][1].decode().splitlines()[0]
        members["pages/pages.jsonl"][1] = (header + "\n").encode()
        refresh(members)
    elif damage == "evil-name":
        extra.append(("../evil.txt", b"outside\n"))
    elif damage == "duplicate":
        extra.append((args[0], members[args[0]][1]))
    elif damage == "many":
        dp = json.loads(members["datapackage.json"][1])
        for i in range(int(args[0])):
            name, data = f"notes/{i:05}.txt", f"note {i}\n".encode()
            members[name] = [zipfile.ZIP_STORED, data]
            dp["resources"].append({"name": f"{i:05}.txt", "path": name, "hash": sha256(data), "bytes": len(data)})
        members["datapackage.json"][1] = json.dumps(dp, indent=2).encode()
        refresh_digest(members)
    elif damage == "idx-garbage":
        members["indexes/index.idx"][1] += b"this is no block line\n"
        refresh(members)
    elif damage == "hidden-local":
        extra.append(("notes/hidden.txt", b"seen by a streaming reader only\n"))
    elif damage in ("local-name", "local-crc", "prefix", "prefix-adjusted"):
        pass
    else:
        sys.exit(f"unknown damage {damage}")
    with zipfile.ZipFile(dst, "w") as z:
        for name, (method, data) in members.items():
            z.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), data, compress_type=method)
        for name, data in extra:
            z.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), data)
    if damage in ("local-name", "local-crc"):
        patch_local_header(dst, args[0], damage)
    elif damage in ("prefix", "prefix-adjusted"):
        prefix(dst, int(args[0]), damage == "prefix-adjusted")
    elif damage == "hidden-local":
        drop_central_entry(dst, "notes/hidden.txt")


def end_record(data):
    """The offset of the end of central directory record, and its (entries, size, offset)."""
    at = data.rindex(b"PK\x05\x06")
    entries, size, offset = struct.unpack_from("<HII", data, at + 10)
    return at, entries, size, offset


def prefix(path, n, adjusted):
    """Puts n bytes before the ZIP; with `adjusted`, every offset counts them."""
    data = bytearray(open(path, "rb").read())
    at, entries, size, offset = end_record(data)
    if adjusted:
        pos = offset
        for _ in range(entries):
            assert data[pos:pos + 4] == b"PK\x01\x02"
            nlen, xlen, clen = struct.unpack_from("<HHH", data, pos + 28)
            (local,) = struct.unpack_from("<I", data, pos + 42)
            struct.pack_into("<I", data, pos + 42, local + n)
            pos += 46 + nlen + xlen + clen
        struct.pack_into("<I", data, at + 16, offset + n)
    open(path, "wb").write(b"#!/bin/sh\n" + b"x" * (n - 10) + bytes(data))


def drop_central_entry(path, name):
    """Removes `name`'s central directory entry (its local header and data stay)."""
    data = bytearray(open(path, "rb").read())
    at, entries, size, offset = end_record(data)
    pos = offset
    for _ in range(entries):
        nlen, xlen, clen = struct.unpack_from("<HHH", data, pos + 28)
        length = 46 + nlen + xlen + clen
        if data[pos + 46:pos + 46 + nlen] == name.encode():
            del data[pos:pos + length]
            at -= length
            struct.pack_into("<HHI", data, at + 8, entries - 1, entries - 1, size - length)
            open(path, "wb").write(bytes(data))
            return
        pos += length
    sys.exit(f"no central directory entry for {name}")


def patch_local_header(path, name, damage):
    """Changes MEMBER's local header, leaving the central directory as written."""
    with zipfile.ZipFile(path) as z:
        at = z.getinfo(name).header_offset
    with open(path, "r+b") as f:
        f.seek(at)
        head = bytearray(f.read(30 + len(name.encode())))
        assert head[:4] == b"PK\x03\x04"
        if damage == "local-name":
            head[-1] = ord("X")
        else:
            head[14] ^= 0x01
        f.seek(at)
        f.write(head)


if __name__ == "__main__":
    main()
