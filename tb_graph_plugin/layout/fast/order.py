"""Crossing reduction: layer-by-layer barycenter sweeps, then adjacent transposition.

Follows [HCG-LAYOUT] ("层内排序": weights from the positions of the neighbours in
the previous layer, alternating downward and upward sweeps, then a local heuristic that
swaps neighbours while that removes crossings) and dagre ``order/`` (keep the best order
seen, stop when sweeps stop helping). Barycenters are computed for a whole layer at once
with ``numpy.bincount``; transposition is pure Python and only runs on graphs of at most
``options.transpose_max_nodes`` nodes (dummies included).

Pre: unit edges only (``normalize``), ``comp`` and ``layer`` set. Post: ``pos`` is, for each
layer, a permutation ``0..len(layer)-1``; nodes of one component are contiguous in every
layer and components appear in id order; the number of bilayer crossings is never more
than that of the initial order (component, node index).
"""

from __future__ import annotations

import numpy as np

from tb_graph_plugin.layout.crossings import count_inversions
from tb_graph_plugin.layout.fast.state import LayeredGraph

__all__ = ["order_layers", "bilayer_crossings"]


def bilayer_crossings(layer: np.ndarray, pos: np.ndarray, usrc: np.ndarray, udst: np.ndarray) -> int:
    """Crossings of the unit edges between consecutive layers under ordering ``pos``."""
    if len(usrc) < 2:
        return 0
    lu, pu, pv = layer[usrc], pos[usrc], pos[udst]
    o = np.lexsort((pv, pu, lu))
    big = np.int64(pos.max() + 2)
    return count_inversions(lu[o].astype(np.int64) * big + pv[o].astype(np.int64))


class _Sweeper:
    def __init__(self, g: LayeredGraph):
        self.g = g
        n = g.n
        self.n_layers = int(g.layer.max()) + 1 if n else 0
        by_layer = np.argsort(g.layer, kind="stable")
        counts = np.bincount(g.layer, minlength=self.n_layers)
        bounds = np.concatenate([[0], np.cumsum(counts)])
        self.members = [by_layer[bounds[i]:bounds[i + 1]] for i in range(self.n_layers)]
        local = np.empty(n, dtype=np.int64)
        for mem in self.members:
            local[mem] = np.arange(len(mem))
        # edges grouped by the layer of their lower end (down sweep) and upper end (up sweep)
        self.down = self._group(g.udst, g.usrc, local)
        self.up = self._group(g.usrc, g.udst, local)

    def _group(self, at: np.ndarray, other: np.ndarray, local: np.ndarray):
        g = self.g
        la = g.layer[at]
        o = np.argsort(la, kind="stable")
        counts = np.bincount(la, minlength=self.n_layers)
        bounds = np.concatenate([[0], np.cumsum(counts)])
        out = []
        for i in range(self.n_layers):
            sl = o[bounds[i]:bounds[i + 1]]
            out.append((local[at[sl]], other[sl], g.uweight[sl] + 1e-9))
        return out

    def sweep(self, pos: np.ndarray, downward: bool) -> None:
        g = self.g
        layers = range(1, self.n_layers) if downward else range(self.n_layers - 2, -1, -1)
        groups = self.down if downward else self.up
        for li in layers:
            mem = self.members[li]
            k = len(mem)
            if k < 2:
                continue
            loc, other, w = groups[li]
            cur = pos[mem].astype(float)
            if len(loc):
                num = np.bincount(loc, weights=w * pos[other], minlength=k)
                den = np.bincount(loc, weights=w, minlength=k)
                bary = np.where(den > 0, num / np.where(den > 0, den, 1.0), cur)
            else:
                bary = cur
            perm = np.lexsort((cur, bary, g.comp[mem]))
            pos[mem[perm]] = np.arange(k)


def _transpose(g: LayeredGraph, pos: np.ndarray, members: list, max_passes: int = 4) -> None:
    n = g.n
    preds = [[] for _ in range(n)]
    succs = [[] for _ in range(n)]
    for u, v in zip(g.usrc.tolist(), g.udst.tolist()):
        succs[u].append(v)
        preds[v].append(u)
    comp = g.comp.tolist()
    p = pos.tolist()

    def cross(a, b, nbrs):  # crossings among edges of a and b when a is left of b
        pa = sorted(p[x] for x in nbrs[a])
        pb = sorted(p[x] for x in nbrs[b])
        if not pa or not pb:
            return 0
        c, j = 0, 0
        # count pairs (i in pa, j in pb) with i > j
        for x in pa:
            while j < len(pb) and pb[j] < x:
                j += 1
            c += j
        return c

    rows = [sorted(m.tolist(), key=p.__getitem__) for m in members]
    for _ in range(max_passes):
        improved = False
        for row in rows:
            for i in range(len(row) - 1):
                a, b = row[i], row[i + 1]
                if comp[a] != comp[b]:
                    continue
                before = cross(a, b, preds) + cross(a, b, succs)
                if before == 0:
                    continue
                after = cross(b, a, preds) + cross(b, a, succs)
                if after < before:
                    row[i], row[i + 1] = b, a
                    p[a], p[b] = p[b], p[a]
                    improved = True
        if not improved:
            break
    pos[:] = p


def order_layers(g: LayeredGraph) -> None:
    n = g.n
    sw = _Sweeper(g)
    pos = np.zeros(n, dtype=np.int64)
    for mem in sw.members:  # initial order: component, then node index
        perm = np.lexsort((mem, g.comp[mem]))
        pos[mem[perm]] = np.arange(len(mem))
    best, best_c = pos.copy(), bilayer_crossings(g.layer, pos, g.usrc, g.udst)
    stale = 0
    for i in range(g.options.order_sweeps):
        if best_c == 0:
            break
        sw.sweep(pos, downward=(i % 2 == 0))
        c = bilayer_crossings(g.layer, pos, g.usrc, g.udst)
        if c < best_c:
            best, best_c, stale = pos.copy(), c, 0
        else:
            stale += 1
            if stale >= 3:
                break
    pos = best
    if best_c and n <= g.options.transpose_max_nodes:
        _transpose(g, pos, sw.members)
    g.pos = pos
