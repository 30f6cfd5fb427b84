"""Layered graph layout, usable on its own: Python API in, coordinates out.

>>> from tb_graph_plugin.layout import LayoutGraph, LayoutNode, LayoutEdge, LayoutOptions, Engine, layout
>>> g = LayoutGraph([LayoutNode("a", 30, 10), LayoutNode("b", 30, 10)], [LayoutEdge("a", "b")])
>>> r = layout(g, LayoutOptions(engine=Engine.FAST))
>>> r.positions["a"][1] > r.positions["b"][1]   # rankdir BT: the edge points upward
True

Engines (:class:`Engine`, also the factory): Graphviz ``dot`` in a worker process with a time
limit, our ``fast`` numpy layered path (pipeline list in :mod:`tb_graph_plugin.layout.fast`),
and ``auto`` (a cheap guard picks, a dot time-out falls back to fast). Crossings of any
result are counted by :mod:`tb_graph_plugin.layout.crossings`, the same for every engine.
Graphs identical up to node ids are laid out once when the caller passes a
:class:`~tb_graph_plugin.layout.memo.LayoutMemo` (:mod:`tb_graph_plugin.layout.memo`).
"""

from __future__ import annotations

import time
from typing import Optional

from tb_graph_plugin.layout import engines
from tb_graph_plugin.layout.crossings import count_result_crossings
from tb_graph_plugin.layout.geometry import against_rank
from tb_graph_plugin.layout.memo import LayoutMemo
from tb_graph_plugin.layout.model import (
    Engine,
    LayoutEdge,
    LayoutGraph,
    LayoutNode,
    LayoutOptions,
    LayoutResult,
    RankDir,
)

__all__ = [
    "Engine",
    "RankDir",
    "LayoutNode",
    "LayoutEdge",
    "LayoutGraph",
    "LayoutOptions",
    "LayoutResult",
    "LayoutMemo",
    "layout",
]


def layout(graph: LayoutGraph, options: LayoutOptions = LayoutOptions(), memo: Optional[LayoutMemo] = None) -> LayoutResult:
    """Lay out ``graph`` (never mutated) with ``options.engine``; through ``memo`` when given
    (and ``options.memoize``)."""
    t = time.perf_counter()
    run = lambda: engines.create(options.engine).run(graph, options)  # noqa: E731
    result = run() if memo is None else memo.layout(graph, options, run)
    result.reversed = against_rank(graph.edges, result.positions, options.rankdir)
    result.timings["total"] = time.perf_counter() - t
    if options.count_crossings:
        result.crossings = count_result_crossings(result, options.rankdir)
    return result
