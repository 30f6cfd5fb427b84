"""A job as the serving process sees it: ``JobHandle`` (state, stage, progress, then result or
error) and ``JobFailed`` (a failure with the HTTP status its cause maps to). Made by
``workers.WorkerPool.submit``; answered by the routes (``/job``, and every graph route).
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Hashable, Optional

from tensorboard import errors

from tb_graph_plugin import wire

__all__ = ["JobHandle", "JobFailed", "result_size", "QUICK_TASKS", "BUILD_STAGES", "DEFAULT_STAGE_BUDGETS_S"]

QUICK_TASKS = frozenset({"search", "node", "node_data"})
BUILD_STAGES = ("parse", "slim_graph", "first_view_hierarchy", "hierarchy")
# Per-stage budgets in seconds (each also capped by the job time limit). A 1M-op graph parses
# in ~1 s, builds its SlimGraph + Hierarchy in ~10 s on the slow 2-core machine; search has its
# own 1 s walk budget; node details are a lookup.
# "sent": from sending a job to the worker's first word on it (it starts a job at once).
DEFAULT_STAGE_BUDGETS_S = {"sent": 30.0, "parse": 60.0, "slim_graph": 120.0, "first_view_hierarchy": 240.0,
                           "hierarchy": 240.0,
                           "search": 10.0, "node": 10.0, "node_data": 10.0,
                           "cost": 120.0}  # every op's cost, once per graph (graph.cost: ~10-20 us an op)


def result_size(handle: "JobHandle") -> int:
    return len(handle.result) if handle.result is not None else 256


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
        self.stage_since = time.monotonic()
        self.progress = 0.0
        self.result: Optional[str] = None
        self.error: Optional[JobFailed] = None
        self.started = time.monotonic()  # when a worker last started it
        self.deaths: list[tuple[str, object]] = []  # (stage, exit code) per worker that died running it
        self.force_graph = False  # send the graph with the job even if the worker should hold it
        self.sent = False  # the worker it was last started on has been sent it
        self.shared = None  # the ``worker_link.SharedBlob`` its graph was last sent in, until the worker took it
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

    def set_stage(self, stage: str) -> None:
        if stage != self.stage:
            self.stage, self.stage_since = stage, time.monotonic()

    def _finish(self, result: Optional[str] = None, error: Optional[JobFailed] = None):
        self.result, self.error = result, error
        self.state = wire.JobState.FAILED if error else wire.JobState.DONE
        self.stage = "failed" if error else "done"
        self.progress = 1.0
        self.done.set()
