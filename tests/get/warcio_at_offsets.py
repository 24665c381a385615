"""For every line of a CDXJ index, what warcio reads at the line's offset: the record's type,
the SHA-256 of its payload as stored (the bytes after the HTTP header, `raw_stream`, not
decoded) and of the line's byte range. One JSON object a line, in the index's order.

usage: warcio_at_offsets.py INDEX ROOT
"""

import hashlib
import json
import os
import sys

from warcio.archiveiterator import ArchiveIterator


def main(index, root):
    with open(index, "rb") as lines:
        for line in lines:
            key, ts, fields = line.rstrip(b"\n").split(b" ", 2)
            f = json.loads(fields)
            offset, length = int(f["offset"]), int(f["length"])
            with open(os.path.join(root, f["filename"]), "rb") as c:
                c.seek(offset)
                stored = c.read(length)
                c.seek(offset)
                record = next(iter(ArchiveIterator(c)))
                payload = record.raw_stream.read()
            print(json.dumps({
                "type": record.rec_type,
                "payload_sha256": hashlib.sha256(payload).hexdigest(),
                "payload_len": len(payload),
                "stored_sha256": hashlib.sha256(stored).hexdigest(),
            }))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
