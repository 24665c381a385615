"""Opens a METS document with Archivematica's METS library (metsrw) and prints, as JSON, what
it finds: every file (path and group), and the PREMIS events and agents it reaches through the
package-level directory of the physical structMap. The Rust tests compare this with the fileSec.

Usage: check_metsrw.py METS.xml
"""

import json
import re
import sys
import time
from datetime import datetime

import metsrw


def wait_past_createdate(path):
    """metsrw 0.7 refuses a CREATEDATE "more recent than now" by comparing strings: a
    "...T16:20:18Z" written in the current second sorts after "...T16:20:18.2075" ('Z' > '.').
    A package opened in the second it was written is therefore refused; wait for the next."""
    with open(path, "rb") as f:
        head = f.read(4096).decode("utf-8", "replace")
    m = re.search(r'CREATEDATE="([^"]+)"', head)
    if m:
        while datetime.utcnow().isoformat("T") < m.group(1):
            time.sleep(0.1)


def main(path):
    wait_past_createdate(path)
    doc = metsrw.METSDocument.fromfile(path)
    files, events, agents = [], [], 0
    for entry in doc.all_files():
        if entry.type == "Item":
            files.append({"path": entry.path, "use": entry.use})
        elif entry.type == "Directory" and entry.amdsecs:
            events.extend(e.event_type for e in entry.get_premis_events())
            agents += len(entry.get_premis_agents())
    json.dump({"files": files, "package_events": events, "package_agents": agents}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
