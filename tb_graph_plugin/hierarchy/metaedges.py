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
Post-condition: every base edge id is in exactly one MetaEdge (in a first view's partial build,
``h.grouped_only`` set: every base edge whose LCA is one of those groups; the other groups have
none, and ``max_metaedge_size`` is over those only; in an expand-ahead build, ``within``
given: the base edges whose LCA lies in that subtree are placed again, the MetaEdges of the
groups outside it are kept as they were); a MetaEdge's ``src`` and
``dst`` are distinct direct children of the group holding it; ``size`` is the sum of its
base edges' ``edge_size``; ``n_control`` counts its control edges; ``h.metaedge_table`` holds
the same MetaEdges as columns, group after group (until a phase changes a group's metaedges).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from tb_graph_plugin.wire import EdgeKindCode
from tb_graph_plugin.hierarchy.dataflow import edge_arrays
from tb_graph_plugin.hierarchy.model import Hierarchy, MetaEdgeTable
from tb_graph_plugin.hierarchy.placement import lca_child_ends
from tb_graph_plugin.hierarchy.tree import ChildrenArrays, group_levels, group_parents, node_parents

__all__ = ["build_metaedges"]


def build_metaedges(h: Hierarchy, within: Optional[list[int]] = None) -> None:
    """The MetaEdges of every group (module docstring); with ``within`` (the ids of some groups
    and of every group under them: an expand-ahead build's subtree), of those groups only, from
    the base edges between two ops under them; the other groups keep theirs,
    ``max_metaedge_size`` the largest of all."""
    n = h.n_ops
    groups = h.groups
    total = n + len(groups)
    slim = h.slim
    changed = groups if within is None else [groups[gid - n] for gid in within]
    if within is None:
        h.max_metaedge_size = 0
    if not slim.n_edges:
        _no_metaedges(changed)
        return
    src, dst = edge_arrays(h)
    edge_ids = None
    if within is None:
        group_parent = group_parents(h)  # ids - n; negative for the root
        par = np.concatenate([h.op_parent_array(), group_parent + n])
    else:  # the subtree's lists only: the parents of the nodes there, the edges between two of their ops
        par = node_parents(ChildrenArrays(h, only=within), n)
        group_parent = par[n:] - n  # negative for the subtree's roots and every group outside
        edge_ids = np.flatnonzero((par[src] >= 0) & (par[dst] >= 0))
        src, dst = src[edge_ids], dst[edge_ids]
    level = group_levels(group_parent)
    a, b = lca_child_ends(src, dst, par, group_parent, level, n)  # the ends' ancestors under the LCA
    if not len(a):
        _no_metaedges(changed)
        return
    if within is None and h.grouped_only is not None:  # a first view's partial build: the grouped groups' MetaEdges only
        grouped = np.zeros(len(groups), dtype=bool)
        grouped[np.asarray(h.grouped_ids(), dtype=np.int64) - n] = True
        edge_ids = np.flatnonzero(grouped[par[a] - n])
        if not len(edge_ids):
            _no_metaedges(changed)
            return
        a, b = a[edge_ids], b[edge_ids]
    # One MetaEdge per (a, b), in order of first appearance; base edges in edge order: one stable
    # sort of the edges by (a, b), each run of equal keys a MetaEdge.
    key = a * total + b
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    head = np.flatnonzero(np.concatenate(([True], sorted_key[1:] != sorted_key[:-1])))  # run starts
    counts = np.diff(np.append(head, len(key)))
    first = order[head]  # each run's first edge
    by_appearance = np.argsort(first)
    owners = par[a[first[by_appearance]]] - n
    # Each owner's metaedges, in order of first appearance: a stable sort by owner, sliced.
    by_owner = np.argsort(owners, kind="stable")
    row = by_appearance[by_owner]  # the run of each row, rows in owner order
    heads = first[row]
    owner_ids, owner_starts = np.unique(owners[by_owner], return_index=True)
    # the base edges of the rows: each row's run, rows laid end to end
    row_counts = counts[row]
    base_start = np.concatenate([[0], np.cumsum(row_counts)])
    base_edges = order[np.repeat(head[row] - base_start[:-1], row_counts) + np.arange(len(key))]
    if edge_ids is not None:
        base_edges = edge_ids[base_edges]
    row_starts = base_start[:-1]
    sizes = np.add.reduceat(np.asarray(slim.edge_size, dtype=np.int64)[base_edges], row_starts)
    kind = np.asarray(slim.edge_kind, dtype=np.int64)[base_edges]
    n_control = np.add.reduceat((kind == EdgeKindCode.CONTROL).astype(np.int64), row_starts)
    n_reference = np.add.reduceat((kind == EdgeKindCode.REFERENCE).astype(np.int64), row_starts)
    kind_of = np.where(n_control == row_counts, EdgeKindCode.CONTROL,
                       np.where(n_reference > 0, EdgeKindCode.REFERENCE, EdgeKindCode.DATA))
    ends = owner_starts[1:].tolist() + [len(row)]
    rows = dict(zip((owner_ids + n).tolist(), zip(owner_starts.tolist(), ends)))
    table = MetaEdgeTable(a[heads], b[heads], kind_of, sizes, n_control, n_reference, base_edges, base_start, rows)
    non_control = set((owners[by_owner][n_control != row_counts] + n).tolist())
    for g in changed:  # every group built: its rows (or none), whether one holds a non-control edge
        at = rows.get(g.id)
        if at is None:
            g.metaedges = []
        else:
            g.set_metaedge_rows(table, at[0], at[1])
        g.has_non_control_edges = g.id in non_control
    h.max_metaedge_size = max(h.max_metaedge_size, int(sizes.max()))
    h.metaedge_table = table


def _no_metaedges(groups) -> None:
    for g in groups:
        g.metaedges = []
        g.has_non_control_edges = False
