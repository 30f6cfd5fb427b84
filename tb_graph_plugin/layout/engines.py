"""Engine strategy: :class:`~tb_graph_plugin.layout.model.Engine` names one, :func:`create` builds it.

- ``DOT``: :mod:`~tb_graph_plugin.layout.dot` (fewest crossings, can blow up on big flat groups).
- ``FAST``: :mod:`~tb_graph_plugin.layout.fast` (numpy, linear-ish, always finishes).
- ``AUTO``: the cheap :func:`guard` (node count, dummy count of the longest-path layering)
  sends a graph to FAST before dot can blow up; otherwise dot, and a dot time-out or failure
  falls back to FAST; on graphs of at most ``auto_best_of_max_nodes`` nodes both run and the
  drawing with fewer crossings wins (ties: dot). ``LayoutResult.engine_used`` says which one
  produced the result.
"""

from __future__ import annotations

import logging
from typing import Protocol

import numpy as np

from tb_graph_plugin.layout import fast
from tb_graph_plugin.layout.crossings import count_result_crossings
from tb_graph_plugin.layout.fast.acyclic import remove_cycles
from tb_graph_plugin.layout.fast.rank import longest_path_heights
from tb_graph_plugin.layout.fast.state import build
from tb_graph_plugin.layout.geometry import finish, self_loop
from tb_graph_plugin.layout.model import Engine, LayoutGraph, LayoutOptions, LayoutResult

__all__ = ["LayoutEngine", "create", "guard", "dummy_count"]

log = logging.getLogger(__name__)


class LayoutEngine(Protocol):
    def run(self, graph: LayoutGraph, options: LayoutOptions) -> LayoutResult: ...


class FastEngine:
    def run(self, graph: LayoutGraph, options: LayoutOptions) -> LayoutResult:
        from tb_graph_plugin.layout.fast.frame import to_frame

        g, timings = fast.run(graph, options)
        n, m = len(graph.nodes), len(graph.edges)
        nx, ny = np.zeros(n), np.zeros(n)
        w = np.array([node.width for node in graph.nodes], dtype=float)
        h = np.array([node.height for node in graph.nodes], dtype=float)
        px = py = np.zeros(0)
        ptr = np.zeros(1, dtype=np.int64)
        if g.n_real:
            nx, ny, px, py = to_frame(g)
            ptr = g.ptr
        # bounding box of boxes and points -> origin
        x0 = min(float((nx - w / 2).min()) if n else 0.0, float(px.min()) if len(px) else np.inf)
        y0 = min(float((ny - h / 2).min()) if n else 0.0, float(py.min()) if len(py) else np.inf)
        nx, ny, px, py = nx - x0, ny - y0, px - x0, py - y0
        ids = [node.id for node in graph.nodes]
        positions = dict(zip(ids, zip(nx.tolist(), ny.tolist())))
        sizes = dict(zip(ids, zip(w.tolist(), h.tolist())))
        flat = np.stack([px, py], axis=1).tolist()
        bounds = ptr.tolist()
        edge_points = [None] * m
        for k, i in enumerate(g.edge_index.tolist() if g.n_real else []):
            edge_points[i] = flat[bounds[k]:bounds[k + 1]]
        loops = False
        for i, e in enumerate(graph.edges):
            if edge_points[i] is None:  # self-loops
                edge_points[i] = self_loop(*positions[e.source], *sizes[e.source])
                loops = True
        if loops:
            width, height = finish(positions, sizes, edge_points)
        else:
            width = max(float((nx + w / 2).max()) if n else 0.0, float(px.max()) if len(px) else 0.0)
            height = max(float((ny + h / 2).max()) if n else 0.0, float(py.max()) if len(py) else 0.0)
        return LayoutResult(positions, sizes, edge_points, width, height, Engine.FAST, timings=timings)


class DotEngine:
    def run(self, graph: LayoutGraph, options: LayoutOptions) -> LayoutResult:
        from tb_graph_plugin.layout.dot import run_dot

        return run_dot(graph, options)


def dummy_count(graph: LayoutGraph, options: LayoutOptions) -> int:
    """Dummy nodes the longest-path layering would need (after DFS cycle breaking)."""
    g = build(graph, options)
    if g.n_real == 0 or len(g.src) == 0:
        return 0
    remove_cycles(g)
    h = longest_path_heights(g.n_real, g.src, g.dst)
    return int(np.maximum(h[g.src] - h[g.dst] - 1, 0).sum())


def guard(graph: LayoutGraph, options: LayoutOptions) -> Engine:
    """The engine AUTO tries first: DOT when the graph is small enough for dot, else FAST."""
    if len(graph.nodes) > options.dot_max_nodes:
        return Engine.FAST
    if dummy_count(graph, options) > options.dot_max_dummies:
        return Engine.FAST
    return Engine.DOT


class AutoEngine:
    def run(self, graph: LayoutGraph, options: LayoutOptions) -> LayoutResult:
        from tb_graph_plugin.layout.dot import DotError, DotTimeout

        if guard(graph, options) is Engine.DOT:
            try:
                result = DotEngine().run(graph, options)
            except (DotTimeout, DotError) as exc:
                log.info("dot gave up (%s); falling back to the fast path", exc)
            else:
                if len(graph.nodes) > options.auto_best_of_max_nodes or len(graph.edges) < 2:
                    return result
                theirs = count_result_crossings(result, options.rankdir)
                if theirs == 0:
                    return result
                other = FastEngine().run(graph, options)
                ours = count_result_crossings(other, options.rankdir)
                return other if ours < theirs else result
        return FastEngine().run(graph, options)


_ENGINES = {Engine.DOT: DotEngine, Engine.FAST: FastEngine, Engine.AUTO: AutoEngine}


def create(engine: Engine) -> LayoutEngine:
    return _ENGINES[Engine(engine)]()
