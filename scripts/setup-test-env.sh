#!/usr/bin/env bash
# Installs what the test suite needs, idempotently, on a new Debian machine (run as root):
#   - xmllint (libxml2-utils): validates every METS against the official schemas; ClamAV
#     (clamav-daemon, clamdscan), whose daemon the tests start with scripts/clamd-local.sh;
#     Slurm and MUNGE (slurmctld, slurmd, slurm-client, munge), whose single-node cluster the
#     batch array test starts with scripts/slurm-local.sh; and the build packages of
#     scripts/setup-build-env.sh;
#   - Garage (S3-compatible distributed object store), built with cargo when missing, and its
#     3-node cluster on 127.0.0.1 (scripts/garage-cluster.sh), for the `webaip store` tests;
#   - a Python venv in .venv/ with warcio (the independent WARC reader the tests compare
#     against), xmlschema (the second validator of validate-mets), metsrw (Archivematica's METS
#     library, which must open every package), opf-fido (whose DROID signature file checks the
#     PRONOM identifiers), pygfried (siegfried, the identifier webaip's DROID matcher is
#     checked against), warctools (a peer tool the benchmarks time), and for the access index:
#     cdxj-indexer and surt (whose keys and lines webaip's index must equal), FastWARC (a peer
#     indexer the benchmarks time) and pywb (which replays from webaip's indexes); ocfl-py
#     and rocfl (scripts/setup-rocfl.sh), two OCFL implementations that read webaip's stores.
# Re-running it on a machine that has everything does nothing but check.
set -euo pipefail
cd "$(dirname "$0")/.."

# xmllint is what ../shared/tools/validate-mets runs; ClamAV is the real scanner the tests
# start (through scripts/clamd-local.sh); the rest is what webaip builds with.
bash scripts/apt-install.sh libxml2-utils clamav-daemon clamdscan strace \
  slurmctld slurmd slurm-client munge
bash scripts/setup-build-env.sh

PY_PACKAGES=(warcio==1.8.1 ocfl-py==2.1.0 warctools==5.0.1 xmlschema==4.3.2 metsrw==0.7.0 opf-fido==1.6.1 pygfried==2.2.0
  cdxj-indexer==1.5.0 surt==0.3.1 fastwarc==2.0.1 pywb==2.10.0 wacz==0.6.0 websocket-client==1.9.2)
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  python3 -m venv .venv
fi
if ! .venv/bin/python -c 'import warcio, ocfl, hanzo.warctools, xmlschema, metsrw, fido, pygfried, cdxj_indexer, surt, fastwarc, pywb, wacz, websocket' 2>/dev/null; then
  echo "setup: installing ${PY_PACKAGES[*]} into .venv" >&2
  .venv/bin/pip install -q --disable-pip-version-check "${PY_PACKAGES[@]}"
fi
.venv/bin/python -c 'import warcio, ocfl, hanzo.warctools, xmlschema, metsrw, fido, pygfried, cdxj_indexer, surt, fastwarc, pywb, wacz, websocket' >/dev/null
command -v xmllint >/dev/null
# The export tests: ReplayWeb.page in headless Chromium, served locally (setup-browser.sh), and
# the E-ARK validator with its vocabularies served from local copies (setup-eark.sh).
bash scripts/setup-browser.sh
bash scripts/setup-eark.sh
# The OCFL store tests read webaip's storage roots with rocfl too (built with cargo when missing).
bash scripts/setup-rocfl.sh
# The store tests talk to a real Garage cluster (a first install builds it: ~10 min on 2 cores).
bash scripts/garage-cluster.sh start >/dev/null
echo "setup: test environment ready (xmllint, .venv with warcio, xmlschema, pygfried and warctools, Garage cluster)" >&2
