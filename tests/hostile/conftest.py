"""Fixtures of the hostile-input tests.

``hostile_logs`` is session-scoped and cached like ``real_logs``: the kinds of
``tests/hostile/hostile_logs.py`` are written by real TF (one subprocess, all kinds) into
``tests/_artifacts/hostile/<hash of hostile_logs.py>/<kind>/`` (a logdir root holding run
``<kind>``), renamed into place when complete. ``app_factory`` builds ``TbApp``s and closes
their worker pools at the end of the module.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
import sys
import struct
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


def _record_offsets(data: bytes) -> list[int]:
    """Offsets of the TFRecord frames (u64 length, u32 crc, data, u32 crc) of an event file."""
    offsets, off = [], 0
    while off + 12 <= len(data):
        offsets.append(off)
        (n,) = struct.unpack("<Q", data[off:off + 8])
        off += 12 + n + 4
    return offsets


@pytest.fixture(scope="session")
def broken_logdir(real_logs, tmp_path_factory):
    """Copies of the real tf1_graph run (records: file_version, graph step 0, meta graph,
    tagged run metadata ``step1``, summaries, graph step 5) with bytes cut or flipped."""
    src_run = real_logs.get("tf1_graph") / "tf1_graph"
    (event_file,) = list(src_run.glob("events.out.tfevents.*"))
    data = event_file.read_bytes()
    offsets = _record_offsets(data)
    assert len(offsets) == 6
    graph0, rm, graph5 = offsets[1], offsets[3], offsets[5]
    root = tmp_path_factory.mktemp("broken_logs")

    def write(run: str, content: bytes, name: str = event_file.name):
        (root / run).mkdir()
        (root / run / name).write_bytes(content)

    def flipped(at: int) -> bytes:
        b = bytearray(data)
        b[at] ^= 0xFF
        return bytes(b)

    shutil.copytree(src_run, root / "good")
    write("truncated", data[: graph5 + 12 + 500])  # crashed job: the last record is cut
    write("crc_run_metadata", flipped(rm + 12 + 100))  # data CRC mismatch in the profile record
    write("crc_graph", flipped(graph0 + 12 + 100))  # data CRC mismatch in the first graph
    write("bad_length", flipped(rm + 2))  # the length field of the profile record
    write("garbage", random.Random(1).randbytes(5000), "events.out.tfevents.1.garbage")
    write("empty", b"", "events.out.tfevents.2.empty")
    return root
