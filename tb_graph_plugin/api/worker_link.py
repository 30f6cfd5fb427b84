"""The serving process's end of one worker process: ``WorkerLink`` starts
``python -m tb_graph_plugin.api.worker_process``, sends it pickles on its stdin and turns what it
says on its stdout into callbacks (a reader thread). Its queue and lanes are the pool's
bookkeeping (``workers.WorkerPool``), guarded by the pool's lock.

A graph's encoding of ``SHARED_MIN_BYTES`` or more is not sent through the pipe but in shared
memory (:func:`share`: a ``memfd`` written in one call, which the worker maps read-only while it
unpickles the job: :func:`map_shared`). Through the 1 MiB pipe a 1M-op graph's 165 MB went in 165
round trips between the two processes, each read landing on fresh pages in the worker: 0.14-0.29 s
with the worker idle, up to 0.5 s while it was still preparing; through a ``memfd`` ~0.085 s
(session 21). Smaller graphs keep the pipe: the worker's prefaulted heap takes them at once. Where
the worker cannot open the ``memfd`` (no ``/proc``), it says so (``("need_graph", id,
"unshared")``) and the pool sends that job and every later one through the pipe.
"""

from __future__ import annotations

import collections
import mmap
import os
import pickle
import subprocess
import sys
import threading
import time
from typing import Callable, Hashable, Optional

from tb_graph_plugin.api import prefault
from tb_graph_plugin.api.jobs import JobHandle
from tb_graph_plugin.cache import LruCache

__all__ = ["WorkerLink", "STARTUP_GRACE_S", "SHARED_MEMORY", "SHARED_MIN_BYTES", "SharedBlob", "map_shared", "share",
           "worker_env"]

STARTUP_GRACE_S = 30.0  # a fresh worker imports TensorBoard and numpy before its first pong


PIPE_BYTES = 1 << 20  # the pipe a graph's encoding goes through (Linux's default is 64 KiB)


def _widen_pipe(stream) -> None:
    """Give the pipe to the worker ``PIPE_BYTES`` of buffer where the system allows (Linux's
    ``F_SETPIPE_SZ``; elsewhere, or past ``/proc/sys/fs/pipe-max-size``, it stays as it is). A
    graph under ``SHARED_MIN_BYTES`` (or any graph where there is no shared memory: a 1M-op
    graph's 165 MB) then crosses in 1 MiB reads, not 64 KiB ones: the worker's reading thread
    takes the GIL back once per read, and a worker still importing holds it for up to the switch
    interval each time."""
    try:
        import fcntl

        fcntl.fcntl(stream.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (ImportError, OSError, ValueError):
        pass


def worker_env(prefault_bytes: int = 0) -> dict[str, str]:
    """A worker process's environment: this one, this package importable, and glibc set to keep
    what the worker's ``prefault`` touches."""
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env.update(prefault.malloc_env(prefault_bytes))
    return env


SHARED_MIN_BYTES = prefault.MMAP_THRESHOLD
"""A graph's encoding this long or longer goes to the worker in shared memory: the worker would
receive it on fresh ``mmap``-ed pages anyway (its heap keeps blocks under this size)."""


class SharedBlob:
    """Bytes written to a ``memfd`` of this process, pickled as the instruction to map it
    (:func:`map_shared`, in the worker). :meth:`close` once the worker has unpickled it (it then
    holds its own mapping)."""

    def __init__(self, fd: int, size: int):
        self.fd, self.size = fd, size
        self._lock = threading.Lock()  # the sending thread and the reader may close it at once

    def __reduce__(self):
        return map_shared, (os.getpid(), self.fd, self.size)

    def close(self) -> None:
        with self._lock:
            fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)


SHARED_MEMORY = hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd")
"""This system has a ``memfd`` and a ``/proc`` to open it through (Linux): :func:`share` can."""


def share(data) -> Optional[SharedBlob]:
    """``data`` (bytes or a memoryview) written to a new ``memfd``, or None where it is shorter than
    ``SHARED_MIN_BYTES`` or the system cannot (``SHARED_MEMORY``; the pipe then takes it)."""
    size = len(data) if isinstance(data, (bytes, memoryview)) else 0
    if size < SHARED_MIN_BYTES or not SHARED_MEMORY:
        return None
    try:
        fd = os.memfd_create("graph_explorer_graph", getattr(os, "MFD_CLOEXEC", 0))
    except OSError:
        return None
    try:
        view, written = memoryview(data).cast("B"), 0
        while written < size:  # one call writes it all, but for a signal
            written += os.write(fd, view[written:])
    except OSError:
        os.close(fd)
        return None
    return SharedBlob(fd, size)


def map_shared(pid: int, fd: int, size: int):
    """In the worker, while it unpickles a job: a read-only view of the ``memfd`` ``fd`` of the
    serving process ``pid`` (its pages mapped at once), or None when it cannot be opened."""
    try:
        f = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY)
        try:
            return memoryview(mmap.mmap(f, size, flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0),
                                        prot=mmap.PROT_READ))
        finally:
            os.close(f)
    except (OSError, ValueError):
        return None


class _Pickler(pickle.Pickler):
    """Pickles a ``memoryview`` (a graph cut out of the blob the data provider returned,
    ``run_metadata.single_graph_bytes``) as the bytes it shows, written to the pipe from where
    they lie (protocol 5's in-band ``PickleBuffer``): no copy of a 20 MB graph in TensorBoard's
    process. The worker loads them as ``bytes``."""

    def reducer_override(self, obj):
        if type(obj) is memoryview:
            return bytes, (pickle.PickleBuffer(obj),)
        return NotImplemented


class WorkerLink:
    """One worker process (``python -m tb_graph_plugin.api.worker_process``) speaking pickles
    over its stdin/stdout; a reader thread turns what it says into callbacks. Its queue and
    lanes are the pool's bookkeeping, guarded by the pool's lock."""

    def __init__(self, index: int, on_message: Callable, max_graphs: int, prefault_bytes: int = 0,
                 lean: bool = False):
        self.index = index
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tb_graph_plugin.api.worker_process", str(max(0, prefault_bytes))]
            + (["lean"] if lean else []),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=worker_env(prefault_bytes),
        )
        _widen_pipe(self.process.stdin)
        self._write_lock = threading.Lock()
        self.graphs: LruCache[Hashable, None] = LruCache(max_entries=max_graphs)  # sent: mirrors the worker's own LRU
        self.built: set = set()  # graphs a job has finished on (a quick job may use them)
        self.queue: "collections.deque[JobHandle]" = collections.deque()
        self.lanes: dict[str, Optional[JobHandle]] = {"main": None, "quick": None}
        self.started_at = self.last_pong = time.monotonic()
        self.answered = False  # has answered a ping
        self.rss = 0
        self.base_rss = 0  # said once ready: imports done, no graph yet
        self.draining = False
        self.holds_prefault = prefault_bytes > 0  # until a main-lane job or a ``("release",)`` gives it back
        self.alive = True
        self._reader = threading.Thread(target=self._read, args=(on_message,), daemon=True)
        self._reader.start()

    def silent_for(self, now: float, timeout_s: float) -> bool:
        """No pong for ``timeout_s`` (before the first pong: for ``STARTUP_GRACE_S``)."""
        if self.answered:
            return now - self.last_pong > timeout_s
        return now - self.started_at > max(timeout_s, STARTUP_GRACE_S)

    def load(self) -> int:
        return len(self.queue) + sum(h is not None for h in self.lanes.values())

    def lane_of(self, job_id: str) -> Optional[str]:
        for lane, handle in self.lanes.items():
            if handle is not None and handle.job_id == job_id:
                return lane
        return None

    def send(self, message) -> None:
        with self._write_lock:
            _Pickler(self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL).dump(message)
            self.process.stdin.flush()

    def _read(self, on_message):
        while self.alive:
            try:
                message = pickle.load(self.process.stdout)
            except (EOFError, OSError, ValueError, pickle.UnpicklingError):
                return  # the process ended, or stop() closed the pipe
            on_message(self, message)

    def drain_output(self, timeout_s: float = 2.0) -> None:
        """Wait until the reader has handled everything a dead process wrote (it then sees EOF)."""
        self._reader.join(timeout_s)

    def is_alive(self) -> bool:
        return self.process.poll() is None

    def exitcode(self):
        return self.process.poll()

    def stop(self):
        self.alive = False
        if self.process.poll() is None:
            self.process.kill()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
