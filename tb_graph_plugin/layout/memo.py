"""Structural memo: graphs identical up to node ids get one layout, computed once.

[VAST] (§4.1, task T2) asks that topologically identical subgraphs look the same; in
models they are everywhere (ResNet blocks, transformer layers, per-variable optimizer
updates), so the memo both keeps them identical and skips their re-layout. The key is the
node sizes and edges by node position (ids dropped) plus the options; results are kept by
position and copied out under the caller's ids. Graphs above ``MAX_NODES`` are not memoised.

Post: a hit returns a result equal to what a fresh layout of the same graph would give
(every engine is deterministic); callers never share mutable lists.
"""

from __future__ import annotations

import collections
import threading
from typing import Callable, Optional

import numpy as np

from tb_graph_plugin.layout.model import LayoutGraph, LayoutOptions, LayoutResult

__all__ = ["memoized", "clear", "stats", "MAX_NODES"]

MAX_NODES = 3000
MAX_ENTRIES = 4096
_data: collections.OrderedDict = collections.OrderedDict()
_lock = threading.Lock()
_stats = {"hits": 0, "misses": 0}


def _key(graph: LayoutGraph, options: LayoutOptions):
    index = {n.id: i for i, n in enumerate(graph.nodes)}
    sizes = tuple((n.width, n.height) for n in graph.nodes)
    edges = tuple((index[e.source], index[e.target], e.weight) for e in graph.edges)
    return (options, sizes, edges)


def memoized(graph: LayoutGraph, options: LayoutOptions, run: Callable[[], LayoutResult]) -> LayoutResult:
    if not options.memoize or len(graph.nodes) > MAX_NODES:
        return run()
    key = _key(graph, options)
    with _lock:
        got: Optional[tuple] = _data.get(key)
        if got is not None:
            _data.move_to_end(key)
            _stats["hits"] += 1
    if got is None:
        result = run()
        ids = [n.id for n in graph.nodes]
        lens = [len(pts) for pts in result.edge_points]
        flat = np.array([q for pts in result.edge_points for q in pts], dtype=float).reshape(-1, 2)
        stored = ([result.positions[i] for i in ids], flat, np.cumsum([0] + lens).tolist(),
                  result.width, result.height, result.engine_used)
        with _lock:
            _stats["misses"] += 1
            _data[key] = stored
            while len(_data) > MAX_ENTRIES:
                _data.popitem(last=False)
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


def clear() -> None:
    with _lock:
        _data.clear()
        _stats["hits"] = _stats["misses"] = 0


def stats() -> dict:
    with _lock:
        return dict(_stats, entries=len(_data))
