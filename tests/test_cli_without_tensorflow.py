"""``tb-graph`` run as a program never imports TensorFlow, and answers as it does with it.

Importing TensorFlow costs 4-8 s, ten times the rest of ``tb-graph summary`` on a demo log. The
CLI makes ``tensorboard.compat.tf`` resolve to TensorBoard's stub (``cli._without_tensorflow``).
The checks run the real program in a subprocess: ``-X importtime`` lists every module the process
imported, so a TensorFlow import anywhere on the path (ours or TensorBoard's) fails the test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tb_graph_plugin.cli import main

REPO = Path(__file__).resolve().parent.parent
# Logs written by TensorFlow (a trace, a v1 graph) and by PyTorch.
DEMO_LOGS = ["tf2_keras_trace", "tf1_graph", "torch_cnn"]
NO_TENSORFLOW = (  # as if TensorFlow were not installed: ``import tensorflow`` raises ImportError
    "import runpy, sys\n"
    "sys.modules['tensorflow'] = None\n"
    "sys.argv = ['tb-graph', *sys.argv[1:]]\n"
    "runpy.run_module('tb_graph_plugin.cli', run_name='__main__')\n"
)


def _imported(importtime_stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[1].strip() for line in importtime_stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


def _untimed(answer: dict) -> dict:
    """The answer without its wall-clock fields (summary ``timings``, scene ``stats.*seconds``)."""
    answer.pop("timings", None)
    for key in [k for k in answer.get("stats", {}) if "seconds" in k]:
        answer["stats"].pop(key)
    return answer


def _in_process(capsys, *argv) -> dict:
    assert main([*argv]) == 0
    return _untimed(json.loads(capsys.readouterr().out))


@pytest.mark.parametrize("log", DEMO_LOGS)
def test_summary_imports_no_tensorflow(log, capsys):
    path = str(REPO / "demo_logs" / log)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "tb_graph_plugin.cli", "summary", path,
                           "--compact"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = _imported(proc.stderr)
    assert "tb_graph_plugin.ingest.local" in imported and "tensorboard.compat.tensorflow_stub" in imported
    assert not {m for m in imported if m == "tensorflow" or m.startswith(("tensorflow.", "keras"))}
    assert _untimed(json.loads(proc.stdout)) == _in_process(capsys, "summary", path, "--compact")


@pytest.mark.parametrize("argv", [["summary", "tf2_keras_trace", "--compact"], ["layout", "torch_cnn"]])
def test_same_answer_when_tensorflow_is_not_installed(argv, capsys):
    argv = [a if a.startswith("-") or a in ("summary", "layout") else str(REPO / "demo_logs" / a) for a in argv]
    proc = subprocess.run([sys.executable, "-c", NO_TENSORFLOW, *argv], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _untimed(json.loads(proc.stdout)) == _in_process(capsys, *argv)  # stdout: only the JSON
