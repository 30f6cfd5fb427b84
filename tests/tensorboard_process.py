"""A real ``tensorboard`` process on loopback, with whatever plugins are installed (ours included).

Used by the end-to-end tests (HTTP and browser) and the benches. The process is bound to
127.0.0.1 on a free port, is ready once our plugin is enabled (and, with ``min_runs``, once
``/graphs`` lists that many runs), and is stopped (with its data server) by ``stop()`` or when
the context exits. The process imports this checkout's ``tb_graph_plugin`` (the repository root
goes first on its ``PYTHONPATH``, ahead of any installed copy); ``env`` adds variables to its
environment (e.g. a test-only fault plan for the workers).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

__all__ = ["TensorBoardProcess", "free_port"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TensorBoardProcess(contextlib.AbstractContextManager):
    def __init__(self, logdir, load_fast: bool = False, extra_args=(), timeout_s: float = 120,
                 log_path=None, min_runs: int = 0, env=None, inactive_ok: bool = False,
                 list_plugins: bool = True):
        self.logdir = str(logdir)
        self.load_fast = load_fast
        self.extra_args = list(extra_args)
        self.timeout_s = timeout_s
        self.min_runs = min_runs
        self.inactive_ok = inactive_ok  # ready once graph_explorer is listed, even inactive (no graph data)
        # False: ready once our ``/graphs`` lists ``min_runs`` runs, never asking for
        # ``/data/plugins_listing``, which starts our worker pool: the page's own listing starts
        # it, as for a user who opens TensorBoard's page (the cold benches)
        self.list_plugins = list_plugins
        self.env = dict(env or {})
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        if log_path is None:
            self._log = tempfile.NamedTemporaryFile(prefix="tensorboard-", suffix=".log", delete=False)
        else:
            os.makedirs(os.path.dirname(str(log_path)), exist_ok=True)
            self._log = open(log_path, "wb")
        self.proc = None

    def start(self) -> "TensorBoardProcess":
        return self.__enter__()

    def stop(self) -> None:
        self.__exit__(None, None, None)

    def __enter__(self):
        cmd = [
            sys.executable, "-m", "tensorboard.main",
            "--logdir", self.logdir,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--load_fast", "true" if self.load_fast else "false",
            "--reload_interval", "1",
            *self.extra_args,
        ]
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **self.env)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (repo, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tensorboard exited with {self.proc.returncode}:\n{self.output()}")
            try:
                if not self.list_plugins:
                    if len(self.get_json("/data/plugin/graph_explorer/graphs")["runs"]) >= max(1, self.min_runs):
                        return self
                    time.sleep(0.3)
                    continue
                listing = self.get_json("/data/plugins_listing")
                mine = listing.get("graph_explorer", {})
                if (mine.get("enabled") or (self.inactive_ok and "enabled" in mine)) and (
                    not self.min_runs
                    or len(self.get_json("/data/plugin/graph_explorer/graphs")["runs"]) >= self.min_runs
                ):
                    return self
            except (urllib.error.URLError, ConnectionError, OSError, ValueError):
                pass
            time.sleep(0.3)
        self.__exit__(None, None, None)
        raise TimeoutError(
            f"tensorboard did not enable graph_explorer (with {self.min_runs} runs) in {self.timeout_s}s:\n{self.output()}"
        )

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if not self._log.closed:
            self._log.close()
        return False

    def output(self) -> str:
        with open(self._log.name, errors="replace") as f:
            return f.read()[-6000:]

    def get(self, path: str, timeout: float = 30):
        """(status, content type, body bytes) of a GET, errors included."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
                return r.status, r.headers.get("Content-Type", ""), r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type", ""), e.read()

    def get_json(self, path: str):
        status, _, body = self.get(path)
        if status != 200:
            raise ValueError(f"GET {path} -> {status}: {body[:300]!r}")
        return json.loads(body)
