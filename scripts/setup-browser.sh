#!/usr/bin/env bash
# ReplayWeb.page and headless Chromium for the WACZ replay test (to come).
set -euo pipefail
