"""The group tree as arrays: each group's parent and level, each node's place among its siblings.

Several phases read the whole tree at once (``placement`` and ``metaedges`` climb it to lowest
common ancestors, ``templates`` hashes it level by level, ``stats`` sums it bottom-up); each used
to derive the same arrays itself. This module derives them once per question, in numpy (ours; no
reference document: the glossary's *level* is the distance from the root, [TB-GRAPH-DOC]).

Pre-condition: ``h.groups`` form a tree rooted at group 0 (each group in its parent's
``children``). Post-conditions per function; each costs O(groups + children) array work, plus one
array pass per level for :func:`group_levels`.
"""

from __future__ import annotations

from itertools import chain

import numpy as np

from tb_graph_plugin.hierarchy.model import Hierarchy

__all__ = ["group_parents", "group_levels", "deepest_first", "ChildrenArrays"]


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


def group_levels(parent: np.ndarray) -> np.ndarray:
    """Each group's distance from the root (the root 0), from :func:`group_parents`: every group
    climbs to the root together, one array pass per level."""
    level = np.zeros(len(parent), dtype=np.int64)
    up = np.flatnonzero(parent >= 0)
    at = parent[up]
    while len(up):
        level[up] += 1
        keep = parent[at] >= 0
        up, at = up[keep], parent[at[keep]]
    return level


def deepest_first(parent: np.ndarray, level: np.ndarray):
    """Each level's groups below the root and their parents, ``(ids, parents)`` (group indices),
    the deepest level first: a bottom-up sum (``np.add.at(total, parents, total[ids])``) sees
    every group whole before its parent reads it."""
    by_level = np.argsort(level, kind="stable")
    bounds = np.searchsorted(level[by_level], np.arange(int(level.max()) + 2 if len(level) else 1))
    for lv in range(len(bounds) - 2, 0, -1):
        ids = by_level[bounds[lv]:bounds[lv + 1]]
        yield ids, parent[ids]


class ChildrenArrays:
    """Every group's children list, flattened in group order: group ``k``'s children are
    ``flat[start[k]:start[k + 1]]``; ``position[x]`` is node ``x``'s index in its parent's list
    (-1 for a node in no list: the root, embeddings). ``lists`` holds the lists as read (``copy``:
    copies of them, for a reader that outlives changes to the tree)."""

    def __init__(self, h: Hierarchy, copy: bool = False) -> None:
        n, groups = h.n_ops, h.groups
        self.lists = [list(g.children) for g in groups] if copy else [g.children for g in groups]
        lengths = np.fromiter(map(len, self.lists), dtype=np.int64, count=len(groups))
        self.start = np.zeros(len(groups) + 1, dtype=np.int64)
        np.cumsum(lengths, out=self.start[1:])
        self.lengths = lengths
        self.flat = np.fromiter(chain.from_iterable(self.lists), dtype=np.int64, count=int(self.start[-1]))
        self.position = np.full(n + len(groups), -1, dtype=np.int64)
        self.position[self.flat] = np.arange(len(self.flat)) - np.repeat(self.start[:-1], lengths)
