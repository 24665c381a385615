#!/usr/bin/env python3
"""eark-validator (PyPI 1.1.3) with no network: the four CSIP vocabularies it fetches when it
loads are served from local copies of the E-ARK-CSIP v2.2.0 tag (data/eark/vocabularies);
any other URL is refused.

Usage: eark-validator-offline.py [-s VERSION] PACKAGE...
  -s, --specification_version  the CSIP profile to validate against: 2.1.0 (the default, the
                               newest eark-validator 1.1.3 ships) or 2.0.4 ("V2.1.0" works too)
  PACKAGE                      a package folder, or a .zip or .tar.gz of one
Prints one JSON line per package: {"path", "errors" (eark-validator's ERROR messages, with
their rule_id), "structure" (WellFormed when the package's structure is)}. Exit status 0 when
no package has an error, 1 otherwise, 2 on a usage error. Without a PACKAGE it only loads
eark-validator (a check that it runs offline)."""
import io
import json
import os
import sys
import urllib.request
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
VOCABS = os.path.join(HERE, '..', 'data', 'eark', 'vocabularies')
PREFIX = 'https://earkcsip.dilcis.eu/schema/'


def offline_urlopen(url, *args, **kwargs):
    url = getattr(url, 'full_url', url)
    if url.startswith(PREFIX):
        name = url[len(PREFIX):]
        if '/' not in name:
            with open(os.path.join(VOCABS, name), 'rb') as f:
                return io.BytesIO(f.read())
    raise OSError(f'network access refused (offline): {url}')


urllib.request.urlopen = offline_urlopen

from eark_validator import packages  # noqa: E402  (after the patch, on purpose)
from eark_validator.specifications.specification import SpecificationVersion  # noqa: E402


def errors_of(report):
    """Every ERROR of the report: structure and metadata (schema and schematron)."""
    out = []
    d = json.loads(report.model_dump_json())
    for m in (d.get('structure') or {}).get('messages', []):
        if m.get('severity') == 'Error':
            out.append(m)
    md = d.get('metadata') or {}
    for part in ('schema_results', 'schematron_results'):
        for m in (md.get(part) or {}).get('messages', []):
            if m.get('severity') == 'Error':
                out.append(m)
    return d, out


def version_of(text):
    """The SpecificationVersion named `2.1.0` or `V2.1.0`; None when there is none."""
    name = text if text.upper().startswith('V') else 'V' + text
    for v in SpecificationVersion:
        if v.value.upper() == name.upper():
            return v
    return None


def main(argv):
    version = SpecificationVersion.V2_1_0
    paths = []
    it = iter(argv)
    for a in it:
        if a in ('-h', '--help'):
            print(__doc__)
            return 0
        if a in ('-s', '--specification_version'):
            version = version_of(next(it, ''))
            if version is None:
                known = ', '.join(v.value.lstrip('V') for v in SpecificationVersion)
                print(f'{sys.argv[0]}: -s takes one of {known}', file=sys.stderr)
                return 2
        elif a.startswith('-'):
            print(f'{sys.argv[0]}: unknown option {a} (see --help)', file=sys.stderr)
            return 2
        else:
            paths.append(a)
    status = 0
    for p in paths:
        report = packages.PackageValidator(Path(p), version).validation_report
        d, errs = errors_of(report)
        print(json.dumps({'path': p, 'errors': errs,
                          'structure': (d.get('structure') or {}).get('status')}))
        if errs or (d.get('structure') or {}).get('status') != 'WellFormed':
            status = 1
    return status


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
