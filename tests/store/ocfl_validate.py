"""Validates OCFL storage roots with ocfl-py, every object included, warnings counted.

ocfl-validate.py on a storage root reports only the root's own structure (an invalid object
inside still exits 0), so this asks ocfl-py's StorageRoot for each object's errors and
warnings, and checks each object sits where the root's layout puts its id. Prints one JSON
object per root: {"valid", "objects", "good", "messages": [...], "misplaced": [...]}; given
several roots (one interpreter for many, as the kill tests need), a JSON list of them.
"""
import json
import os
import sys

import ocfl


def verdict(root):
    sr = ocfl.StorageRoot(root=root)
    valid = sr.validate(log_warnings=True, log_errors=True, check_digests=True)
    messages = [m for _, m in (sr.errors or [])]
    if sr.log is not None and str(sr.log).strip():
        messages.append(str(sr.log))
    misplaced = []
    if valid:
        for path in sr.object_paths():
            with open(os.path.join(root, path, "inventory.json"), encoding="utf-8") as f:
                oid = json.load(f)["id"]
            if sr.object_path(oid) != path:
                misplaced.append([oid, path, sr.object_path(oid)])
    return {"root": root, "valid": bool(valid) and sr.good_objects == sr.num_objects,
            "objects": sr.num_objects, "good": sr.good_objects,
            "messages": messages, "misplaced": misplaced}


roots = sys.argv[1:]
if len(roots) == 1:
    print(json.dumps(verdict(roots[0])))
else:
    print(json.dumps([verdict(r) for r in roots]))
