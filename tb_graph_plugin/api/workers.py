"""Run graph work (SlimGraph, Hierarchy, layout) in worker processes, never on a request thread.

Follows the Helios post (``seeds/003``): the process that serves the UI never computes a layout;
workers do, and report progress as they go.

- ``WorkerPool.submit(key, task, args, graph_key, load_graph)`` returns a ``JobHandle`` at once.
  A second submit with the same ``key`` while the first runs joins it (same handle); a finished
  result (or failure) stays cached under its key (LRU by size) so it is answered at once.
- Each worker keeps the built graphs (``tasks.GraphState``) it was sent, LRU; a job goes to the
  worker that already holds its graph, else to the least busy one, which is then sent the
  serialized GraphDef (read by ``load_graph`` on a thread of the serving process).
- A worker that dies, or runs one job past ``job_timeout_s``, is killed and replaced; that job
  fails with a message saying so, the other jobs queued on it are resubmitted, and the pool keeps
  serving.

Post-condition: every handle reaches ``done`` or ``failed``; nothing here blocks the caller of
``submit`` for more than a lock.
"""

from __future__ import annotations

import collections
import logging
import os
import pickle
import subprocess
import sys
import threading
import time
import uuid
from concurrent import futures
from typing import Callable, Hashable, Optional

from tensorboard import errors

from tb_graph_plugin.api import wire

__all__ = ["WorkerPool", "JobHandle", "JobFailed"]

logger = logging.getLogger(__name__)

DEFAULT_WORKERS = 2
DEFAULT_JOB_TIMEOUT_S = 300.0
DEFAULT_RESULT_CACHE_BYTES = 256 << 20


class JobFailed(errors.PublicError):
    """A job's failure, carrying the HTTP status its cause maps to."""

    def __init__(self, http_code: int, message: str):
        super().__init__(message)
        self.http_code = http_code


class JobHandle:
    """The main-process view of one job: state, stage, progress, then result or error."""

    def __init__(self, key: Hashable, task: str, args: dict, graph_key: Hashable, load_graph):
        self.job_id = uuid.uuid4().hex[:12]
        self.key = key
        self.task = task
        self.args = args
        self.graph_key = graph_key
        self.load_graph = load_graph
        self.state = wire.JobState.RUNNING
        self.stage = "queued"
        self.progress = 0.0
        self.result: Optional[str] = None
        self.error: Optional[JobFailed] = None
        self.started = time.monotonic()
        self.done = threading.Event()

    def wire(self) -> wire.Job:
        return wire.Job(
            job_id=self.job_id,
            state=self.state,
            stage=self.stage,
            progress=round(self.progress, 3),
            error=str(self.error) if self.error else None,
        )

    def wait(self, timeout: Optional[float]) -> bool:
        return self.done.wait(timeout)

    def value(self) -> str:
        """The result JSON, or raise the job's error."""
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result

    def _finish(self, result: Optional[str] = None, error: Optional[JobFailed] = None):
        self.result, self.error = result, error
        self.state = wire.JobState.FAILED if error else wire.JobState.DONE
        self.stage = "failed" if error else "done"
        self.progress = 1.0
        self.done.set()


class _Worker:
    """One worker process (``python -m tb_graph_plugin.api.tasks``) speaking pickles over its
    stdin/stdout; a reader thread turns what it says into callbacks."""

    def __init__(self, index: int, on_message: Callable):
        self.index = index
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tb_graph_plugin.api.tasks"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self._write_lock = threading.Lock()
        self.graphs: "collections.OrderedDict[Hashable, None]" = collections.OrderedDict()
        self.assigned: dict[str, JobHandle] = {}  # job id -> handle, in submission order
        self.current: Optional[str] = None
        self.current_since = 0.0
        self.alive = True
        self._reader = threading.Thread(target=self._read, args=(on_message,), daemon=True)
        self._reader.start()

    def send(self, message) -> None:
        with self._write_lock:
            pickle.dump(message, self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.process.stdin.flush()

    def _read(self, on_message):
        while self.alive:
            try:
                message = pickle.load(self.process.stdout)
            except (EOFError, OSError, pickle.UnpicklingError):
                return
            on_message(self, message)

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


class WorkerPool:
    def __init__(
        self,
        n_workers: int = DEFAULT_WORKERS,
        job_timeout_s: float = DEFAULT_JOB_TIMEOUT_S,
        result_cache_bytes: int = DEFAULT_RESULT_CACHE_BYTES,
        max_graphs_per_worker: int = 6,
    ):
        self.n_workers = n_workers
        self.job_timeout_s = job_timeout_s
        self.max_graphs_per_worker = max_graphs_per_worker
        self._lock = threading.RLock()
        self._workers: list[_Worker] = []
        self._running: dict[Hashable, JobHandle] = {}
        self._by_id: "collections.OrderedDict[str, JobHandle]" = collections.OrderedDict()
        self._results: "collections.OrderedDict[Hashable, JobHandle]" = collections.OrderedDict()
        self._result_bytes = 0
        self._result_cache_bytes = result_cache_bytes
        self._readers = futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="graph_read")
        self.restarted = 0
        self._watchdog = threading.Thread(target=self._watch, daemon=True)
        self._closed = False

    # -- public -----------------------------------------------------------------------------

    def submit(self, key: Hashable, task: str, args: dict, graph_key: Hashable,
               load_graph: Callable[[], bytes]) -> JobHandle:
        with self._lock:
            cached = self._results.get(key)
            if cached is not None:
                self._results.move_to_end(key)
                return cached
            running = self._running.get(key)
            if running is not None:
                return running
            handle = JobHandle(key, task, args, graph_key, load_graph)
            self._running[key] = handle
            self._remember(handle)
        self._readers.submit(self._dispatch, handle)
        return handle

    def job(self, job_id: str) -> JobHandle:
        with self._lock:
            handle = self._by_id.get(job_id)
        if handle is None:
            raise errors.NotFoundError(f"unknown job {job_id!r} (finished jobs are forgotten after a while)")
        return handle

    def close(self):
        self._closed = True
        with self._lock:
            workers, self._workers = self._workers, []
        for w in workers:
            w.stop()
        self._readers.shutdown(wait=False, cancel_futures=True)

    # -- dispatch ---------------------------------------------------------------------------

    def _start_workers(self):
        if not self._workers:
            self._workers = [_Worker(i, self._on_message) for i in range(self.n_workers)]
            if not self._watchdog.is_alive():
                self._watchdog.start()

    def _dispatch(self, handle: JobHandle, force_graph: bool = False):
        try:
            with self._lock:
                self._start_workers()
                worker = self._pick(handle.graph_key)
                needs_graph = force_graph or handle.graph_key not in worker.graphs
                # Count the job and the graph on this worker now, before the (slow) read, so
                # concurrent first requests spread over the workers and later requests for the
                # same graph follow it here.
                worker.assigned[handle.job_id] = handle
                worker.graphs[handle.graph_key] = None
                worker.graphs.move_to_end(handle.graph_key)
                while len(worker.graphs) > self.max_graphs_per_worker:
                    worker.graphs.popitem(last=False)
            blob = None
            if needs_graph:
                handle.stage, handle.progress = "read", 0.05
                try:
                    blob = handle.load_graph()
                except BaseException:
                    with self._lock:
                        worker.assigned.pop(handle.job_id, None)
                        worker.graphs.pop(handle.graph_key, None)
                    raise
            with self._lock:
                if not worker.alive:  # replaced meanwhile: its jobs were resubmitted or failed
                    return
                handle.stage = "queued" if worker.current else handle.stage
            worker.send((handle.job_id, handle.graph_key, blob, handle.task, handle.args,
                         self.max_graphs_per_worker))
        except errors.PublicError as e:
            self._finish(handle, error=JobFailed(e.http_code, str(e)))
        except Exception as e:  # noqa: BLE001 - reported to the client, logged here
            logger.exception("graph_explorer: reading graph for job %s failed", handle.job_id)
            self._finish(handle, error=JobFailed(500, f"reading the graph failed: {type(e).__name__}: {e}"))

    def _pick(self, graph_key) -> _Worker:
        holders = [w for w in self._workers if graph_key in w.graphs]
        pool = holders or self._workers
        return min(pool, key=lambda w: len(w.assigned))

    def _on_message(self, worker: _Worker, message):
        kind, job_id = message[0], message[1]
        with self._lock:
            handle = worker.assigned.get(job_id)
        if handle is None:
            return
        if kind == "start":
            with self._lock:
                worker.current, worker.current_since = job_id, time.monotonic()
        elif kind == "progress":
            handle.stage, handle.progress = message[2], max(handle.progress, float(message[3]))
        elif kind == "need_graph":
            with self._lock:
                worker.assigned.pop(job_id, None)
                worker.graphs.pop(handle.graph_key, None)
                worker.current = None
            self._readers.submit(self._dispatch, handle, True)
        elif kind == "done":
            with self._lock:
                worker.assigned.pop(job_id, None)
                worker.current = None
            self._finish(handle, result=message[2])
        elif kind == "failed":
            with self._lock:
                worker.assigned.pop(job_id, None)
                worker.current = None
            self._finish(handle, error=JobFailed(message[2], message[3]))

    def _finish(self, handle: JobHandle, result=None, error=None, cache=True):
        handle._finish(result, error)
        with self._lock:
            self._running.pop(handle.key, None)
            if not cache:  # a transient failure (crash, time limit): the next request retries
                return
            size = len(result) if result is not None else 256
            self._results[handle.key] = handle
            self._result_bytes += size
            while self._result_bytes > self._result_cache_bytes and len(self._results) > 1:
                _, old = self._results.popitem(last=False)
                self._result_bytes -= len(old.result) if old.result is not None else 256

    def _remember(self, handle: JobHandle):
        self._by_id[handle.job_id] = handle
        while len(self._by_id) > 2000:
            self._by_id.popitem(last=False)

    # -- faults -----------------------------------------------------------------------------

    def _watch(self):
        while not self._closed:
            time.sleep(max(0.0005, min(0.25, self.job_timeout_s / 2)))
            with self._lock:
                workers = list(self._workers)
            for worker in workers:
                if not worker.is_alive():
                    self._replace(worker, f"the layout worker process died (exit code {worker.exitcode()})")
                elif worker.current and time.monotonic() - worker.current_since > self.job_timeout_s:
                    self._replace(worker, f"the job ran past the time limit of {self.job_timeout_s:g} s and was stopped")

    def _replace(self, worker: _Worker, reason: str):
        with self._lock:
            if worker not in self._workers:
                return
            culprit = worker.current
            orphans = list(worker.assigned.values())
            worker.stop()
            self._workers[self._workers.index(worker)] = _Worker(worker.index, self._on_message)
            self.restarted += 1
        logger.warning("graph_explorer: worker %d replaced: %s", worker.index, reason)
        for handle in orphans:
            if handle.job_id == culprit or culprit is None:
                self._finish(handle, error=JobFailed(500, f"{handle.task} failed: {reason}"), cache=False)
            else:
                self._readers.submit(self._dispatch, handle, True)
