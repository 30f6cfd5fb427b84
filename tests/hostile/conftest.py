"""Fixtures of the hostile-input tests (issue 6).

``hostile_logs`` is session-scoped and cached like ``real_logs``: the kinds of
``tests/hostile/hostile_logs.py`` are written by real TF (one subprocess, all kinds) into
``tests/_artifacts/hostile/<hash of hostile_logs.py>/<kind>/`` (a logdir root holding run
``<kind>``), renamed into place when complete. ``app_factory`` builds ``TbApp``s and closes
their worker pools at the end of the module.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.hostile import hostile_logs
from tests.tb_app import TbApp

REPO_ROOT = Path(__file__).resolve().parents[2]
WRITER = Path(hostile_logs.__file__).resolve()
CACHE = REPO_ROOT / "tests" / "_artifacts" / "hostile" / hashlib.sha256(WRITER.read_bytes()).hexdigest()[:16]


@pytest.fixture(scope="session")
def hostile_logs_root() -> Path:
    """Directory holding one logdir per kind of ``hostile_logs.KINDS``."""
    if not CACHE.is_dir():
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".hostile.", dir=CACHE.parent))
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        proc = subprocess.run([sys.executable, "-m", "tests.hostile.hostile_logs", str(tmp)],
                              cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError(f"writing hostile logs failed:\n{proc.stderr[-4000:]}")
        try:
            os.rename(tmp, CACHE)
        except OSError:
            if not CACHE.is_dir():
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    return CACHE


@pytest.fixture(scope="module")
def app_factory():
    apps: list[TbApp] = []

    def make(logdir, **kwargs) -> TbApp:
        app = TbApp(logdir, **kwargs)
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.ours.pool.close()
