#!/usr/bin/env bash
# Installs, idempotently, the Debian packages webaip needs to build: in-process XML Schema
# validation links libxml2 (libxml2-dev, pkg-config), whose bindings are generated with
# libclang at build time.
set -euo pipefail
exec bash "$(dirname "$0")/apt-install.sh" libxml2-dev pkg-config libclang-dev
