"""The Graphviz dot engine, through pygraphviz, in a worker process with a time limit.

Writes the graph as DOT (node sizes in inches, ``rankdir`` from the options, ``nodesep`` /
``ranksep`` in inches, edges without arrowheads so splines end on the node borders), runs
``dot`` in a reusable worker process (``_dot_worker.py``) that is killed when the time limit
passes (:class:`DotTimeout`), reads back node centres and edge B-splines and turns them into
polylines in pixels with y growing downwards (1 pt = 1 px).

Post: the :mod:`~tb_graph_plugin.layout.geometry` post-conditions (ends on borders, bbox at 0).
"""

from __future__ import annotations

import json
import os
import select
import struct
import subprocess
import sys
import threading
import time
from typing import Optional

from tb_graph_plugin.layout.geometry import attach_ends, finish, self_loop
from tb_graph_plugin.layout.model import Engine, LayoutGraph, LayoutOptions, LayoutResult

__all__ = ["DotTimeout", "DotError", "to_dot_source", "run_dot", "parse_spline", "prestart"]

_WORKER = os.path.join(os.path.dirname(__file__), "_dot_worker.py")
_PPI = 72.0


class DotTimeout(RuntimeError):
    """dot did not finish within ``options.dot_timeout_s``."""


class DotError(RuntimeError):
    """dot failed (bad input, worker crash)."""


def _inch(px: float) -> str:
    return f"{max(px, 0.01) / _PPI:.5f}"


def to_dot_source(graph: LayoutGraph, options: LayoutOptions) -> str:
    """DOT text for ``graph``; node i is ``n<i>``, kept edge j has ``id=e<j>`` (j = input index)."""
    out = [
        "digraph G {",
        f" graph [rankdir={options.rankdir.value}, nodesep={max(options.nodesep / _PPI, 0.02):.4f}, "
        f"ranksep={max(options.ranksep / _PPI, 0.02):.4f}, splines=spline];",
        ' node [shape=box, fixedsize=true, label=""];',
        " edge [dir=none];",
    ]
    index = {}
    for i, n in enumerate(graph.nodes):
        index[n.id] = i
        out.append(f" n{i} [width={_inch(n.width)}, height={_inch(n.height)}];")
    for j, e in enumerate(graph.edges):
        if e.source == e.target:
            continue
        out.append(f" n{index[e.source]} -> n{index[e.target]} [id=e{j}, weight={max(1, int(round(e.weight)))}];")
    out.append("}")
    return "\n".join(out)


def parse_spline(pos: str, samples: int = 4) -> list[tuple[float, float]]:
    """Graphviz edge ``pos`` (B-spline control points, optional ``s,``/``e,`` ends) -> polyline."""
    first = pos.split(";")[0]
    ctrl = []
    for tok in first.split():
        if tok.startswith(("s,", "e,")):
            continue
        x, y = tok.split(",")[:2]
        ctrl.append((float(x), float(y)))
    if len(ctrl) < 4:
        return ctrl
    pts = [ctrl[0]]
    for k in range(0, len(ctrl) - 3, 3):
        p0, p1, p2, p3 = ctrl[k:k + 4]
        for s in range(1, samples):
            t = s / samples
            a, b, c, d = (1 - t) ** 3, 3 * t * (1 - t) ** 2, 3 * t * t * (1 - t), t ** 3
            pts.append((a * p0[0] + b * p1[0] + c * p2[0] + d * p3[0], a * p0[1] + b * p1[1] + c * p2[1] + d * p3[1]))
        pts.append(p3)
    return pts


class _Worker:
    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, _WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def _read(self, k: int, deadline: Optional[float]) -> bytes:
        fd = self.proc.stdout.fileno()
        buf = b""
        while len(buf) < k:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    raise DotTimeout("dot time limit passed")
            chunk = os.read(fd, k - len(buf))
            if not chunk:
                raise DotError("dot worker died")
            buf += chunk
        return buf

    def call(self, src: str, timeout: Optional[float]) -> dict:
        data = src.encode("utf-8")
        self.proc.stdin.write(struct.pack(">Q", len(data)) + data)
        self.proc.stdin.flush()
        deadline = None if timeout is None else time.monotonic() + timeout
        size = struct.unpack(">Q", self._read(8, deadline))[0]
        return json.loads(self._read(size, deadline))


_idle: list[_Worker] = []
_lock = threading.Lock()


def _call_worker(src: str, timeout: Optional[float]) -> dict:
    with _lock:
        while _idle and not _idle[-1].alive():
            _idle.pop()
        worker = _idle.pop() if _idle else None
    if worker is None:
        worker = _Worker()
    try:
        answer = worker.call(src, timeout)
    except BaseException:
        worker.kill()  # abandon: it may still be computing
        raise
    with _lock:
        _idle.append(worker)
    return answer


def prestart() -> None:
    """Start one dot worker now, so the first layout does not wait for it: the worker imports
    pygraphviz and runs Graphviz's first layout on a graph of its own (``_dot_worker.WARM_UP``)
    while it waits."""
    with _lock:
        if any(w.alive() for w in _idle):
            return
        _idle.append(_Worker())


def _call_in_process(src: str) -> dict:
    from tb_graph_plugin.layout import _dot_worker

    return _dot_worker._answer(src)


def run_dot(graph: LayoutGraph, options: LayoutOptions) -> LayoutResult:
    t0 = time.perf_counter()
    src = to_dot_source(graph, options)
    if options.dot_timeout_s is None:
        answer = _call_in_process(src)
    else:
        answer = _call_worker(src, options.dot_timeout_s)
    if "error" in answer:
        raise DotError(answer["error"])
    t1 = time.perf_counter()
    top = answer["bb"][3]
    positions, sizes, boxes = {}, {}, {}
    for i, n in enumerate(graph.nodes):
        x, y = answer["nodes"][f"n{i}"]
        positions[n.id] = (x, top - y)
        sizes[n.id] = (n.width, n.height)
        boxes[n.id] = (x, top - y, n.width, n.height)
    edge_points = []
    for j, e in enumerate(graph.edges):
        s, t = boxes[e.source], boxes[e.target]
        if e.source == e.target:
            edge_points.append(self_loop(*s))
            continue
        pts = [(x, top - y) for x, y in parse_spline(answer["edges"][f"e{j}"])]
        d_first = (pts[0][0] - s[0]) ** 2 + (pts[0][1] - s[1]) ** 2
        d_last = (pts[-1][0] - s[0]) ** 2 + (pts[-1][1] - s[1]) ** 2
        if d_last < d_first:
            pts.reverse()
        edge_points.append(attach_ends(pts, s, t))
    width, height = finish(positions, sizes, edge_points)
    return LayoutResult(positions, sizes, edge_points, width, height, Engine.DOT,
                        timings={"dot": t1 - t0, "read_back": time.perf_counter() - t1})
