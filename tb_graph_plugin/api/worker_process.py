"""The worker process: two lanes over the graphs it holds, and a heartbeat.

Started by ``workers.WorkerPool`` as ``python -m tb_graph_plugin.api.worker_process [PREFAULT_BYTES
[lean]]`` (the heap it touches while it waits for its first job: ``prefault``; ``lean``: it only
imports while it waits, see :func:`worker_main`); speaks pickles on stdin/stdout. Messages in:

- ``("job", lane, job_id, graph_key, blob, task, args, max_graphs)``: run ``tasks.TASKS[task]``
  on the graph ``graph_key``, building it from ``blob`` (``GraphState``) when not held.
  ``lane`` is ``"main"`` (builds, layouts: may take seconds) or ``"quick"`` (``search``,
  ``node`` on a graph already built here): each lane is one thread, so a quick job never waits
  for a build. A quick job whose graph is not held answers ``need_graph`` (the pool then sends
  it to the main lane with the graph).
- ``("ping", seq)``: answered at once ``("pong", seq, rss_bytes)`` by the reading thread,
  whatever the lanes do (a stopped or wedged process does not answer).
- ``("release",)``: the heap touched for a first build (``prefault``) is given back now.
- ``None`` or EOF: finish the jobs received, then return.

Messages out: ``("hello", rss_bytes)`` once ready; per job: ``("start", id)``, ``("progress", id, stage, fraction)``,
``("need_graph", id)`` (``("need_graph", id, "unshared")``: the graph came in shared memory it
could not map, ``worker_link.share``), then ``("done", id, json, rss_bytes)`` or ``("failed", id, http_code,
message, rss_bytes)``. Each stage, once reported, passes ``faults.check`` (test-only hook).

After a graph's first answer the main lane settles its build (``GraphState.settle``); the jobs
that reach it meanwhile wait, but for a scene the build can already answer
(``GraphState.answers_early``: the group built ahead opened), answered after that group is
built and between the steps of the whole build.

Pre-condition: layout never mutates a Hierarchy (STYLE rule 5) and search/node only read it,
so a quick job may read a graph while the main lane lays it out.
"""

from __future__ import annotations

import collections
import gc
import os
import pickle
import queue
import sys
import threading
import time
import traceback
from typing import Any, Callable, Optional

from tensorboard import errors

from tb_graph_plugin.api import faults, prefault, tasks
from tb_graph_plugin.cache import LruCache

__all__ = ["worker_main", "rss_bytes", "LANES"]

LANES = ("main", "quick")


def rss_bytes() -> int:
    """This process's resident set size (Linux ``/proc/self/statm``; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class _Graphs:
    """The built graphs, LRU by key (at most the ``max_graphs`` of the latest job), shared by the lanes."""

    def __init__(self):
        self._lock = threading.Lock()
        self._graphs: LruCache[Any, tasks.GraphState] = LruCache()

    def get(self, key):
        return self._graphs.get(key)

    def put(self, key, state, max_graphs: int) -> None:
        with self._lock:  # the bound comes with each job: set it and put as one step
            self._graphs.max_entries = max_graphs
            dropped = bool(self._graphs.put(key, state))  # the evicted states are not held on to
        if dropped:
            # Frozen objects are only freed by reference counting: collect any cycles of the
            # dropped graphs once, then freeze what is kept again.
            gc.unfreeze()
            gc.collect()
            gc.freeze()


class _Heap:
    """The heap an idle worker touched before its first job (``prefault``), given back after it
    or when the pool asks (``("release",)``: another worker's graph is past its memory share)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._touched: Optional[prefault.Prefault] = None
        self._given_back = False
        self.stop = threading.Event()  # set by a job's arrival or a release: the prefault stops

    def prefault(self, nbytes: int) -> None:
        touched = prefault.prefault(nbytes, self.stop)
        with self._lock:
            if not self._given_back:
                self._touched, touched = touched, None
        if touched is not None:  # a job ended or a release came meanwhile: nothing to keep it for
            touched.release()

    def give_back(self) -> None:
        """Drop the pins of the touched heap, and give back what is free (after every job:
        what the worker holds idle is its graphs)."""
        self.stop.set()
        with self._lock:
            self._given_back = True
            touched, self._touched = self._touched, None
        if touched is not None:
            touched.release()
        else:
            prefault.trim()


def _run_lane(lane: str, inbox: "queue.Queue", graphs: _Graphs, send: Callable[[Any], None],
              heap: Optional[_Heap] = None) -> None:
    waiting: "collections.deque" = collections.deque()  # taken from the inbox while a build settled
    while True:
        message = waiting.popleft() if waiting else inbox.get()
        if message is None:
            return
        built = _run_job(lane, message, graphs, send)
        # The job's payload (the graph's encoding: 150 MB at 1M ops) is not kept while the lane
        # waits for its next job: the built graph holds what it needs (its nodes' encodings).
        message = None
        if built is not None:  # the first answer has gone out: the rest of the build
            try:
                built.settle(lambda linger=0.0: _serve_early(lane, built, inbox, waiting, graphs, send, linger))
            except Exception:  # noqa: BLE001 - a later info-pane click does it again, or fails itself
                traceback.print_exc()
        if heap is not None:
            heap.give_back()


def _serve_early(lane: str, state: "tasks.GraphState", inbox: "queue.Queue", waiting: "collections.deque",
                 graphs: _Graphs, send: Callable[[Any], None], linger: float = 0.0) -> None:
    """While ``state``'s build settles: answer the jobs come meanwhile that it can answer already
    (``GraphState.answers_early``: opening the group built ahead); keep the others, in order, for
    after. ``linger``: seconds to wait for such jobs while no job needs more (none kept, none
    waiting on the quick lane: ``Settling.whole_wanted``)."""
    end = time.monotonic() + linger
    while True:
        try:
            message = inbox.get_nowait()
        except queue.Empty:
            left = end - time.monotonic()
            if left <= 0 or waiting or state.settling.whole_wanted.is_set():
                return
            try:  # a short wait: the quick lane's need is an event, not a message
                message = inbox.get(timeout=min(left, 0.02))
            except queue.Empty:
                continue
        if message is not None:
            _, _, _, graph_key, _, task, args, _ = message
            if graphs.get(graph_key) is state and state.answers_early(task, args):
                _run_job(lane, message, graphs, send)
                continue
        waiting.append(message)


def _run_job(lane: str, message: tuple, graphs: _Graphs, send: Callable[[Any], None]) -> Optional["tasks.GraphState"]:
    """Run one job and send its answer; the GraphState it built, if it built one."""
    _, _, job_id, graph_key, blob, task, args, max_graphs = message
    send(("start", job_id))

    def progress(stage: str, fraction: float, job_id=job_id, graph_key=graph_key) -> None:
        send(("progress", job_id, stage, fraction))
        faults.check(stage, graph_key)

    built = None
    try:
        state = graphs.get(graph_key)
        if state is None:
            if blob is None or lane != "main":
                send(("need_graph", job_id))
                return None
            if blob["graph"] is None:  # sent in shared memory this process could not map
                send(("need_graph", job_id, "unshared"))
                return None
            state = built = tasks.GraphState(blob, progress)
            graphs.put(graph_key, state, max_graphs)
        send(("done", job_id, tasks.TASKS[task](state, args, progress), rss_bytes()))
    except errors.PublicError as e:
        send(("failed", job_id, e.http_code, str(e), rss_bytes()))
    except Exception as e:  # noqa: BLE001 - any bug becomes a readable 500 for this job only
        traceback.print_exc()
        send(("failed", job_id, 500, f"{task} failed: {type(e).__name__}: {e}", rss_bytes()))
    return built


def worker_main(receive: Callable[[], Any], send: Callable[[Any], None], prefault_bytes: int = 0,
                lean: bool = False) -> None:
    """The worker loop: route jobs to their lane, answer pings; ends on EOF or None once both
    lanes are done with what they received. While no job has come, the worker prepares for its
    first one on a thread: the imports of a build and its first view (``tasks.preload``), the
    fast layout engine's imports (``tasks.LATE_IMPORTS``), then ``prefault_bytes`` of heap
    touched (``prefault``). A ``lean`` worker (not the one a first job goes to:
    ``workers.WorkerPool``) stops after the first imports: the rest would take a core from the
    page being loaded while the first job is on its way."""
    send_lock = threading.Lock()

    def locked_send(message) -> None:
        with send_lock:
            send(message)

    graphs = _Graphs()
    heap = _Heap()
    inboxes = {lane: queue.Queue() for lane in LANES}
    threads = [threading.Thread(target=_run_lane, args=(lane, inboxes[lane], graphs, locked_send,
                                                        heap if lane == "main" else None),
                                name=f"lane_{lane}", daemon=True) for lane in LANES]
    for t in threads:
        t.start()
    locked_send(("hello", rss_bytes()))  # imports done, no graph yet: the pool's memory baseline
    # The imports of a build and its first view while no job is here yet (a job arriving
    # meanwhile waits on the import lock, no longer than it would have anyway); then, unless a
    # job has come or the worker is lean, the fast layout engine's (``tasks.LATE_IMPORTS``; else
    # the job's ``GraphState.settle`` imports them once its answer has gone out); after each, the
    # baseline again, with them, unless a job has started to build a graph meanwhile; then the
    # heap touched for the first build, a block at a time until a job comes (that memory counts
    # as the graphs' share).
    got_job = threading.Event()

    def hello_unless_job() -> None:
        if not got_job.is_set():
            locked_send(("hello", rss_bytes()))

    def preload() -> None:
        tasks.preload()
        hello_unless_job()
        if lean:
            return
        if not got_job.is_set():  # else the job's ``settle`` imports them after its answer
            tasks.preload_late()
            hello_unless_job()
        if prefault_bytes > 0 and not got_job.is_set():
            heap.prefault(prefault_bytes)

    threading.Thread(target=preload, name="preload", daemon=True).start()
    try:
        while True:
            try:
                message = receive()
            except EOFError:
                return
            if message is None:
                return
            if message[0] == "ping":
                locked_send(("pong", message[1], rss_bytes()))
            elif message[0] == "release":
                heap.give_back()
            else:
                got_job.set()
                heap.stop.set()
                inboxes[message[1] if message[1] in inboxes else "main"].put(message)
    finally:
        for lane in LANES:
            inboxes[lane].put(None)
        for t in threads:
            t.join()


SWITCH_INTERVAL_S = 0.001
"""The worker's GIL switch interval (Python's default is 0.005 s). The main thread reads a job's
graph from the pipe a read at a time and takes the GIL back after each; while a lane builds or
the imports run, each take waited for the switch interval (a 1M-op graph's 165 MB, in 1 MiB reads:
~1 s at 5 ms, ~0.3 s at 1 ms; ``bench/bench_hand_off.py``; such a graph now comes in shared memory
where the system has it, ``worker_link.share``). A lone thread never switches."""


def _stdio_main() -> None:
    """Entry point of a worker process: pickles in on stdin, out on the real stdout.

    Anything a library prints goes to stderr, so it cannot corrupt the protocol.
    """
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    protocol_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    protocol_in = sys.stdin.buffer

    def send(message: Any) -> None:
        pickle.dump(message, protocol_out, protocol=pickle.HIGHEST_PROTOCOL)
        protocol_out.flush()

    worker_main(lambda: pickle.load(protocol_in), send, int(sys.argv[1]) if len(sys.argv) > 1 else 0,
                lean=sys.argv[2:3] == ["lean"])


if __name__ == "__main__":
    _stdio_main()
