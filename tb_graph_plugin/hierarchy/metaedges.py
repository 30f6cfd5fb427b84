"""Hierarchy phase 4: MetaEdges at the lowest common ancestor.

Follows the stock dashboard ([TB-GRAPH-DOC] "Adding edges"): each base edge is added to
the MetaEdge between the ancestors of its ends that are children of their lowest common
ancestor (LCA); a MetaEdge sums the tensor sizes of its base edges; groups remember
whether they hold a non-control edge; ``h.max_metaedge_size`` is the largest sum.

LCA queries are answered once per distinct (parent group of src, parent group of dst) pair,
so the cost is O(E log E + P * depth) for P such pairs (most edges stay inside one group);
the per-edge work (parents, bundling by (src child, dst child), sums) is numpy.

Pre-condition: the group tree is final (series made); previous metaedges are discarded.
Post-condition: every base edge id is in exactly one MetaEdge; a MetaEdge's ``src`` and
``dst`` are distinct direct children of the group holding it; ``size`` is the sum of its
base edges' ``edge_size``; ``n_control`` counts its control edges.
"""

from __future__ import annotations

import numpy as np

from tb_graph_plugin.wire import EdgeKindCode
from tb_graph_plugin.hierarchy.model import Hierarchy, MetaEdge

__all__ = ["build_metaedges"]


def build_metaedges(h: Hierarchy) -> None:
    n = h.n_ops
    groups = h.groups
    total = n + len(groups)
    parent = list(h.op_parent) + [g.parent for g in groups]
    level = [0] * total
    for g in h.walk_groups():  # pre-order: parents first
        if g.parent >= 0:
            level[g.id] = level[g.parent] + 1
        g.metaedges = []
        g.has_non_control_edges = False
    for i in range(n):
        p = parent[i]
        if p >= 0:
            level[i] = level[p] + 1

    def lca(a: int, b: int) -> tuple[int, int, int]:
        # -> (lca group, child of lca holding a or -1 if a is lca, same for b)
        ca = cb = -1
        while level[a] > level[b]:
            ca, a = a, parent[a]
        while level[b] > level[a]:
            cb, b = b, parent[b]
        while a != b:
            ca, a = a, parent[a]
            cb, b = b, parent[b]
        return a, ca, cb

    slim = h.slim
    h.max_metaedge_size = 0
    if not slim.n_edges:
        return
    src = np.asarray(slim.edge_src, dtype=np.int64)
    dst = np.asarray(slim.edge_dst, dtype=np.int64)
    par = np.asarray(parent, dtype=np.int64)
    ps, pd = par[src], par[dst]
    a, b = src.copy(), dst.copy()  # the ends' ancestors that are children of the LCA
    cross = np.flatnonzero(ps != pd)
    if len(cross):
        pairs, inv = np.unique(ps[cross] * total + pd[cross], return_inverse=True)
        found = np.array([lca(p // total, p % total) for p in pairs.tolist()],
                         dtype=np.int64).reshape(-1, 3)[inv.reshape(-1)]
        a[cross] = np.where(found[:, 1] < 0, src[cross], found[:, 1])
        b[cross] = np.where(found[:, 2] < 0, dst[cross], found[:, 2])
    # One MetaEdge per (a, b), in order of first appearance; base edges in edge order.
    keys, first, inv = np.unique(a * total + b, return_index=True, return_inverse=True)
    by_appearance = np.argsort(first)
    rank = np.empty_like(by_appearance)
    rank[by_appearance] = np.arange(len(keys))
    rank_of = rank[inv.reshape(-1)]
    members = np.argsort(rank_of, kind="stable")
    counts = np.bincount(rank_of, minlength=len(keys))
    ends = np.cumsum(counts)
    starts = ends - counts
    sizes = np.add.reduceat(np.asarray(slim.edge_size, dtype=np.int64)[members], starts)
    kind = np.asarray(slim.edge_kind, dtype=np.int64)
    n_control = np.bincount(rank_of[kind == EdgeKindCode.CONTROL], minlength=len(keys))
    n_reference = np.bincount(rank_of[kind == EdgeKindCode.REFERENCE], minlength=len(keys))
    heads = first[by_appearance]
    owners = par[a[heads]]
    edge_ids = members.tolist()
    for g_id, x, y, lo, hi, size, nc, nr in zip(
        (owners - n).tolist(), a[heads].tolist(), b[heads].tolist(), starts.tolist(),
        ends.tolist(), sizes.tolist(), n_control.tolist(), n_reference.tolist()
    ):
        g = groups[g_id]
        g.metaedges.append(MetaEdge(x, y, edge_ids[lo:hi], size, nc, nr))
        if nc != hi - lo:
            g.has_non_control_edges = True
    h.max_metaedge_size = int(sizes.max())
