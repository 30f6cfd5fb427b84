"""Warm-up: build the graph a user will open first before anyone asks for it.

The slow part of opening a big graph is the first job on it (parse, SlimGraph, Hierarchy, top
level layout: seconds for a 50k-op training step). It is submitted as the ``scene`` job of
``Listing.default`` (its first view: the server opens the dominant groups, extraction on,
scopes inferred when useful) exactly as ``/scene`` without ``expanded`` would: the frontend's
first request then joins the running job or finds its result cached. Two triggers:

- ``start()``: TensorBoard serves the tab long after it started, so a daemon thread watches the
  listing through the data provider and, as soon as there is a default graph, warms it
  (``--graph_explorer_warmup``, default on) or, with the flag off, only starts the worker
  processes (nothing is built) and ends, as it does when they were started otherwise. A worker
  takes ~1 s to start and import on a busy machine, and a page that opens the tab at once asks
  for the first view ~0.7 s after its plugin listing, which used to start them: the 53k-op first
  view's server part was then 0.55 s, against 0.19 s with the workers started before (session 20).
- ``tab_opened()`` (always): the tab's page asked for its module (``/index.js``: TensorBoard
  loads it only into the iframe of the tab being opened), so the user is opening the tab now.
  The job starts while the page loads its module and the listing (~0.1-0.2 s before the page's
  own ``/scene``), not after. Nothing is built before a user opens the tab when the flag is off.

The same graph is not warmed twice while it stays the default.

Pre-condition: ``routes.submit`` builds job keys the same way for routes and warm-up.
Post-condition: failures are logged, never raised; the polling thread runs at most one warm-up
job at a time.
"""

from __future__ import annotations

import logging
import threading
from typing import Optional

from tensorboard import context as tb_context

from tb_graph_plugin import wire
from tb_graph_plugin.api.routes import Routes, scene_args
from tb_graph_plugin.api.workers import WorkerPool
from tb_graph_plugin.ingest import listing

__all__ = ["DEFAULT_POLL_S", "Warmup"]

logger = logging.getLogger(__name__)

DEFAULT_POLL_S = 5.0
_FIRST_POLL_S = 0.25
_EXPERIMENT_ID = ""  # the default experiment: what a plain `tensorboard --logdir` serves


class Warmup:
    """A daemon thread warming ``Listing.default`` (``build``), or only starting the worker
    processes once there is one (``pool``; unless something started them before); ``stop()`` ends it."""

    def __init__(self, routes: Routes, data_provider, poll_s: float = DEFAULT_POLL_S, build: bool = True,
                 pool: Optional[WorkerPool] = None):
        self._routes = routes
        self._provider = data_provider
        self._poll_s = poll_s
        self._build = build
        self._pool = pool
        self._stopped = threading.Event()
        self._warmed: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self.jobs: list = []  # handles submitted, newest last (for tests and logs)
        self._thread = threading.Thread(target=self._loop, name="graph_explorer_warmup", daemon=True)

    def start(self) -> Warmup:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()

    def _loop(self) -> None:
        while not self._stopped.is_set():
            try:
                if self._build:
                    self.poll()
                elif self.prestart_when_listed():
                    return
            except Exception:
                logger.exception("graph_explorer: warm-up failed")
            # Until the data provider lists a first graph, look often: TensorBoard loads event
            # files in the background after it starts serving.
            self._stopped.wait(self._poll_s if self._warmed else _FIRST_POLL_S)

    def poll(self) -> None:
        """Warm the current default graph once (waits for that job before returning)."""
        handle = self._submit_default(_EXPERIMENT_ID)
        if handle is not None:
            handle.wait(None)
            logger.info("graph_explorer: warmed %s (%s)", handle.key[0], handle.state.value)

    def prestart_when_listed(self) -> bool:
        """The flag off: whether the workers are started, starting them if there is a graph to
        show (a page's plugin listing or a request may have started them before)."""
        if self._pool is None or self._pool.workers():
            return True
        if self._default(tb_context.RequestContext(), _EXPERIMENT_ID) is None:
            return False
        self._pool.prestart()
        return True

    def tab_opened(self, experiment_id: str) -> None:
        """The tab's page is loading: submit its default graph's first view on a thread (the
        listing reads the data provider; the module's request must not wait for it)."""
        threading.Thread(target=self._submit_logged, args=(experiment_id,), name="graph_explorer_tab_opened",
                         daemon=True).start()

    def _submit_logged(self, experiment_id: str) -> None:
        try:
            self._submit_default(experiment_id)
        except Exception:
            logger.exception("graph_explorer: building the default graph on tab open failed")

    def _default(self, ctx, experiment_id: str):
        """The listing's default graph (``None`` while there is no graph to show)."""
        return listing.listing(self._provider, ctx, experiment_id).default

    def _submit_default(self, experiment_id: str):
        """Submit the default graph's first view unless it was warmed already; its handle."""
        ctx = tb_context.RequestContext()
        ref = self._default(ctx, experiment_id)
        if ref is None:
            return None
        key = (experiment_id, wire.to_json(ref))
        with self._lock:
            if key in self._warmed:
                return None
            self._warmed.add(key)
        handle = self._routes.submit(ctx, experiment_id, ref, "scene", scene_args(ref, [], first_view=True))
        self.jobs.append(handle)
        return handle
