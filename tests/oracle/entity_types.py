"""Prints, as JSON, the entity media type (HTTP Content-Type without parameters, lower-case) of
every HTTP response record of a WARC, by the record's offset, as warcio reads it.

Usage: entity_types.py FILE.warc[.gz]
"""

import json
import sys

from warcio.archiveiterator import ArchiveIterator


def main(path):
    out = {}
    with open(path, "rb") as f:
        it = ArchiveIterator(f)
        for rec in it:
            if rec.rec_type == "response" and rec.http_headers is not None:
                ct = rec.http_headers.get_header("Content-Type")
                mime = ct.split(";")[0].strip().lower() if ct else None
                out[str(it.get_record_offset())] = mime
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
