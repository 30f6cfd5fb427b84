"""Layering from the sinks: longest path, every node as late as possible, then sinks pulled up.

Follows [HCG-LAYOUT] ("最长路径算法... 把路径尽头对齐, 逆向路径来计算层级") and dagre
``rank/util.js:longestPath``: ``h(v) = 0`` for a sink, ``1 + max h(successor)`` otherwise, and
``layer(v) = H_c - h(v)`` with ``H_c`` the longest path of v's component, so every source sits
right below its nearest consumer (constants and variables next to their use). A sink with
predecessors is then moved up to ``1 + max layer(predecessor)`` (a tight edge instead of a
long one down to the last layer). Then a few greedy balancing passes (a cheap stand-in for
network simplex, [HCG-LAYOUT] "网络单纯形算法"): a node with more (weighted) in-edges than out-edges
moves down to ``1 + max layer(pred)``, one with more out-edges up to ``min layer(succ) - 1``,
which shortens the total edge length (fewer dummies, fewer crossings). Empty layers left
behind are squeezed out. On graphs with more edges than nodes the mirror image (longest path
from the sources, sources pulled down to their first consumer, same balancing) is computed
too and the one with the shorter weighted edge length kept: on deep graphs with many dead-end
branches the sink layering hangs each branch at the bottom (2.2M dummies instead of 13k on the
random 15k-node bench DAG).

Graphs with at most ``options.rank_lp_max_edges`` edges, and bigger ones where the heuristic
leaves more than ``rank_lp_dummy_ratio`` dummies per node, get the optimal layering instead
(what network simplex computes, [DOT93]): the LP ``min sum w_e (l_v - l_u)``
subject to ``l_v - l_u >= 1``, solved by HiGHS dual simplex ([HIGHS18], the ``highspy`` package);
its constraint matrix is totally unimodular, so the vertex solution is integral. A
solver failure or time-out keeps the longest-path layering; a layering whose edges all
span one layer is already optimal and skips the solver.

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


def _from_sinks(g: LayeredGraph) -> np.ndarray:
    """As late as possible, sinks with predecessors pulled up to them."""
    n = g.n_real
    h = longest_path_heights(n, g.src, g.dst)
    top = np.zeros(g.n_comp, dtype=np.int64)
    np.maximum.at(top, g.comp, h)
    layer = top[g.comp] - h
    if len(g.src):
        outdeg = np.bincount(g.src, minlength=n)
        pulled = np.full(n, -1, dtype=np.int64)
        np.maximum.at(pulled, g.dst, layer[g.src] + 1)
        sink = (outdeg == 0) & (pulled >= 0)
        layer[sink] = pulled[sink]
    return layer


def _from_sources(g: LayeredGraph) -> np.ndarray:
    """As early as possible, sources with successors pulled down to them."""
    n = g.n_real
    layer = longest_path_heights(n, g.dst, g.src)  # longest path from a source
    indeg = np.bincount(g.dst, minlength=n)
    big = np.iinfo(np.int64).max
    low = np.full(n, big)
    np.minimum.at(low, g.src, layer[g.dst] - 1)
    source = (indeg == 0) & (low < big)
    layer[source] = low[source]
    return layer


def _length(g: LayeredGraph, layer: np.ndarray) -> float:
    return float(((layer[g.dst] - layer[g.src]) * (g.weight + 1e-6)).sum())


def assign_layers(g: LayeredGraph) -> None:
    n = g.n_real
    layer = _balance(n, g.src, g.dst, g.weight, _from_sinks(g))
    if len(g.src) > n:  # many dead-end branches hang at the bottom of the sink layering:
        # the source layering is the better start there; keep the shorter one
        other = _balance(n, g.src, g.dst, g.weight, _from_sources(g))
        if _length(g, other) < _length(g, layer):
            layer = other
    o = g.options
    dummies = int((layer[g.dst] - layer[g.src] - 1).sum()) if len(g.src) else 0  # 0: already optimal
    if dummies and (len(g.src) <= o.rank_lp_max_edges or dummies > o.rank_lp_dummy_ratio * n):
        optimal = _optimal(n, g.src, g.dst, g.weight, o.rank_lp_time_limit_s)
        if optimal is not None:
            low = np.full(g.n_comp, np.iinfo(np.int64).max)
            np.minimum.at(low, g.comp, optimal)
            layer = optimal - low[g.comp]
    # squeeze out empty layers per component (a monotone renumbering keeps every edge valid)
    key = g.comp * (int(layer.max()) + 1) + layer
    uk, inv = np.unique(key, return_inverse=True)
    row_comp = uk // (int(layer.max()) + 1)
    first = np.searchsorted(row_comp, row_comp, side="left")
    g.layer = (np.arange(len(uk)) - first)[inv.ravel()]


def _optimal(n, src, dst, weight, time_limit: float):
    cost = np.bincount(dst, weight + 1e-3, minlength=n) - np.bincount(src, weight + 1e-3, minlength=n)
    x = _solve(cost, src, dst, n, time_limit)
    if x is None:
        return None
    layer = np.round(x).astype(np.int64)
    if np.any(layer[dst] - layer[src] < 1):
        return None
    return layer


def _csc(src, dst, n):
    """The constraint matrix in CSC form ``(start, index, value)``: column j (node j) has +1 in
    the rows of the edges leaving j and -1 in those entering j, rows ascending."""
    m = len(src)
    rows = np.concatenate([np.arange(m), np.arange(m)])
    cols = np.concatenate([src, dst])
    vals = np.concatenate([np.ones(m), -np.ones(m)])
    o = np.lexsort((rows, cols))
    start = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(cols, minlength=n), out=start[1:])
    return start, rows[o].astype(np.int32), vals[o]


def _solve(cost, src, dst, n, time_limit):
    """``min cost.l`` s.t. ``l_src - l_dst <= -1`` per edge, ``l >= 0``, by HiGHS dual simplex
    (the ``highspy`` package), or None when HiGHS fails or times out.

    Built and solved directly (the options of scipy's ``linprog(method="highs-ds")``): on the
    small groups most layouts are made of, ``linprog``'s input checks cost ~8x the solve. The
    class is ``highspy._Highs`` (exported in ``highspy.__all__``): its Python subclass
    ``highspy.Highs`` prints a banner to file descriptor 1 when constructed, before it can be
    silenced, which would corrupt ``tb-graph layout`` output on stdout.
    """
    import highspy

    m = len(src)
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = m
    lp.col_cost_ = cost.astype(float)
    lp.col_lower_ = np.zeros(n)
    lp.col_upper_ = np.full(n, highspy.kHighsInf)
    lp.row_lower_ = np.full(m, -highspy.kHighsInf)
    lp.row_upper_ = -np.ones(m)
    lp.a_matrix_.num_col_ = n
    lp.a_matrix_.num_row_ = m
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = _csc(src, dst, n)
    highs = highspy._Highs()
    for key, value in (("output_flag", False), ("presolve", "on"), ("solver", "simplex"),
                       ("simplex_strategy", 1), ("time_limit", float(time_limit))):  # 1: dual
        highs.setOptionValue(key, value)
    error = highspy.HighsStatus.kError
    if highs.passModel(lp) == error or highs.run() == error:
        return None
    if highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    return np.asarray(highs.getSolution().col_value)


def _balance(n, src, dst, weight, layer, passes: int = 4) -> np.ndarray:
    if len(src) == 0:
        return layer
    order = np.argsort(dst, kind="stable")
    pstart = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=pstart[1:])
    preds = src[order].tolist()
    order = np.argsort(src, kind="stable")
    sstart = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=sstart[1:])
    succs = dst[order].tolist()
    win = np.bincount(dst, weights=weight + 1e-6, minlength=n)
    wout = np.bincount(src, weights=weight + 1e-6, minlength=n)
    lay = layer.tolist()
    ps, ss = pstart.tolist(), sstart.tolist()
    down = (win > wout).tolist()
    up = (wout > win).tolist()
    visit = np.argsort(layer, kind="stable").tolist()
    for _ in range(passes):
        moved = 0
        for v in visit:
            if down[v] and ps[v] < ps[v + 1]:
                t = max(lay[u] for u in preds[ps[v]:ps[v + 1]]) + 1
                if t < lay[v]:
                    lay[v] = t
                    moved += 1
            elif up[v] and ss[v] < ss[v + 1]:
                t = min(lay[w] for w in succs[ss[v]:ss[v + 1]]) - 1
                if t > lay[v]:
                    lay[v] = t
                    moved += 1
        if not moved:
            break
    return np.array(lay, dtype=np.int64)
