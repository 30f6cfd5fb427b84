"""The group tree as arrays: each group's parent and level, each node's place among its siblings.

Several phases read the whole tree at once (``placement`` and ``metaedges`` climb it to lowest
common ancestors, ``templates`` hashes it level by level, ``stats`` sums it bottom-up); each used
to derive the same arrays itself. This module derives them once per question, in numpy (ours; no
reference document: the glossary's *level* is the distance from the root, [TB-GRAPH-DOC]).

Pre-condition: ``h.groups`` form a tree rooted at group 0 (each group in its parent's
``children``). Post-conditions per function; each costs O(groups + children) array work (of
the children of the groups read, for a part of the tree: ``ChildrenArrays(only=)``), plus one
array pass per level for :func:`group_levels`.
"""

from __future__ import annotations

from itertools import chain
from typing import Iterable, Optional

import numpy as np

from tb_graph_plugin.hierarchy.model import Hierarchy

__all__ = ["group_parents", "group_levels", "deepest_first", "ChildrenArrays", "node_parents"]


def group_parents(h: Hierarchy) -> np.ndarray:
    """Each group's parent as a group index (hierarchy id - ``n_ops``; negative for the root).

    >>> from tb_graph_plugin.graph import build_slim_graph
    >>> from tensorboard.compat.proto import graph_pb2
    >>> from tb_graph_plugin.hierarchy import build_hierarchy
    >>> g = graph_pb2.GraphDef()
    >>> _ = g.node.add(name="a/b/c", op="Const")
    >>> h = build_hierarchy(build_slim_graph(g))
    >>> group_parents(h).tolist()[1:], group_levels(group_parents(h)).tolist()
    ([0, 1], [0, 1, 2])
    """
    groups = h.groups
    return np.fromiter((g.parent for g in groups), dtype=np.int64, count=len(groups)) - h.n_ops


def group_levels(parent: np.ndarray, top_level: Optional[np.ndarray] = None) -> np.ndarray:
    """Each group's distance from the root (the root 0), from :func:`group_parents`: every group
    climbs to the root together, one array pass per level. For a forest (the parents of a part
    of the tree, :func:`node_parents`), ``top_level`` gives the level of each group with no
    parent there (read only there); a group below it is that many levels deeper."""
    level = np.zeros(len(parent), dtype=np.int64) if top_level is None else np.where(parent < 0, top_level, 0)
    up = np.flatnonzero(parent >= 0)
    at = parent[up]
    while len(up):
        level[up] += 1
        keep = parent[at] >= 0
        if top_level is not None:
            topped = ~keep
            level[up[topped]] += top_level[at[topped]]
        up, at = up[keep], parent[at[keep]]
    return level


def deepest_first(parent: np.ndarray, level: np.ndarray):
    """Each level's groups below the root and their parents, ``(ids, parents)`` (group indices),
    the deepest level first: a bottom-up sum (``np.add.at(total, parents, total[ids])``) sees
    every group whole before its parent reads it. (In a forest, a group with no parent is left
    out whatever its level.)"""
    by_level = np.argsort(level, kind="stable")
    bounds = np.searchsorted(level[by_level], np.arange(int(level.max()) + 2 if len(level) else 1))
    for lv in range(len(bounds) - 2, 0, -1):
        ids = by_level[bounds[lv]:bounds[lv + 1]]
        up = parent[ids]
        if len(up) and up.min() < 0:
            ids, up = ids[up >= 0], up[up >= 0]
        yield ids, up


class ChildrenArrays:
    """Every group's children list, flattened in group order: group ``k``'s children are
    ``flat[start[k]:start[k + 1]]``; ``position[x]`` is node ``x``'s index in its parent's list
    (-1 for a node in no list: the root, embeddings). ``lists`` holds the lists as read (``copy``:
    copies of them, for a reader that outlives changes to the tree). ``only``: the ids of the
    groups whose lists are read (a part of the tree; the others read as empty)."""

    def __init__(self, h: Hierarchy, copy: bool = False, only: Optional[Iterable[int]] = None) -> None:
        n, groups = h.n_ops, h.groups
        if only is None:
            self.lists = [list(g.children) for g in groups] if copy else [g.children for g in groups]
            read = self.lists
            lengths = np.fromiter(map(len, read), dtype=np.int64, count=len(groups))
        else:  # the lists read, in group order
            ks = sorted(gid - n for gid in only)
            self.lists = [()] * len(groups)
            read = [list(groups[k].children) if copy else groups[k].children for k in ks]
            for k, children in zip(ks, read):
                self.lists[k] = children
            lengths = np.zeros(len(groups), dtype=np.int64)
            lengths[ks] = np.fromiter(map(len, read), dtype=np.int64, count=len(ks))
        self.start = np.zeros(len(groups) + 1, dtype=np.int64)
        np.cumsum(lengths, out=self.start[1:])
        self.lengths = lengths
        self.flat = np.fromiter(chain.from_iterable(read), dtype=np.int64, count=int(self.start[-1]))
        self.position = np.full(n + len(groups), -1, dtype=np.int64)
        self.position[self.flat] = np.arange(len(self.flat)) - np.repeat(self.start[:-1], lengths)


def node_parents(tree: ChildrenArrays, n: int) -> np.ndarray:
    """The group holding each op and group (hierarchy ids) in the lists ``tree`` read; -1 for a
    node in none of them (the root; an embedding; outside the part read)."""
    parent = np.full(len(tree.position), -1, dtype=np.int64)
    parent[tree.flat] = np.repeat(np.arange(n, n + len(tree.lists)), tree.lengths)
    return parent
