#!/usr/bin/env bash
# Install everything the test suite needs on a fresh machine, then run the whole suite.
# Usage: bash tests/run.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian's Chromium for the Playwright browser tests (never `playwright install`: no downloads).
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q chromium
fi

# The plugin (editable) with its test extras: TensorFlow, PyTorch 2.13.0 (CPU), pytest, Playwright.
python -m pip install -q -e ".[test]"

# The frontend toolchain, for the tests that check the committed bundle is not stale and that
# the sources type-check (`tsc --noEmit`).
if [ -f frontend/package-lock.json ]; then
  (cd frontend && npm ci --no-audit --no-fund --loglevel=error)
fi

exec python -m pytest tests "$@"
