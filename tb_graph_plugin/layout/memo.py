"""Structural memo: graphs identical up to node ids get one layout, computed once.

[VAST] (§4.1, task T2) asks that topologically identical subgraphs look the same; in
models they are everywhere (ResNet blocks, transformer layers, per-variable optimizer
updates), so the memo both keeps them identical and skips their re-layout. The key is the
node sizes and edges by node position (ids dropped) plus the options; results are kept by
position and copied out under the caller's ids. Graphs above ``MAX_NODES`` are not memoised.

A :class:`LayoutMemo` is owned by whoever lays out many related graphs (a scene's
:class:`~tb_graph_plugin.layout.scene.cache.LayoutCache`, a bench) and passed to
:func:`tb_graph_plugin.layout.layout`; there is no module-level memo.

Post: a hit returns a result equal to what a fresh layout of the same graph would give
(every engine is deterministic); callers never share mutable lists.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tb_graph_plugin.cache import CacheStats, LruCache
from tb_graph_plugin.layout.model import LayoutGraph, LayoutOptions, LayoutResult

__all__ = ["LayoutMemo", "MAX_NODES", "MAX_ENTRIES"]

MAX_NODES = 3000
MAX_ENTRIES = 4096


def _key(graph: LayoutGraph, options: LayoutOptions):
    index = {n.id: i for i, n in enumerate(graph.nodes)}
    sizes = tuple((n.width, n.height) for n in graph.nodes)
    edges = tuple((index[e.source], index[e.target], e.weight) for e in graph.edges)
    return (options, sizes, edges)


class LayoutMemo:
    """Layouts by structure, in an :class:`~tb_graph_plugin.cache.LruCache` of ``max_entries``."""

    def __init__(self, max_entries: int = MAX_ENTRIES):
        self.cache: LruCache = LruCache(max_entries=max_entries)

    @property
    def stats(self) -> CacheStats:
        return self.cache.stats

    def layout(self, graph: LayoutGraph, options: LayoutOptions, run: Callable[[], LayoutResult]) -> LayoutResult:
        """``run()``'s result for ``graph``, or the stored layout of a graph of the same structure."""
        if not options.memoize or len(graph.nodes) > MAX_NODES:
            return run()
        key = _key(graph, options)
        got = self.cache.get(key)
        if got is None:
            result = run()
            ids = [n.id for n in graph.nodes]
            lens = [len(pts) for pts in result.edge_points]
            flat = np.array([q for pts in result.edge_points for q in pts], dtype=float).reshape(-1, 2)
            self.cache.put(key, ([result.positions[i] for i in ids], flat, np.cumsum([0] + lens).tolist(),
                                 result.width, result.height, result.engine_used))
            return result
        positions, flat, bounds, width, height, engine = got
        ids = [n.id for n in graph.nodes]
        pts = flat.tolist()  # fresh lists for every caller
        return LayoutResult(
            positions=dict(zip(ids, positions)),
            sizes={n.id: (n.width, n.height) for n in graph.nodes},
            edge_points=[pts[bounds[k]:bounds[k + 1]] for k in range(len(bounds) - 1)],
            width=width, height=height, engine_used=engine, timings={"memo_hit": 1.0},
        )
