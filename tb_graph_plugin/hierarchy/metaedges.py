"""Hierarchy phase 4: MetaEdges at the lowest common ancestor.

Follows the stock dashboard ([TB-GRAPH-DOC] "Adding edges"): each base edge is added to
the MetaEdge between the ancestors of its ends that are children of their lowest common
ancestor (LCA); a MetaEdge sums the tensor sizes of its base edges; groups remember
whether they hold a non-control edge; ``h.max_metaedge_size`` is the largest sum.

LCA queries are answered once per distinct (parent group of src, parent group of dst) pair,
all pairs climbing the group tree together (numpy, one pass per level), so the cost is
O(E log E + P * depth) for P such pairs (most edges stay inside one group); the per-edge work
(parents, bundling by (src child, dst child), sums) is numpy, and the MetaEdges are handed to
their groups by one stable sort on the owner, as rows of a ``MetaEdgeTable``: a group's MetaEdge
objects are made when its ``metaedges`` are first read (a shown group's, a series' candidates').

Pre-condition: the group tree is final (series made); previous metaedges are discarded.
Post-condition: every base edge id is in exactly one MetaEdge; a MetaEdge's ``src`` and
``dst`` are distinct direct children of the group holding it; ``size`` is the sum of its
base edges' ``edge_size``; ``n_control`` counts its control edges; ``h.metaedge_table`` holds
the same MetaEdges as columns, group after group (until a phase changes a group's metaedges).
"""

from __future__ import annotations

import numpy as np

from tb_graph_plugin.wire import EdgeKindCode
from tb_graph_plugin.hierarchy.dataflow import edge_arrays
from tb_graph_plugin.hierarchy.model import Hierarchy, MetaEdgeTable
from tb_graph_plugin.hierarchy.placement import lca_children
from tb_graph_plugin.hierarchy.tree import group_levels, group_parents

__all__ = ["build_metaedges"]


def build_metaedges(h: Hierarchy) -> None:
    n = h.n_ops
    groups = h.groups
    total = n + len(groups)
    group_parent = group_parents(h)  # ids - n; negative for the root
    level = group_levels(group_parent)
    for g in groups:
        g.metaedges = []
        g.has_non_control_edges = False
    slim = h.slim
    h.max_metaedge_size = 0
    if not slim.n_edges:
        return
    src, dst = edge_arrays(h)
    par = np.concatenate([np.asarray(h.op_parent, dtype=np.int64), group_parent + n])
    ps, pd = par[src], par[dst]
    a, b = src.copy(), dst.copy()  # the ends' ancestors that are children of the LCA
    cross = np.flatnonzero(ps != pd)
    if len(cross):
        pairs, inv = np.unique(ps[cross] * total + pd[cross], return_inverse=True)
        ca, cb = lca_children(pairs // total - n, pairs % total - n, group_parent, level)
        inv = inv.reshape(-1)
        ca, cb = ca[inv], cb[inv]
        a[cross] = np.where(ca < 0, src[cross], ca + n)
        b[cross] = np.where(cb < 0, dst[cross], cb + n)
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
    owners = par[a[heads]] - n
    # Each owner's metaedges, in order of first appearance: a stable sort by owner, sliced.
    by_owner = np.argsort(owners, kind="stable")
    owner_ids, owner_starts = np.unique(owners[by_owner], return_index=True)
    kind_of = np.where(n_control == counts, EdgeKindCode.CONTROL,
                       np.where(n_reference > 0, EdgeKindCode.REFERENCE, EdgeKindCode.DATA))
    # the base edges of the rows in owner order: each row's members, rows laid end to end
    row_counts = counts[by_owner]
    base_start = np.concatenate([[0], np.cumsum(row_counts)])
    take = np.repeat(starts[by_owner] - base_start[:-1], row_counts) + np.arange(int(base_start[-1]))
    table = MetaEdgeTable(a[heads][by_owner], b[heads][by_owner], kind_of[by_owner], sizes[by_owner],
                          n_control[by_owner], n_reference[by_owner], members[take], base_start, {})
    for g_id, lo, hi in zip(owner_ids.tolist(), owner_starts.tolist(), owner_starts[1:].tolist() + [len(keys)]):
        table.rows[g_id + n] = (lo, hi)
        groups[g_id].set_metaedge_rows(table, lo, hi)
    for g_id in np.unique(owners[n_control != counts]).tolist():
        groups[g_id].has_non_control_edges = True
    h.max_metaedge_size = int(sizes.max())
    h.metaedge_table = table
