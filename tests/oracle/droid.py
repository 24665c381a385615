"""Looks PUIDs up in the DROID signature file that opf-fido ships (an independent source for
PRONOM identifiers) and prints, as JSON, each PUID's format name and version.

Usage: droid.py PUID...
"""

import glob
import json
import os
import sys
import xml.etree.ElementTree as ET

import fido

NS = "{http://www.nationalarchives.gov.uk/pronom/SignatureFile}"


def main(puids):
    conf = os.path.join(os.path.dirname(fido.__file__), "conf")
    files = sorted(glob.glob(os.path.join(conf, "DROID_SignatureFile-v*.xml")))
    if not files:
        sys.exit("no DROID signature file in " + conf)
    root = ET.parse(files[-1]).getroot()
    found = {}
    for f in root.iter(NS + "FileFormat"):
        if f.get("PUID") in puids:
            found[f.get("PUID")] = {"name": f.get("Name"), "version": f.get("Version") or ""}
    json.dump({"signature_file": os.path.basename(files[-1]), "formats": found}, sys.stdout)


if __name__ == "__main__":
    main(set(sys.argv[1:]))
