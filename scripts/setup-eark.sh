#!/usr/bin/env bash
# The E-ARK validator, offline (to come).
set -euo pipefail
