"""Dataflow checks for wide groups, in numpy (an optimizer's 45k update ops in one group).

:class:`WideContraction` gives :class:`~tb_graph_plugin.hierarchy.dataflow.Contraction`'s
answers and :func:`~tb_graph_plugin.hierarchy.dataflow.series_shape` for a wide, shallow,
acyclic children graph, the search a breadth-first one over arrays (ours; the convexity
condition is the one ``dataflow`` states). :func:`peeled_rank` ranks such a graph by
Kahn's algorithm ([KAHN62] in docs/references.md) one level at a time. Graphs are given as ``edge_codes``: the
distinct edges ``src * m + dst`` over positions ``0..m-1``, sorted.

Pre-condition: positions are a group's children (``placement.ChildEdges``).
Post-conditions are stated per function; the cost of each is O(E log E + m) plus a few array
passes per level of the graph.
"""

from __future__ import annotations

from bisect import insort
from typing import Optional

import numpy as np

__all__ = ["WideContraction", "distinct", "edge_codes", "peeled_rank", "successor_sets", "PEEL_MAX_LEVELS"]

PEEL_MAX_LEVELS = 64  # a deeper graph (a chain of layers) is left to dataflow.Contraction


def distinct(x: np.ndarray) -> np.ndarray:
    """``np.unique(x)`` of an int array, by a sort (numpy 2's hashing unique is slower here)."""
    x = np.sort(x)
    return x[np.concatenate(([True], x[1:] != x[:-1]))] if len(x) else x


def edge_codes(src: np.ndarray, dst: np.ndarray, m: int) -> np.ndarray:
    """The distinct edges ``src * m + dst``, sorted."""
    return distinct(src * m + dst)


def successor_sets(pairs: np.ndarray, m: int) -> list[set[int]]:
    """The successor set of each position, from ``edge_codes``."""
    succ: list[set[int]] = [set() for _ in range(m)]
    for p in pairs.tolist():
        succ[p // m].add(p % m)
    return succ


def _starts(pairs: np.ndarray, m: int) -> np.ndarray:
    """Where each position's successors begin in ``pairs % m`` (``pairs`` sorted)."""
    starts = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(pairs // m, minlength=m), out=starts[1:])
    return starts


def _successors(starts: np.ndarray, dst: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The successors of the positions ``at`` (with repeats), gathered from the sorted pairs."""
    lo, counts = starts[at], starts[at + 1] - starts[at]
    return dst[np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))]


def peeled_rank(pairs: np.ndarray, m: int) -> Optional[np.ndarray]:
    """A topological rank (Kahn's algorithm, every position whose producers are ranked taken at
    once, level by level, in numpy), or None for a cycle or more than ``PEEL_MAX_LEVELS``
    levels. O(E log E + m) for a shallow graph (an optimizer's 45k updates: 10 levels)."""
    starts, dst = _starts(pairs, m), pairs % m
    indegree = np.bincount(dst, minlength=m)
    rank = np.empty(m, dtype=np.int64)
    ready = np.flatnonzero(indegree == 0)
    done = 0
    for _ in range(PEEL_MAX_LEVELS):
        if not len(ready):
            return rank if done == m else None
        rank[ready] = np.arange(done, done + len(ready))
        done += len(ready)
        fed = _successors(starts, dst, ready)
        np.subtract.at(indegree, fed, 1)
        ready = distinct(fed[indegree[fed] == 0])
    return None


class WideContraction:
    """:class:`Contraction` and :func:`series_shape` for a wide acyclic graph, in numpy.

    The same answers (a search that prunes only where no path can come back finds the same
    paths), the search a breadth-first one over arrays: each step takes every position
    reached so far at once, so a proposal of 4,000 members (one op of each variable of an
    optimizer) costs a few array passes per level of the graph, not a Python step per member.
    ``pairs``: the distinct edges ``src * m + dst``, sorted; ``rank``: a topological rank.
    """

    def __init__(self, pairs: np.ndarray, m: int, rank: np.ndarray) -> None:
        self._src, self._dst = pairs // m, pairs % m
        self._starts = _starts(pairs, m)
        self._m = m
        self.rank = rank
        self._block = np.full(m, -1, dtype=np.int64)  # position -> accepted block number
        self._blocks: list[np.ndarray] = []
        self._spans: list[tuple[int, int]] = []  # (lowest, highest rank) of each block, sorted

    def on_one_cycle(self, members: list[int]) -> bool:
        return False  # acyclic

    def shape(self, members: list[int]) -> Optional[str]:
        """:func:`series_shape` of ``members`` (in index order)."""
        k = np.full(self._m, -1, dtype=np.int64)
        k[members] = np.arange(len(members))
        ks, kd = k[self._src], k[self._dst]
        joined = (ks >= 0) & (kd >= 0)
        if not joined.any():
            return "unconnected"
        ks, kd = ks[joined], kd[joined]
        if (kd <= ks).any():
            return None  # a backward edge between members
        fed = np.zeros(len(members), dtype=bool)
        fed[kd[kd == ks + 1]] = True
        return "chain" if fed[1:].all() else "forward"

    def try_add(self, members: list[int]) -> bool:
        """:meth:`Contraction.try_add` (no cycle to join: the graph is acyclic)."""
        at = np.asarray(members, dtype=np.int64)
        if (self._block[at] >= 0).any():
            raise ValueError("a proposal overlaps an accepted block")
        rank, block, starts, dst = self.rank, self._block, self._starts, self._dst
        inside = np.zeros(self._m, dtype=bool)
        inside[at] = True
        bound = int(rank[at].max()) if len(at) else -1
        for lo, hi in self._spans:  # as Contraction._bound
            if lo >= bound:
                break
            bound = max(bound, hi)
        seen = np.zeros(self._m, dtype=bool)
        entered: set[int] = set()
        reached = _successors(starts, dst, at)
        reached = reached[~inside[reached]]  # what the members feed outside them
        while len(reached):
            reached = distinct(reached[~seen[reached]])
            if inside[reached].any():
                return False
            seen[reached] = True
            reached = reached[rank[reached] <= bound]  # from above the bound no path comes back
            blocks = block[reached]
            walk = [reached[blocks < 0]]
            for b in distinct(blocks[blocks >= 0]).tolist():
                if b not in entered:  # a block is entered at one member and left at any
                    entered.add(b)
                    seen[self._blocks[b]] = True
                    walk.append(self._blocks[b])
            reached = _successors(starts, dst, np.concatenate(walk))
        block[at] = len(self._blocks)
        self._blocks.append(at)
        if len(at):
            insort(self._spans, (int(rank[at].min()), int(rank[at].max())))
        return True
