"""Layering from the sinks: longest path, every node as late as possible, then sinks pulled up.

Follows the seed article (001, "最长路径算法... 把路径尽头对齐, 逆向路径来计算层级") and dagre
``rank/util.js:longestPath``: ``h(v) = 0`` for a sink, ``1 + max h(successor)`` otherwise, and
``layer(v) = H_c - h(v)`` with ``H_c`` the longest path of v's component, so every source sits
right below its nearest consumer (constants and variables next to their use). A sink with
predecessors is then moved up to ``1 + max layer(predecessor)`` (a tight edge instead of a
long one down to the last layer).

Pre: acyclic ``src``/``dst``; ``comp`` set. Post: ``layer[dst] > layer[src]`` for every edge;
every component's layers are exactly ``0..H_c`` with no empty layer.
"""

from __future__ import annotations

import numpy as np

from tb_graph_plugin.layout.fast.state import LayeredGraph

__all__ = ["assign_layers", "longest_path_heights"]


def longest_path_heights(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """``h(v)``: number of edges on the longest path from v to a sink (Kahn, reverse order)."""
    outdeg = np.bincount(src, minlength=n).tolist()
    order = np.argsort(dst, kind="stable")
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=starts[1:])
    preds = src[order].tolist()
    start = starts.tolist()
    h = [0] * n
    queue = [v for v in range(n) if outdeg[v] == 0]
    for v in queue:  # queue grows while iterating
        hv = h[v] + 1
        for i in range(start[v], start[v + 1]):
            u = preds[i]
            if h[u] < hv:
                h[u] = hv
            outdeg[u] -= 1
            if outdeg[u] == 0:
                queue.append(u)
    if len(queue) != n:
        raise ValueError("rank: graph is not acyclic")
    return np.array(h, dtype=np.int64)


def assign_layers(g: LayeredGraph) -> None:
    n = g.n_real
    h = longest_path_heights(n, g.src, g.dst)
    top = np.zeros(g.n_comp, dtype=np.int64)
    np.maximum.at(top, g.comp, h)
    layer = top[g.comp] - h
    # pull sinks with predecessors up to their highest predecessor
    if len(g.src):
        outdeg = np.bincount(g.src, minlength=n)
        pulled = np.full(n, -1, dtype=np.int64)
        np.maximum.at(pulled, g.dst, layer[g.src] + 1)
        sink = (outdeg == 0) & (pulled >= 0)
        layer[sink] = pulled[sink]
    g.layer = layer
