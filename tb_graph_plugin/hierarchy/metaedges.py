"""Hierarchy phase 4: MetaEdges at the lowest common ancestor.

Follows the stock dashboard (``seeds/000``, "Adding edges"): each base edge is added to
the MetaEdge between the ancestors of its ends that are children of their lowest common
ancestor (LCA); a MetaEdge sums the tensor sizes of its base edges; groups remember
whether they hold a non-control edge; ``h.max_metaedge_size`` is the largest sum.

LCA queries are memoized per (parent group of src, parent group of dst) pair, so the cost
is O(E + P * depth) for P distinct parent pairs (most edges stay inside one group).

Pre-condition: the group tree is final (series made); previous metaedges are discarded.
Post-condition: every base edge id is in exactly one MetaEdge; a MetaEdge's ``src`` and
``dst`` are distinct direct children of the group holding it; ``size`` is the sum of its
base edges' ``edge_size``; ``n_control`` counts its control edges.
"""

from __future__ import annotations

from tb_graph_plugin.graph.model import EDGE_CONTROL, EDGE_REFERENCE
from tb_graph_plugin.hierarchy.model import Hierarchy, MetaEdge

__all__ = ["build_metaedges"]


def build_metaedges(h: Hierarchy) -> None:
    n = h.n_ops
    groups = h.groups
    parent = list(h.op_parent) + [g.parent for g in groups]
    level = [0] * (n + len(groups))
    for g in h.walk_groups():  # pre-order: parents first
        if g.parent >= 0:
            level[g.id] = level[g.parent] + 1
        g.metaedges = []
        g.has_non_control_edges = False
    for i in range(n):
        p = parent[i]
        if p >= 0:
            level[i] = level[p] + 1

    tables: list[dict] = [dict() for _ in groups]
    memo: dict[tuple[int, int], tuple[int, int, int]] = {}

    def lca(ps: int, pd: int) -> tuple[int, int, int]:
        # -> (lca group, child of lca holding ps or -1 if ps is lca, same for pd)
        a, b = ps, pd
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
    e_kind, e_size = slim.edge_kind, slim.edge_size
    biggest = 0
    for e, (s, d) in enumerate(zip(slim.edge_src, slim.edge_dst)):
        ps, pd = parent[s], parent[d]
        if ps == pd:
            owner, a, b = ps, s, d
        else:
            key = (ps, pd)
            hit = memo.get(key)
            if hit is None:
                hit = memo[key] = lca(ps, pd)
            owner, ca, cb = hit
            a = s if ca < 0 else ca
            b = d if cb < 0 else cb
        table = tables[owner - n]
        me = table.get((a, b))
        if me is None:
            me = table[(a, b)] = MetaEdge(a, b)
        me.base_edges.append(e)
        me.size += e_size[e]
        k = e_kind[e]
        if k == EDGE_CONTROL:
            me.n_control += 1
        elif k == EDGE_REFERENCE:
            me.n_reference += 1
    for g, table in zip(groups, tables):
        if table:
            g.metaedges = list(table.values())
            for me in g.metaedges:
                if me.size > biggest:
                    biggest = me.size
                if me.n_control != len(me.base_edges):
                    g.has_non_control_edges = True
    h.max_metaedge_size = biggest
