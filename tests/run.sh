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

# The locked test environment: requirements/test.txt holds the exact version and hashes of every
# package setup.py's install_requires and `test` extra bring in (TensorFlow, PyTorch 2.13.0 CPU,
# JAX, pytest, Playwright, ...), for CPython 3.11 on x86_64 Linux (refresh: bash tests/lock.sh).
# Then the plugin itself, editable, with nothing resolved again. On another Python the lock does
# not apply: TESTS_FROM_RANGES=1 installs from setup.py's ranges instead (see README, "Tests").
if python -c 'import platform, sys; sys.exit(not (sys.implementation.name == "cpython" and
    sys.version_info[:2] == (3, 11) and sys.platform == "linux" and platform.machine() == "x86_64"))'; then
  python -m pip install -q --require-hashes -r requirements/test.txt
  python -m pip install -q --no-deps -e .
elif [ "${TESTS_FROM_RANGES:-}" = 1 ]; then
  python -m pip install -q -e ".[test]"
else
  echo "tests/run.sh: requirements/test.txt is locked for CPython 3.11 on x86_64 Linux, this is" \
    "$(python -V 2>&1) on $(uname -sm). Refresh the lock with this Python (bash tests/lock.sh) or" \
    "install from setup.py's ranges: TESTS_FROM_RANGES=1 bash tests/run.sh (README, 'Tests')." >&2
  exit 2
fi

# The frontend toolchain, for the tests that check the committed bundle is not stale and that
# the sources type-check (`tsc --noEmit`).
if [ -f frontend/package-lock.json ]; then
  (cd frontend && npm ci --no-audit --no-fund --loglevel=error)
fi

exec python -m pytest tests "$@"
