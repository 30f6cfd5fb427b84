"""Fixtures for the browser tests: a real ``tensorboard`` subprocess with the plugin installed,
and headless Debian Chromium driven by Playwright's sync API.

``tensorboard_url(logdir)`` starts (once per logdir per session) ``tensorboard --logdir X --host
127.0.0.1 --port <free>`` and waits until our plugin lists the logdir's runs. ``explorer`` opens
TensorBoard's Graph Explorer tab and returns the plugin iframe's ``Frame`` after the app settled.
Every test saves a screenshot under ``tests/_artifacts/screenshots/<test name>.png``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "tests" / "_artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
PLUGIN = "graph_explorer"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 5.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class TensorBoardProcess:
    """``tensorboard --logdir`` in a subprocess; ``url`` once the plugin lists ``min_runs`` runs."""

    def __init__(self, logdir: Path, log_path: Path, min_runs: int = 1):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(log_path, "wb")
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--host", "127.0.0.1",
             "--port", str(self.port), "--load_fast", "false", "--reload_interval", "5"],
            stdout=self._log, stderr=subprocess.STDOUT, env=env,
        )
        self._wait(min_runs, log_path)

    def _wait(self, min_runs: int, log_path: Path, timeout: float = 120.0) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tensorboard exited {self.proc.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                status, body = _get(f"{self.url}/data/plugin/{PLUGIN}/graphs")
                if status == 200 and len(json.loads(body)["runs"]) >= min_runs:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"tensorboard did not list {min_runs} runs in {timeout}s:\n{log_path.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()


@pytest.fixture(scope="session")
def tensorboard_url():
    """Factory ``(logdir, min_runs=1) -> base URL``; one server per logdir for the session."""
    servers: dict[str, TensorBoardProcess] = {}

    def start(logdir: Path, min_runs: int = 1) -> str:
        key = str(Path(logdir).resolve())
        if key not in servers:
            log = REPO / "tests" / "_artifacts" / "tensorboard" / f"{Path(logdir).name}-{len(servers)}.log"
            servers[key] = TensorBoardProcess(Path(logdir), log, min_runs)
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


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    pg.errors = []  # uncaught page errors, checked by tests
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        pg.screenshot(path=str(SHOTS / f"{request.node.name}.png"))
    finally:
        context.close()


def app_frame(page, timeout: float = 30.0):
    """The Graph Explorer iframe inside TensorBoard's page."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for f in page.frames:
            if "plugin_entry.html" in f.url and f"name={PLUGIN}" in f.url:
                try:
                    if f.evaluate("!!document.body && !!document.body.dataset.status"):
                        return f
                except Exception:  # frame still navigating
                    pass
        page.wait_for_timeout(200)  # (time.sleep would not let Playwright see new frames)
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
