"""Run graph work (SlimGraph, Hierarchy, layout) in worker processes, never on a request thread.

Follows [HELIOS-IPC] (docs/references.md): the process that serves the UI never computes a layout;
workers (``worker_process``) do, and report progress as they go.

- ``WorkerPool.submit(key, task, args, graph_key, load_graph)`` returns a ``JobHandle`` at once. A
  second submit with the same ``key`` while the first runs joins it (same handle); a finished result
  (or failure) stays cached under its key (LRU by size) so it is answered at once.
- Jobs wait in a queue per worker, here in the serving process (so they can move): a job goes to the
  worker that already holds its graph, else to the least busy one, which is then sent the serialized
  GraphDef (read by ``load_graph`` on a thread of the serving process).
- Two lanes per worker: ``main`` (graph builds, layouts) and ``quick`` (``search``, ``node`` on a
  graph the worker has built): a quick job never waits behind a build.

Faults (a crash, a wedge or a leak in a worker must never take the UI down), checked by a watchdog
thread every 0.25 s:

- A worker that dies: replaced; each job it was running is retried once, first in line on the fresh
  worker; a job whose worker dies a second time fails with a 500 naming the stage that was running
  and the exit codes, is cached as failed (no crash loop), and when the stage was part of building
  the graph (``parse``, ``slim_graph``, ``hierarchy``), every later job on that graph fails at once
  with the same message.
- A worker that does not answer its heartbeat (a ping every ``HEARTBEAT_EVERY_S``) for
  ``heartbeat_timeout_s`` while it runs no long job (a build or layout may hold the GIL in C for a
  while; those are bounded by the stage budgets): replaced as if it had died.
- A job that runs one stage past its budget (``stage_budgets_s``) or runs past ``job_timeout_s`` in
  all: its worker is replaced and the job fails with a 500 saying so (not retried: the same input
  would take as long again); the next request retries.
- In every replacement the jobs queued on the worker move to the other workers, and the pool keeps
  serving.
- A worker whose resident memory grew by more than ``worker_graph_bytes`` over its size at start
  (imports done) while it holds more than one graph is drained after its job: no new jobs, its
  queue moves, and it is replaced once idle, which returns its memory to the system (freed Python
  objects often do not). One graph bigger than the share alone stays (it is the one in use); new
  graphs go to a worker within its share while one is idle. See "Memory" in BENCHMARKS.md.
- The first worker (a first job goes there while it is idle; ``prepared_workers`` says how many)
  prepares for its first job while it waits: the fast layout engine's imports, and
  ``prefault_bytes`` of heap touched (``prefault``: a cold build's page faults taken while idle),
  given back after that job, or as soon as another worker's graph is past its share. The others
  only import: the pool often starts while TensorBoard's page loads, and their preparation took a
  core from that page (session 20: our iframe came 0.2 s later at 53k ops).
- With ``read_heap_bytes``, the thread that reads graphs in this process touches that much heap when
  the workers start (``prefault.warm_read_heap``): a first graph's blob (up to ~32 MB) is read
  into touched pages, not fresh ones (53k ops: the read 20 -> 4 ms).

Post-condition: every handle reaches ``done`` or ``failed``; nothing here blocks the caller of
``submit`` for more than a lock.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent import futures
from typing import Callable, Hashable, Optional

from tensorboard import errors

from tb_graph_plugin.api import prefault, worker_link
from tb_graph_plugin.api.jobs import BUILD_STAGES, DEFAULT_STAGE_BUDGETS_S, QUICK_TASKS, JobFailed, JobHandle, result_size
from tb_graph_plugin.api.worker_link import WorkerLink
from tb_graph_plugin.cache import LruCache

__all__ = ["WorkerPool", "JobHandle", "JobFailed", "QUICK_TASKS", "BUILD_STAGES"]

logger = logging.getLogger(__name__)

DEFAULT_WORKERS = 2
DEFAULT_JOB_TIMEOUT_S = 300.0
DEFAULT_RESULT_CACHE_BYTES = 256 << 20
HEARTBEAT_EVERY_S = 0.5
DEFAULT_HEARTBEAT_TIMEOUT_S = 3.0
_MAX_ATTEMPTS = 2  # a job is run at most twice: once, and once more if its worker died
_POISONED_KEPT = 256
_JOBS_KEPT = 2000  # job handles answerable by id (``/job``), oldest forgotten first


def _release_shared(handle: JobHandle) -> None:
    """Close the shared memory ``handle``'s graph was sent in (the worker has its own mapping by
    then, or never will: it died)."""
    shared, handle.shared = handle.shared, None
    if shared is not None:
        shared.close()


class WorkerPool:
    def __init__(
        self,
        n_workers: int = DEFAULT_WORKERS,
        job_timeout_s: float = DEFAULT_JOB_TIMEOUT_S,
        result_cache_bytes: int = DEFAULT_RESULT_CACHE_BYTES,
        max_graphs_per_worker: int = 6,
        stage_budgets_s: Optional[dict] = None,
        heartbeat_timeout_s: float = DEFAULT_HEARTBEAT_TIMEOUT_S,
        worker_graph_bytes: Optional[int] = None,
        prefault_bytes: int = 0,
        prepared_workers: int = 1,
        read_heap_bytes: int = 0,
    ):
        self.n_workers = n_workers
        self.job_timeout_s = job_timeout_s
        self.max_graphs_per_worker = max_graphs_per_worker
        self.stage_budgets_s = dict(DEFAULT_STAGE_BUDGETS_S, **(stage_budgets_s or {}))
        self.heartbeat_timeout_s = heartbeat_timeout_s
        self.worker_graph_bytes = worker_graph_bytes
        self.prefault_bytes = prefault_bytes  # each prepared worker touches this much heap while idle (``prefault``)
        self.prepared_workers = prepared_workers  # the first ones prepare for their first job; the rest only import
        self.read_heap_bytes = read_heap_bytes  # touched on the reader thread when the workers start (``warm_read_heap``)
        self.read_heap_warmed: Optional[futures.Future] = None
        self.share_graphs = True  # big graphs go in shared memory (``worker_link.share``) until a worker cannot map one
        self._lock = threading.RLock()
        self._workers: list[WorkerLink] = []
        self._running: dict[Hashable, JobHandle] = {}
        self._by_id: LruCache[str, JobHandle] = LruCache(max_entries=_JOBS_KEPT)
        # finished jobs by key, LRU by result size (a result over the whole budget is kept alone)
        self._results: LruCache[Hashable, JobHandle] = LruCache(
            max_size=result_cache_bytes, size_of=result_size, keep_oversized=True)
        self._poisoned: LruCache[Hashable, JobFailed] = LruCache(max_entries=_POISONED_KEPT)
        self._readers = futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="graph_read")
        self.restarted = 0
        self.retried = 0  # jobs run again after their worker died
        self._watchdog = threading.Thread(target=self._watch, daemon=True)
        self._closed = False

    # -- public -----------------------------------------------------------------------------

    def submit(self, key: Hashable, task: str, args: dict, graph_key: Hashable,
               load_graph: Callable[[], bytes]) -> JobHandle:
        with self._lock:
            cached = self._results.get(key)
            if cached is not None:
                return cached
            running = self._running.get(key)
            if running is not None:
                return running
            handle = JobHandle(key, task, args, graph_key, load_graph)
            self._remember(handle)
            poison = self._poisoned.get(graph_key)
            if poison is not None:  # building this graph killed two workers: do not try again
                handle._finish(error=poison)
                return handle
            self._running[key] = handle
            self._start_workers()
            self._place(handle)
        return handle

    def prestart(self) -> None:
        """Start the worker processes now (non-blocking), so that the first graph request does
        not wait for a worker's start-up (~0.1-1 s of imports on a busy machine)."""
        with self._lock:
            if not self._closed:
                self._start_workers()

    def job(self, job_id: str) -> JobHandle:
        with self._lock:
            handle = self._by_id.get(job_id)
        if handle is None:
            raise errors.NotFoundError(f"unknown job {job_id!r} (finished jobs are forgotten after a while)")
        return handle

    def workers(self) -> list:
        """The current worker processes' pids (for tests and benches)."""
        with self._lock:
            return [w.process.pid for w in self._workers]

    def close(self):
        self._closed = True
        with self._lock:
            workers, self._workers = self._workers, []
        for w in workers:
            w.stop()
        self._readers.shutdown(wait=False, cancel_futures=True)

    # -- placing and sending (callers hold self._lock) -----------------------------------------

    def _start_workers(self):
        if not self._workers:
            self._workers = [self._link(i) for i in range(self.n_workers)]
            if self.read_heap_bytes and self.read_heap_warmed is None:
                # the reader thread (idle until a first job's read) touches the heap that read will use
                self.read_heap_warmed = self._readers.submit(prefault.warm_read_heap, self.read_heap_bytes)
            if not self._watchdog.is_alive():
                self._watchdog.start()

    def _link(self, index: int) -> WorkerLink:
        """Worker ``index``, started: the first ``prepared_workers`` (by default the first worker, where
        a first job goes while it is idle: ``_place``) prepare for their first job while they wait; the
        others only import (``worker_process.worker_main``)."""
        prepared = index < self.prepared_workers
        return WorkerLink(index, self._on_message, self.max_graphs_per_worker,
                          self.prefault_bytes if prepared else 0, lean=not prepared)

    def _place(self, handle: JobHandle, worker: Optional[WorkerLink] = None, first: bool = False):
        """Queue ``handle`` on ``worker`` (default: one holding its graph, else the least busy)."""
        if worker is None:
            open_ = [w for w in self._workers if not w.draining] or self._workers
            holders = [w for w in open_ if handle.graph_key in w.graphs]
            # a new graph goes to a worker within its memory share while one is free
            roomy = [w for w in open_ if not self._over_share(w) and w.load() == 0]
            worker = min(holders or roomy or open_, key=WorkerLink.load)
        handle.set_stage("queued")
        if first:
            worker.queue.appendleft(handle)
        else:
            worker.queue.append(handle)
        self._pump(worker)

    def _pump(self, worker: WorkerLink):
        """Start what can start on ``worker``'s free lanes: a quick job on a built graph goes to
        the quick lane; anything else, in queue order, to the main lane."""
        if not worker.alive:
            return
        while worker.lanes["quick"] is None:
            handle = next((h for h in worker.queue if h.task in QUICK_TASKS and not h.force_graph
                           and h.graph_key in worker.built), None)
            if handle is None:
                break
            worker.queue.remove(handle)
            self._start(worker, "quick", handle)
        while worker.lanes["main"] is None and worker.queue:
            self._start(worker, "main", worker.queue.popleft())

    def _start(self, worker: WorkerLink, lane: str, handle: JobHandle):
        poison = self._poisoned.get(handle.graph_key)
        if poison is not None:  # queued before its graph killed two workers
            self._finish(handle, error=poison)
            return
        worker.lanes[lane] = handle
        handle.sent = False
        needs_graph = handle.force_graph or handle.graph_key not in worker.graphs
        handle.force_graph = False
        handle.started = time.monotonic()
        # Count the graph on this worker now, before the (slow) read, so later requests for
        # the same graph follow it here.
        for dropped, _ in worker.graphs.put(handle.graph_key, None):
            worker.built.discard(dropped)
        self._readers.submit(self._send, worker, lane, handle, needs_graph)

    def _send(self, worker: WorkerLink, lane: str, handle: JobHandle, needs_graph: bool):
        """On a reader thread: read the graph if the worker lacks it, then send the job."""
        try:
            blob = None
            _release_shared(handle)  # a send before this one, to a worker that died
            if needs_graph:
                handle.set_stage("read")
                handle.progress = max(handle.progress, 0.05)
                blob = handle.load_graph()
                shared = worker_link.share(blob.get("graph")) if self.share_graphs else None
                if shared is not None:
                    handle.shared, blob = shared, dict(blob, graph=shared)
            worker.send(("job", lane, handle.job_id, handle.graph_key, blob, handle.task, handle.args,
                         self.max_graphs_per_worker))
            with self._lock:
                handle.sent = True
                if handle.stage in ("queued", "read"):  # until the worker reports its first stage
                    handle.set_stage("sent")
        except errors.PublicError as e:
            self._lane_done(worker, handle, drop_graph=True)
            self._finish(handle, error=JobFailed(e.http_code, str(e)))
        except (OSError, ValueError) as e:  # the worker's pipe closed: the watchdog replaces it
            logger.info("graph_explorer: sending job %s to worker %d failed: %s", handle.job_id, worker.index, e)
        except Exception as e:  # noqa: BLE001 - reported to the client, logged here
            logger.exception("graph_explorer: reading graph for job %s failed", handle.job_id)
            self._lane_done(worker, handle, drop_graph=True)
            self._finish(handle, error=JobFailed(500, f"reading the graph failed: {type(e).__name__}: {e}"))

    def _lane_done(self, worker: WorkerLink, handle: JobHandle, drop_graph: bool = False):
        with self._lock:
            lane = worker.lane_of(handle.job_id)
            if lane is None:
                return
            worker.lanes[lane] = None
            if drop_graph:
                worker.graphs.pop(handle.graph_key, None)
                worker.built.discard(handle.graph_key)
            self._after_job(worker)

    def _over_share(self, worker: WorkerLink) -> bool:
        grown = worker.rss - worker.base_rss
        return bool(self.worker_graph_bytes) and worker.answered and grown > self.worker_graph_bytes

    def _after_job(self, worker: WorkerLink):
        """Drain ``worker`` when it is over its memory share and holds more than one graph.

        A worker over its share with one graph keeps it: that graph alone is bigger than the
        share (a 1M-op graph takes ~2 GB), recycling would only make the next request on it
        build it again, and ``_place`` sends other graphs to other workers while one is free.
        """
        grown = worker.rss - worker.base_rss
        if self._over_share(worker):
            self._release_prefaults(worker)
        if self._over_share(worker) and len(worker.graphs) > 1 and not worker.draining:
            worker.draining = True  # too big: take no new work, hand its queue to the others
            logger.info("graph_explorer: worker %d grew by %d MB, over its %d MB: recycled when idle",
                        worker.index, grown >> 20, self.worker_graph_bytes >> 20)
            moved = list(worker.queue)
            worker.queue.clear()
            for handle in moved:
                self._place(handle)
        if worker.draining and worker.load() == 0 and len(self._workers) > 0:
            self._readers.submit(self._replace, worker, None)
            return
        self._pump(worker)

    def _release_prefaults(self, over: WorkerLink) -> None:
        """``over`` holds more than its share: the heap the other workers touched for their
        first build (``prefault``) goes back to the system (once each)."""
        for other in self._workers:
            if other is not over and other.holds_prefault and other.alive:
                other.holds_prefault = False
                # off the pool's lock: a graph being sent to ``other`` holds its pipe meanwhile
                self._readers.submit(self._send_quietly, other, ("release",))

    @staticmethod
    def _send_quietly(worker: WorkerLink, message) -> None:
        try:
            worker.send(message)
        except (OSError, ValueError):
            pass  # a dead worker: the watchdog replaces it

    # -- messages from workers ------------------------------------------------------------

    def _on_message(self, worker: WorkerLink, message):
        kind = message[0]
        if kind in ("pong", "hello"):
            if kind == "hello":
                worker.base_rss = message[1]
            worker.last_pong, worker.rss, worker.answered = time.monotonic(), message[-1], True
            return
        job_id = message[1]
        with self._lock:
            lane = worker.lane_of(job_id)
            handle = worker.lanes[lane] if lane else None
        if handle is None:
            return
        _release_shared(handle)  # any message on the job comes after the worker unpickled it
        if kind == "start":
            handle.started = time.monotonic()
        elif kind == "progress":
            with self._lock:
                handle.set_stage(message[2])
                handle.progress = max(handle.progress, float(message[3]))
        elif kind == "need_graph":
            if message[2:] == ("unshared",) and self.share_graphs:
                self.share_graphs = False
                logger.warning("graph_explorer: a worker could not map a graph in shared memory; "
                               "graphs go through its pipe from now on")
            with self._lock:
                worker.lanes[lane] = None
                worker.graphs.pop(handle.graph_key, None)
                worker.built.discard(handle.graph_key)
                handle.force_graph = True
                self._place(handle, worker, first=True)
                self._pump(worker)
        elif kind in ("done", "failed"):
            with self._lock:
                worker.rss = message[-1]
                worker.lanes[lane] = None
                if lane == "main":  # the worker gives its prefault back after a main-lane job
                    worker.holds_prefault = False
                if kind == "done":
                    worker.built.add(handle.graph_key)
            if kind == "done":
                self._finish(handle, result=message[2])
            else:
                self._finish(handle, error=JobFailed(message[2], message[3]))
            with self._lock:
                self._after_job(worker)

    def _finish(self, handle: JobHandle, result=None, error=None, cache=True):
        _release_shared(handle)
        handle._finish(result, error)
        with self._lock:
            self._running.pop(handle.key, None)
            if not cache:  # a transient failure (time limit): the next request retries
                return
            self._results.put(handle.key, handle)

    def _remember(self, handle: JobHandle):
        self._by_id.put(handle.job_id, handle)

    # -- faults -----------------------------------------------------------------------------

    def _watch(self):
        last_ping = 0.0
        while not self._closed:
            time.sleep(max(0.0005, min(0.25, self.job_timeout_s / 2)))
            now = time.monotonic()
            with self._lock:
                workers = list(self._workers)
            ping = now - last_ping >= HEARTBEAT_EVERY_S
            if ping:
                last_ping = now
            for worker in workers:
                if not worker.is_alive():
                    worker.drain_output()  # what it said before dying (its last stage) counts
                    self._replace(worker, "died", worker.exitcode())
                    continue
                overdue = self._overdue(worker, now)
                if overdue is not None:
                    self._replace(worker, "overdue", overdue)
                    continue
                main = worker.lanes["main"]
                long_job = main is not None and main.task not in QUICK_TASKS
                if not long_job and worker.silent_for(now, self.heartbeat_timeout_s):
                    self._replace(worker, "silent", None)
                    continue
                if ping:
                    try:
                        worker.send(("ping", int(now * 1000)))
                    except (OSError, ValueError):
                        pass  # its pipe closed: it is dead, seen on the next round

    def _overdue(self, worker: WorkerLink, now: float):
        """(handle, why) for a job past its stage budget or the job time limit, else None."""
        for handle in list(worker.lanes.values()):
            if handle is None or not handle.sent:  # a slow read here is not the worker's fault
                continue
            if now - handle.started > self.job_timeout_s:
                return handle, f"the job ran past the time limit of {self.job_timeout_s:g} s and was stopped"
            budget = self.stage_budgets_s.get(handle.stage)
            if budget is not None and budget < self.job_timeout_s and now - handle.stage_since > budget:
                return handle, (f"stage {handle.stage!r} ran past its budget of {budget:g} s; "
                                "the worker was stopped")
        return None

    def _replace(self, worker: WorkerLink, cause: Optional[str], detail=None):
        """Stop ``worker``, start a fresh one in its place, and settle its jobs.

        ``cause``: ``died`` (detail = exit code), ``silent`` (no heartbeat), ``overdue``
        (detail = (handle, message)), or None (a drained worker recycled: it holds no jobs).
        """
        with self._lock:
            if worker not in self._workers:
                return
            running = [h for h in worker.lanes.values() if h is not None]
            queued = list(worker.queue)
            worker.queue.clear()
            worker.stop()
            fresh = self._link(worker.index)
            self._workers[self._workers.index(worker)] = fresh
            self.restarted += 1
        if cause is not None:
            logger.warning("graph_explorer: worker %d replaced (%s %s)", worker.index, cause, detail)
        culprit, overdue_message = detail if cause == "overdue" else (None, None)
        for handle in running:
            if handle is culprit:
                self._finish(handle, error=JobFailed(500, f"{handle.task} failed: {overdue_message}"), cache=False)
            elif cause in ("died", "silent") and handle.sent:
                self._worker_died(handle, fresh, "the worker process died" if cause == "died" else
                                  "the worker process stopped answering", detail)
            else:  # innocent of the replacement (the other lane, or still being read here)
                with self._lock:
                    handle.force_graph = True
                    self._place(handle, fresh, first=True)
        with self._lock:
            for handle in queued:
                self._place(handle)

    def _worker_died(self, handle: JobHandle, fresh: WorkerLink, what: str, exit_code):
        """Retry ``handle`` once, first on ``fresh``; the second death fails it for good."""
        handle.deaths.append((handle.stage, exit_code))
        if len(handle.deaths) < _MAX_ATTEMPTS:
            self.retried += 1
            logger.warning("graph_explorer: %s job %s: %s in stage %r (exit code %s); retrying once",
                           handle.task, handle.job_id, what, handle.stage, exit_code)
            with self._lock:
                handle.force_graph = True
                self._place(handle, fresh, first=True)
            return
        stages = sorted({s for s, _ in handle.deaths})
        codes = ", then ".join(str(c) for _, c in handle.deaths)
        message = (f"{handle.task} failed: {what} in stage {handle.stage!r} (exit codes {codes}), "
                   f"on {len(handle.deaths)} workers in a row (stages {', '.join(stages)}); not retried again")
        error = JobFailed(500, message)
        if handle.stage in BUILD_STAGES:
            with self._lock:
                self._poisoned.put(handle.graph_key, error)
        self._finish(handle, error=error)
