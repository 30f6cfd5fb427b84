"""Every base edge placed once at the group where it runs between two children.

Every grouping phase (inferred scopes, dataflow regions, op series, splitting) asks, for
some groups, which of their children feed which (``dataflow``'s children graph). Walking
each asked group's subtree costs O(depth x ops) over the phases; here the base edges are
placed once, for all groups and all those phases, at their lowest common ancestor group
(as ``metaedges`` places MetaEdges, after the stock dashboard's "Adding edges",
[TB-GRAPH-DOC] in docs/references.md), in numpy, and each question reads its group's edges.

Pre-condition: ``h.slim`` built, the scopes made. Between the placement and a question the
tree changes only by inserting groups between a group and some of its children, and by
reordering children lists (what the grouping phases do); see :class:`ChildEdges`.
Post-condition: ``ChildEdges.of(g)`` holds one pair per base edge between two different
children of ``g``.
"""

from __future__ import annotations

from itertools import repeat
from typing import Optional

import numpy as np

from tb_graph_plugin.hierarchy.dataflow import Contraction, edge_arrays
from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.hierarchy.tree import ChildrenArrays, group_levels, node_parents
from tb_graph_plugin.hierarchy.wide import WideContraction, edge_codes, peeled_rank, successor_sets

__all__ = ["ChildEdges", "lca_child_ends", "lca_children", "placed_edges"]

_WIDE = 2048  # a narrower group is cheaper in Python (dataflow.Contraction)


def lca_children(a: np.ndarray, b: np.ndarray, parent: np.ndarray, level: np.ndarray):
    """For pairs of groups (ids - n), the children of their lowest common ancestor holding
    ``a`` and ``b`` (-1 where that end is the ancestor itself); all pairs climb at once.
    ``parent``/``level``: each group's parent (ids - n, negative for the root) and depth."""
    a, b = a.copy(), b.copy()
    ca = np.full(len(a), -1, dtype=np.int64)
    cb = ca.copy()
    for x, cx, y in ((a, ca, b), (b, cb, a)):
        while True:
            up = np.flatnonzero(level[x] > level[y])
            if not len(up):
                break
            cx[up] = x[up]
            x[up] = parent[x[up]]
    while True:
        up = np.flatnonzero(a != b)
        if not len(up):
            break
        ca[up], cb[up] = a[up], b[up]
        a[up], b[up] = parent[a[up]], parent[b[up]]
    return ca, cb


def lca_child_ends(src: np.ndarray, dst: np.ndarray, parent: np.ndarray, group_parent: np.ndarray,
                   level: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """For edges ``src -> dst`` (hierarchy ids), the ancestors of each end that are children of
    the edge's lowest common ancestor (an end that is itself a child of it: the end). ``parent``:
    the group holding each op and group (hierarchy ids); ``group_parent``/``level`` as for
    :func:`lca_children`. Edges are grouped by their ends' parents, so each pair climbs once."""
    total = len(parent)
    a, b = src.copy(), dst.copy()
    ps, pd = parent[src], parent[dst]
    cross = np.flatnonzero(ps != pd)
    if len(cross):
        pairs, inverse = np.unique(ps[cross] * total + pd[cross], return_inverse=True)
        ca, cb = lca_children(pairs // total - n, pairs % total - n, group_parent, level)
        inverse = inverse.reshape(-1)
        ca, cb = ca[inverse], cb[inverse]
        a[cross] = np.where(ca < 0, src[cross], ca + n)
        b[cross] = np.where(cb < 0, dst[cross], cb + n)
    return a, b


class ChildEdges:
    """Every base edge placed once: the group where it runs between two children.

    On the first question, for the tree as it is then, each base edge gets its lowest common
    ancestor group and the positions, in that group's children list, of the two children
    holding its ends (an op child holds itself); all groups at once, in numpy: the children
    lists flattened once, the LCAs climbed once per distinct pair of the ends' parent groups
    (as ``metaedges`` does), the edges sorted by that group. Cost O(E log E + ops + groups x
    depth), once for all the grouping phases (:func:`placed_edges`).

    A question about group ``g`` reads the edges placed at ``g`` or, for a group made since,
    at its nearest ancestor ``a`` that was there: O(its edges) while ``a``'s children list is
    as it was, else O(``a``'s former children x the levels inserted above them) more, to find
    which child of ``g`` now holds each of them (an edge not under two different children of
    ``g`` is left out).

    Pre-condition: since the first question the tree changed only by inserting groups between
    a group and some of its children, and by reordering children lists (so the ops under each
    former child of every group stay together): what inferred scopes, dataflow regions, op
    series and splitting do. Metaedges are not needed.
    """

    def __init__(self, h: Hierarchy, within: Optional[list[int]] = None) -> None:
        self.h = h
        self.within = within  # None: every group may be asked; else only these groups, each
        # with every group under it (an expand-ahead build's subtree): the edges between two
        # ops there are placed, the other groups' lists are not read
        self._bounds: Optional[np.ndarray] = None  # edges placed at group k: [bounds[k], bounds[k + 1])

    def _place(self) -> None:
        h = self.h
        n, groups = h.n_ops, h.groups
        n_groups = len(groups)
        only = self.within
        tree = ChildrenArrays(h, copy=True, only=only)
        self._children = tree.lists  # as placed: positions refer to these
        parent = node_parents(tree, n)  # the group holding each op and group
        position = tree.position  # its position in that group's children
        group_parent = parent[n:] - n  # ids - n; negative for the root (or a subtree's root)
        level = group_levels(group_parent)
        src, dst = edge_arrays(h)
        if only is not None:
            inside = np.flatnonzero((parent[src] >= 0) & (parent[dst] >= 0))
            src, dst = src[inside], dst[inside]
        a, b = lca_child_ends(src, dst, parent, group_parent, level, n)
        inside = np.flatnonzero(a != b)  # a self loop joins no two children
        owner = parent[a[inside]] - n
        order = np.argsort(owner, kind="stable")
        self._src = position[a[inside[order]]]
        self._dst = position[b[inside[order]]]
        self._bounds = np.searchsorted(owner[order], np.arange(n_groups + 1))

    def of(self, gid: int) -> tuple[np.ndarray, np.ndarray]:
        """(source, destination) positions in ``h.group(gid).children`` of every base edge
        between two of them (one pair per base edge)."""
        if self._bounds is None:
            self._place()
        h = self.h
        n, groups = h.n_ops, h.groups
        placed = gid
        while placed - n >= len(self._children):  # made since: its edges were placed above it
            placed = groups[placed - n].parent
        k = placed - n
        src, dst = self._src[self._bounds[k]:self._bounds[k + 1]], self._dst[self._bounds[k]:self._bounds[k + 1]]
        former, children = self._children[k], groups[gid - n].children
        if placed == gid and former == children:
            return src, dst
        at = dict(zip(children, range(len(children))))
        # the position under gid holding each former child, or -1
        now = np.fromiter(map(at.get, former, repeat(-1)), dtype=np.int64, count=len(former))
        lost = np.flatnonzero(now < 0)  # regrouped: climb to gid's child, all of them a level at a time
        climbing = list(map(former.__getitem__, lost.tolist()))
        op_parent = h.op_parent
        while len(lost):
            if max(climbing) < n:  # ops (regrouped into a series, most often)
                climbing = list(map(op_parent.__getitem__, climbing))
            else:
                climbing = [op_parent[x] if x < n else groups[x - n].parent for x in climbing]
            found = np.fromiter(map(at.get, climbing, repeat(-1)), dtype=np.int64, count=len(climbing))
            now[lost] = found
            go_on = [k for k in np.flatnonzero(found < 0).tolist() if climbing[k] != placed]
            lost = lost[go_on]
            climbing = list(map(climbing.__getitem__, go_on))
        src, dst = now[src], now[dst]
        keep = (src >= 0) & (dst >= 0) & (src != dst)
        return src[keep], dst[keep]

    def graph(self, gid: int) -> list[set[int]]:
        """Successor sets over the positions of ``h.group(gid).children``.

        Post-condition: ``succ[a]`` holds ``b != a`` iff some base edge runs from an op under
        child ``a`` to an op under child ``b`` (an op child is "under" itself).
        """
        m = len(self.h.groups[gid - self.h.n_ops].children)
        return successor_sets(edge_codes(*self.of(gid), m), m)

    def contraction(self, gid: int) -> Contraction | WideContraction:
        """A :class:`Contraction` over ``graph(gid)``; for a wide, shallow, acyclic group a
        :class:`WideContraction` (the same answers, in numpy, no successor sets)."""
        m = len(self.h.groups[gid - self.h.n_ops].children)
        pairs = edge_codes(*self.of(gid), m)
        rank = peeled_rank(pairs, m) if m >= _WIDE else None
        return Contraction(successor_sets(pairs, m)) if rank is None else WideContraction(pairs, m, rank)


def placed_edges(h: Hierarchy) -> ChildEdges:
    """The hierarchy's :class:`ChildEdges`, made on first use by the grouping phases and kept
    (``h.child_edges``) until the tree is final."""
    if h.child_edges is None:
        h.child_edges = ChildEdges(h)
    return h.child_edges
