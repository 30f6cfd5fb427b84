"""A real ``tensorboard`` process on loopback, with whatever plugins are installed (ours included).

Used by the end-to-end tests (HTTP and browser). The process is bound to 127.0.0.1 on a free port
and stopped (with its data server) when the context exits.
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
    def __init__(self, logdir, load_fast: bool = False, extra_args=(), timeout_s: float = 90):
        self.logdir = str(logdir)
        self.load_fast = load_fast
        self.extra_args = list(extra_args)
        self.timeout_s = timeout_s
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = tempfile.NamedTemporaryFile(prefix="tensorboard-", suffix=".log", delete=False)
        self.proc = None

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
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        self.proc = subprocess.Popen(
            cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tensorboard exited with {self.proc.returncode}:\n{self.output()}")
            try:
                listing = self.get_json("/data/plugins_listing")
                if listing.get("graph_explorer", {}).get("enabled"):
                    return self
            except (urllib.error.URLError, ConnectionError, OSError, ValueError):
                pass
            time.sleep(0.3)
        self.__exit__(None, None, None)
        raise TimeoutError(f"tensorboard did not enable graph_explorer in {self.timeout_s}s:\n{self.output()}")

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
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
