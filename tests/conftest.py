"""Shared pytest fixtures: real TensorBoard logs written by ``tests/logwriters.py``.

``real_logs`` is session-scoped and lazy: ``real_logs.get(kind)`` writes that one kind the first
time it is asked for (in its own subprocess, ``python -m tests.logwriters KIND DIR``) into
``tests/_artifacts/logs/<hash of logwriters.py>/<kind>/`` and returns that directory, a logdir
root holding only that kind's run(s). Later sessions reuse it while ``logwriters.py`` is unchanged.
Writes go to a temporary sibling directory that is renamed into place when complete, so an
interrupted run never leaves a half-written cache entry (and parallel workers at worst write twice).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

import pytest

from tests import logwriters, onnx_files as onnx_writer

REPO_ROOT = Path(__file__).resolve().parent.parent
LOGWRITERS_PATH = Path(logwriters.__file__).resolve()
CACHE_ROOT = REPO_ROOT / "tests" / "_artifacts" / "logs"
ONNX_WRITER_PATH = Path(onnx_writer.__file__).resolve()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: takes more than a few seconds (still runs in CI; deselect with -m 'not slow')"
    )


def _source_hash() -> str:
    return hashlib.sha256(LOGWRITERS_PATH.read_bytes()).hexdigest()[:16]


class RealLogs:
    """Lazy kind -> logdir map over the on-disk cache of real logs."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._paths: dict[tuple[str, int | None], Path] = {}

    @property
    def kinds(self) -> tuple[str, ...]:
        return logwriters.KINDS

    def __contains__(self, kind: object) -> bool:
        return kind in logwriters.WRITERS

    def __getitem__(self, kind: str) -> Path:
        return self.get(kind)

    def get(self, kind: str, layers: int | None = None) -> Path:
        """The logdir root holding ``kind`` (written now if not cached). Unknown kind -> KeyError."""
        if kind not in logwriters.WRITERS:
            raise KeyError(f"unknown log kind {kind!r}; known: {', '.join(logwriters.WRITERS)}")
        key = (kind, layers)
        if key not in self._paths:
            name = kind if layers is None else f"{kind}-L{layers}"
            target = self.root / name
            if not target.is_dir():
                self._generate(kind, layers, target)
            self._paths[key] = target
        return self._paths[key]

    def _generate(self, kind: str, layers: int | None, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        os.chmod(tmp, 0o755)
        cmd = [sys.executable, "-m", "tests.logwriters", kind, str(tmp), "--quiet"]
        if layers is not None:
            cmd += ["--layers", str(layers)]
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow")
        proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError(
                f"writing real logs {kind!r} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}"
            )
        try:
            os.rename(tmp, target)
        except OSError:  # another process finished the same kind first
            if not target.is_dir():
                raise
            shutil.rmtree(tmp, ignore_errors=True)


def written_once(kind: str, sources: list, commands: list, env: Optional[dict] = None, timeout: float = 900) -> Path:
    """``tests/_artifacts/<kind>/<hash of sources>/``, written by ``commands`` (each a list of
    arguments after ``python -m``, ``{out}`` standing for the directory) in subprocesses the first
    time, into a temporary directory renamed into place (a concurrent writer's result is kept)."""
    digest = hashlib.sha256()
    for src in sources:
        digest.update(Path(src).read_bytes())
    target = REPO_ROOT / "tests" / "_artifacts" / kind / digest.hexdigest()[:16]
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    for command in commands:
        args = [str(tmp) if a == "{out}" else a.replace("{out}", str(tmp)) for a in command]
        proc = subprocess.run([sys.executable, "-m", *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout)
        if proc.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError(f"writing {kind} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    try:
        os.rename(tmp, target)
    except OSError:  # another process wrote them first
        if not target.is_dir():
            raise
        shutil.rmtree(tmp, ignore_errors=True)
    return target


@pytest.fixture(scope="session")
def real_logs() -> RealLogs:
    """Lazy map kind -> logdir root of real logs; see ``tests/logwriters.py`` for the kinds."""
    return RealLogs(CACHE_ROOT / _source_hash())


@pytest.fixture(scope="session")
def onnx_files() -> Path:
    """Directory of the ``.onnx`` files and ``truth.json`` that ``tests/onnx_files.py`` writes
    (with torch, in a subprocess), cached in ``tests/_artifacts/onnx/<hash of onnx_files.py>/``."""
    return written_once("onnx", [ONNX_WRITER_PATH], [["tests.onnx_files", "{out}"]])


COST_MODELS_PATH = REPO_ROOT / "tests" / "pytorch" / "cost_models.py"


@pytest.fixture(scope="session")
def cost_models() -> Path:
    """Directory of the Hugging Face captures, the ``.onnx``, the Keras JSON and what torch and Keras say
    they cost (``tests/pytorch/cost_models.py``, two subprocesses), cached in
    ``tests/_artifacts/cost/<hash of cost_models.py>/``."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow")
    return written_once("cost", [COST_MODELS_PATH], [["tests.pytorch.cost_models", "{out}"],
                                                     ["tests.pytorch.cost_models", "{out}", "keras"]], env)


TF_BERT_LIKE_PATH = REPO_ROOT / "tests" / "graph" / "tf_bert_like.py"


@pytest.fixture(scope="session")
def tf_bert_like() -> Path:
    """A 4-layer BERT-like TF GraphDef with shapes (``tests/graph/tf_bert_like.py``, a subprocess) and
    ``<it>.json`` (its variables' elements), cached in ``tests/_artifacts/tf_bert_like/<hash>/bert_like.pb``."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    return written_once("tf_bert_like", [TF_BERT_LIKE_PATH], [["tests.graph.tf_bert_like", "{out}/bert_like.pb", "4"]],
                        env, timeout=600) / "bert_like.pb"


#: Debian's Chromium, headless, with no background networking (nothing to reach here).
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def launch_chromium(playwright):
    """Debian's ``/usr/bin/chromium`` through Playwright (never ``playwright install``)."""
    return playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session's browser tests."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


SCREENSHOTS = REPO_ROOT / "tests" / "_artifacts" / "screenshots"


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    pg.errors = []  # uncaught page errors, checked by tests
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.dialogs = []  # alert/confirm/prompt messages (an executed XSS payload would open one)
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    yield pg
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        pg.screenshot(path=str(SCREENSHOTS / f"{request.node.name}.png"))
    finally:
        context.close()
