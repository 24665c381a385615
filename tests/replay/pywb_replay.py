"""Replays captures with pywb from index files webaip wrote: reads a JSON request on stdin,
{"index": PATH (a folder of .cdxj files, one .cdxj, or a ZipNum .idx),
 "archive_paths": [FOLDER, ...], "captures": [[TIMESTAMP, URL], ...]},
serves them through pywb's own application (in this process, no port), asking each capture
raw (`id_`; a capture [TIMESTAMP, URL, METHOD, BODY, CONTENT_TYPE] is asked with that method
and body, as a browser replaying a form would), and prints one JSON line per capture: its timestamp and URL, the HTTP status pywb
answers with, the length and SHA-256 of the body, and the timestamp pywb says it served
(Memento-Datetime)."""
import hashlib
import json
import os
import sys
import tempfile

import yaml
from pywb.apps.frontendapp import FrontEndApp
from werkzeug.test import Client


def main():
    req = json.load(sys.stdin)
    # pywb prints notes of its own ("Dir ... unchanged") on standard output: they go to
    # standard error, the answers alone to standard output.
    out, sys.stdout = sys.stdout, sys.stderr
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "config.yaml")
        paths = [p.rstrip("/") + "/" for p in req["archive_paths"]]
        with open(config, "w") as f:
            yaml.safe_dump({"collections": {"c": {"index": req["index"],
                                                  "archive_paths": paths}}}, f)
        client = Client(FrontEndApp(config_file=config))
        for ts, url, *send in req["captures"]:
            path = "/c/%sid_/%s" % (ts, url)
            if send:
                method, body, content_type = send
                r = client.open(path, method=method, data=body.encode("utf-8"),
                                content_type=content_type)
            else:
                r = client.get(path)
            body = r.data
            print(json.dumps({"timestamp": ts, "url": url, "status": r.status_code,
                              "length": len(body), "sha256": hashlib.sha256(body).hexdigest(),
                              "memento": r.headers.get("Memento-Datetime")}), file=out, flush=True)


if __name__ == "__main__":
    main()
