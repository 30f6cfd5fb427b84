#!/usr/bin/env bash
# Refresh requirements/test.txt, the lock tests/run.sh installs: the exact version and the hashes
# of every package that setup.py's install_requires and its `test` extra bring in, for CPython 3.11
# on x86_64 Linux. Made with pip-tools' pip-compile (a pinned version, in a throwaway virtualenv),
# which resolves with pip itself and so with this machine's pip configuration (`pip config list`):
# the find-links /opt/wheels that holds torch 2.13.0's CPU wheel, and the local indexes.
#
# Usage: bash tests/lock.sh                      keep the locked versions; add, drop or change only
#                                                what setup.py changed
#        bash tests/lock.sh --upgrade            every package to the newest that setup.py allows
#        bash tests/lock.sh --upgrade-package X  only X (and what it needs) to its newest
# Then run the suite (bash tests/run.sh) and commit setup.py and requirements/test.txt together;
# tests/test_lock.py fails while they disagree.
set -euo pipefail
cd "$(dirname "$0")/.."
PIP_TOOLS_VERSION=7.6.2
LOCK=requirements/test.txt

python - <<'PY' || { echo "tests/lock.sh: the lock is for CPython 3.11 on x86_64 Linux; this Python is not (see README, 'Tests')" >&2; exit 2; }
import platform, sys
sys.exit(not (sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11)
              and sys.platform == "linux" and platform.machine() == "x86_64"))
PY

tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
python -m venv "$tools/venv"
"$tools/venv/bin/python" -m pip install -q "pip-tools==$PIP_TOOLS_VERSION"
CUSTOM_COMPILE_COMMAND="bash tests/lock.sh" "$tools/venv/bin/pip-compile" --quiet \
  --extra test --generate-hashes --allow-unsafe --strip-extras \
  --output-file "$LOCK" "$@" setup.py

# The PyPI build of torch 2.13.0 for Linux is a CUDA build that pulls gigabytes of nvidia-* wheels;
# the lock must hold the CPU wheel on disk.
if grep -Eiq '^(nvidia-|triton==)' "$LOCK"; then
  echo "tests/lock.sh: $LOCK pulls CUDA packages (nvidia-*/triton): torch did not resolve to the CPU wheel" >&2
  exit 1
fi
grep -q '^torch==2\.13\.0+cpu ' "$LOCK" || { echo "tests/lock.sh: torch is not locked to 2.13.0+cpu" >&2; exit 1; }
echo "tests/lock.sh: $LOCK refreshed ($(grep -Ec '^[a-z0-9]' "$LOCK") packages)"
