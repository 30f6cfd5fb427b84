"""Fixtures for the browser tests: a real ``tensorboard`` subprocess with the plugin installed,
and headless Debian Chromium driven by Playwright's sync API (the ``browser`` fixture of
``tests/conftest.py``). The server is ``tests/tensorboard_process.TensorBoardProcess``.

``tensorboard_url(logdir)`` starts (once per logdir per session) ``tensorboard --logdir X --host
127.0.0.1 --port <free>`` and waits until our plugin lists the logdir's runs. ``explorer`` opens
TensorBoard's Graph Explorer tab and returns the plugin iframe's ``Frame`` after the app settled.
Every test saves a screenshot under ``tests/_artifacts/screenshots/<test name>.png``.
"""

from __future__ import annotations

import json

import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import SCREENSHOTS
from tests.tensorboard_process import TensorBoardProcess

REPO = Path(__file__).resolve().parents[2]
SHOTS = SCREENSHOTS  # the page fixture (tests/conftest.py) saves each test's screenshot here too
PLUGIN = "graph_explorer"


@pytest.fixture(scope="session")
def tensorboard_url():
    """Factory ``(logdir, min_runs=1) -> base URL``; one server per logdir for the session."""
    servers: dict[str, TensorBoardProcess] = {}

    def start(logdir: Path, min_runs: int = 1) -> str:
        key = str(Path(logdir).resolve())
        if key not in servers:
            log = REPO / "tests" / "_artifacts" / "tensorboard" / f"{Path(logdir).name}-{len(servers)}.log"
            servers[key] = TensorBoardProcess(Path(logdir), log_path=log, min_runs=min_runs).start()
        return servers[key].url

    yield start
    for s in servers.values():
        s.stop()


@pytest.fixture(scope="session")
def ui_logdir(real_logs, tmp_path_factory) -> Path:
    """One logdir holding real runs of several writers: PyTorch, a Keras callback (conceptual
    graph only), a TF1 graph with run metadata, and a TF2 trace with a profile."""
    root = tmp_path_factory.mktemp("ui_logdir")
    for kind in ("torch_cnn", "keras_callback", "tf1_graph", "tf2_trace_profile"):
        src = real_logs.get(kind)
        for run_dir in sorted(p for p in src.iterdir() if p.is_dir()):
            dest = root / (run_dir.name if run_dir.name == kind else f"{kind}_{run_dir.name}")
            shutil.copytree(run_dir, dest)
    return root


def app_frame(page, timeout: float = 30.0, poll_ms: float = 200):
    """The Graph Explorer iframe inside TensorBoard's page (looked for every ``poll_ms``; the
    bench polls often so that finding the frame adds little to a measured first paint)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for f in page.frames:
            if "plugin_entry.html" in f.url and f"name={PLUGIN}" in f.url:
                try:
                    if f.evaluate("!!document.body && !!document.body.dataset.status"):
                        return f
                except Exception:  # frame still navigating
                    pass
        page.wait_for_timeout(poll_ms)  # (time.sleep would not let Playwright see new frames)
    raise AssertionError(f"the {PLUGIN} iframe never started; frames: {[f.url for f in page.frames]}")


def wait_settled(frame, timeout_ms: float = 60000) -> str:
    """Waits until the app is not loading any more; returns its status (ready/empty/error)."""
    frame.wait_for_function("document.body.dataset.status && document.body.dataset.status !== 'loading'", timeout=timeout_ms)
    return frame.evaluate("document.body.dataset.status")


@pytest.fixture
def explorer(page, tensorboard_url, ui_logdir):
    """Opens TensorBoard's Graph Explorer tab on ``ui_logdir``; returns the app's iframe."""
    base = tensorboard_url(ui_logdir, min_runs=4)
    page.goto(f"{base}/#{PLUGIN}")
    frame = app_frame(page)
    wait_settled(frame)
    return frame


def set_expanded(frame, names: list) -> None:
    """Open exactly the groups ``names`` (the test hook) and wait for their scene: a test that
    reads a closed group opens less than the first view does (it opens a model's block lists)."""
    frame.evaluate(f"window.graphExplorer.setExpanded({json.dumps(names)})")
    frame.wait_for_function(f"document.body.dataset.expanded === {json.dumps(json.dumps(names))} "
                            "&& document.body.dataset.status === 'ready'", timeout=60000)


@pytest.fixture(scope="module")
def bert_logdir(cost_models, tmp_path_factory) -> Path:
    """A logdir holding the Hugging Face BERT capture of ``cost_models`` (run ``bert``): the cost
    and pattern-search browser tests open it."""
    root = tmp_path_factory.mktemp("bert_logdir")
    shutil.copytree(cost_models / "bert", root / "bert")
    return root
