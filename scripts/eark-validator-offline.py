#!/usr/bin/env python3
"""eark-validator (PyPI 1.1.3) with no network: the four CSIP vocabularies it fetches when it
loads are served from local copies of the E-ARK-CSIP v2.2.0 tag (data/eark/vocabularies);
any other URL is refused. Arguments are eark-validator's own, e.g.
    eark-validator-offline.py -s 2.1.0 PACKAGE
Prints eark-validator's report; exit status 0 when it reports no error, 1 otherwise."""
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


def main(argv):
    version = SpecificationVersion.V2_1_0
    paths = []
    it = iter(argv)
    for a in it:
        if a in ('-s', '--specification_version'):
            version = SpecificationVersion(next(it))
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
