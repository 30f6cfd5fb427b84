"""A worker's imports: what a first view needs before a job can start, the fast layout engine's
(``tasks.LATE_IMPORTS``, ~0.5 s) after, while the worker is idle."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
import time

import pytest

from tb_graph_plugin.api import tasks
from tb_graph_plugin.api.worker_link import worker_env
from tb_graph_plugin.ingest import run_metadata
from tests.ingest.test_proto_scan import _trace_blob

_FIRST_VIEW = textwrap.dedent("""
    import json, sys
    from tb_graph_plugin.api import tasks
    tasks.preload()
    state = tasks.GraphState({"graph": open(sys.argv[1], "rb").read(), "what": "g"}, lambda *a: None)
    scene = tasks.scene_task(state, {"graph": {"run": "r", "tag": "t", "kind": "op"}, "expanded": [],
                                     "first_view": True}, lambda *a: None)
    late = [m for m in tasks.LATE_IMPORTS if m in sys.modules]
    state.settle()
    print(json.dumps({"nodes": len(json.loads(scene)["nodes"]), "late": late,
                      "late_after_settle": [m for m in tasks.LATE_IMPORTS if m in sys.modules]}))
""")


def test_a_first_view_needs_none_of_the_late_imports(real_logs, tmp_path):
    """A training step's first view (laid out by dot alone: no crossings) is built and laid out
    without importing the fast layout engine's modules: a job that reaches a worker still
    importing waits only for ``preload``'s; ``settle``, after its answer, imports them."""
    path = tmp_path / "graph.pb"
    path.write_bytes(bytes(run_metadata.single_graph_bytes(_trace_blob(real_logs, "tf2_keras_trace", "train_step"))))
    out = subprocess.run([sys.executable, "-c", _FIRST_VIEW, str(path)], env=worker_env(0),
                         capture_output=True, text=True, check=True, timeout=120)
    answer = json.loads(out.stdout.strip().splitlines()[-1])
    assert answer["nodes"] > 3
    assert answer["late"] == []
    assert answer["late_after_settle"] == list(tasks.LATE_IMPORTS)


def _mapped(pid: int) -> str:
    with open(f"/proc/{pid}/maps") as f:
        return f.read()


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads a process's mappings from /proc (Linux)")
def test_an_idle_worker_imports_the_late_modules_then_says_hello_again():
    """An idle worker says hello after its first-view imports and again after the late ones,
    which are then loaded (scipy's csgraph and isotonic regression extensions mapped)."""
    process = subprocess.Popen([sys.executable, "-m", "tb_graph_plugin.api.worker_process", "0"], env=worker_env(0),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        hellos = [pickle.load(process.stdout) for _ in range(3)]
        assert [m[0] for m in hellos] == ["hello"] * 3
        deadline = time.monotonic() + 10
        while not all(lib in _mapped(process.pid) for lib in ("csgraph/_traversal", "optimize/_pava")):
            assert time.monotonic() < deadline, "the late imports were not loaded after the last hello"
            time.sleep(0.05)
    finally:
        process.stdin.close()
        process.wait(timeout=30)


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads a process's mappings from /proc (Linux)")
def test_a_lean_worker_only_imports_what_a_first_view_needs():
    """A ``lean`` worker (the pool's others than the first) says hello after its first-view
    imports and stops there: no late imports while the page loads."""
    process = subprocess.Popen([sys.executable, "-m", "tb_graph_plugin.api.worker_process", "0", "lean"],
                               env=worker_env(0), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        hellos = [pickle.load(process.stdout) for _ in range(2)]
        assert [m[0] for m in hellos] == ["hello"] * 2
        deadline = time.monotonic() + 3  # a prepared worker has them mapped within ~1 s here
        while time.monotonic() < deadline:
            assert "csgraph/_traversal" not in _mapped(process.pid), "a lean worker made the late imports"
            time.sleep(0.1)
        pickle.dump(("ping", 1), process.stdin)
        process.stdin.flush()
        assert pickle.load(process.stdout)[:2] == ("pong", 1)  # no third hello came before it
    finally:
        process.stdin.close()
        process.wait(timeout=30)
