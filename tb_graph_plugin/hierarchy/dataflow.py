"""The dataflow among a group's children, and what may be contracted without a cycle.

Every grouping phase (inferred scopes, dataflow regions, op and block series) turns a set
of siblings into one node of their parent's metagraph. Contracting a set ``P`` creates a
cycle exactly when some path leaves ``P`` and comes back into it (``P`` is not *convex*);
the stock dashboard never checks this, so its ``AddN_[0-121]`` series in a training step
draws a reversed edge. This module gives the phases one check, ours (no reference
document; the convexity condition is the standard one for graph contraction):

* the children graph of a group: its children as positions ``0..n-1`` and their successor
  sets, from the SlimGraph's base edges (all kinds) whose ends lie under two different
  children (``placement.ChildEdges.graph``: every base edge placed once for all groups and
  phases), or from its metaedges once they are built (:func:`graph_from_metaedges`).
* :class:`Contraction`: proposals are accepted one at a time, each only if the quotient
  graph (accepted blocks contracted, the rest single) has no cycle through it. By
  induction, when the children's graph is acyclic the final quotient is acyclic, whatever
  the order of proposals, and whatever topological rank bounds its searches (a search
  prunes only where no path can come back). A proposal whose members already lie on one cycle (one strongly
  connected component) is accepted: it leaves the condensation as it is, so every cycle of
  the quotient is one the graph has. Cost per proposal O(what is reachable from it).
  ``wide.WideContraction`` gives the same answers for a wide, shallow, acyclic group (an
  optimizer's 45k update ops) in numpy, level by level (``ChildEdges.contraction`` picks it).
* :func:`series_shape`: ``"chain"`` when members in index order each feed the next and
  every member-to-member edge goes forward, ``"unconnected"`` when no edge joins two
  members, ``"forward"`` when edges only go forward otherwise, else ``None``.
* :func:`dominator_regions`: single-entry single-exit regions cut at the separators of
  the main path (the dominator chain of a virtual sink, [CHK01] in docs/references.md), for
  dataflow block inference.

Pre-condition: a children graph as successor sets over positions. Post-conditions are
stated per function.
"""

from __future__ import annotations

from bisect import insort
from typing import Iterable, Optional, Sequence

import numpy as np

from tb_graph_plugin.hierarchy.model import Hierarchy

__all__ = ["edge_arrays", "Contraction", "series_shape", "dominator_regions", "is_acyclic",
           "strong_components"]


def edge_arrays(h: Hierarchy) -> tuple[np.ndarray, np.ndarray]:
    """(edge_src, edge_dst) as int64 arrays (built once per hierarchy)."""
    if h.edge_arrays is None:
        h.edge_arrays = (np.asarray(h.slim.edge_src, dtype=np.int64), np.asarray(h.slim.edge_dst, dtype=np.int64))
    return h.edge_arrays


def graph_from_metaedges(h: Hierarchy, gid: int) -> list[set[int]]:
    """The same successor sets, read from a group's metaedges (once they are built)."""
    g = h.group(gid)
    pos = {c: k for k, c in enumerate(g.children)}
    succ: list[set[int]] = [set() for _ in g.children]
    for me in g.metaedges:
        succ[pos[me.src]].add(pos[me.dst])
    return succ


def is_acyclic(succ: Sequence[Iterable[int]]) -> bool:
    """True when the graph has no directed cycle (Kahn's algorithm)."""
    return _topological(succ) is not None


def topological_rank(succ: Sequence[Iterable[int]]) -> Optional[list[int]]:
    """Each position's index in a topological order, or None when the graph has a cycle."""
    order = _topological(succ)
    if order is None:
        return None
    rank = [0] * len(succ)
    for r, k in enumerate(order):
        rank[k] = r
    return rank


class Contraction:
    """Accept groupings of positions one by one while the quotient graph stays acyclic.

    ``within`` (optional) restricts the search to those positions: the members of an
    accepted outer block when its inner blocks are decided. ``rank`` (optional, a topological
    rank of ``succ``, computed on first use) bounds each search: edges raise the rank, so a
    path that leaves a proposal and comes back never climbs above the proposal's highest rank,
    except through an accepted block that reaches below it (a block is entered at one member
    and left at any); the bound is widened by those blocks, and the search is local (a chain
    of 128 layers costs 128 short searches, not 128 walks to the end of the model).
    """

    def __init__(self, succ: Sequence[Iterable[int]], within: Optional[set[int]] = None,
                 rank: Optional[list[int]] = None) -> None:
        self.succ = succ
        self.within = within
        self.block_of: dict[int, int] = {}  # position -> accepted block number
        self.blocks: list[list[int]] = []
        self.rank = rank
        self._spans: list[tuple[int, int]] = []  # (lowest, highest rank) of each block, sorted
        self._component: Optional[list[int]] = None  # strong components, for cyclic graphs

    def shape(self, members: list[int]) -> Optional[str]:
        """:func:`series_shape` of ``members`` (in index order)."""
        return series_shape(self.succ, members)

    def _ranked(self) -> list[int]:
        """``rank`` (any topological rank bounds the searches alike), [] for a cyclic graph."""
        if self.rank is None:
            order = _topological(self.succ, by_position=False)
            self.rank = [0] * len(self.succ) if order else []
            for r, k in enumerate(order or ()):
                self.rank[k] = r
        return self.rank

    def _bound(self, members: list[int]) -> Optional[int]:
        self._ranked()
        if not self.rank:
            return None  # a cyclic graph: search everything
        bound = max(map(self.rank.__getitem__, members))
        for lo, hi in self._spans:  # sorted by lowest rank: one sweep reaches the fixpoint
            if lo >= bound:
                break
            bound = max(bound, hi)
        return bound

    def on_one_cycle(self, members: list[int]) -> bool:
        """True when ``members`` lie on one cycle the graph already has (one strongly connected
        component): contracting them merges nodes already reachable from each other, so the
        quotient has no cycle the graph did not have (the condensation is unchanged)."""
        if self._ranked():
            return False  # an acyclic graph: no component holds two positions
        if self._component is None:
            self._component = strong_components(self.succ)
        first = self._component[members[0]]
        return all(self._component[m] == first for m in members)

    def try_add(self, members: Iterable[int]) -> bool:
        """Accept ``members`` as one block unless a path leaves it and comes back, except
        through a cycle that joins all of them already (TensorFlow's gradient sums: each
        ``AddN`` both reads from and feeds the ``gradient_tape`` scope)."""
        members = list(members)
        inside = set(members)
        if any(m in self.block_of for m in members):
            raise ValueError("a proposal overlaps an accepted block")
        succ, within, block_of, blocks = self.succ, self.within, self.block_of, self.blocks
        if len(members) > 1 and self.on_one_cycle(members):
            self._accept(members)
            return True
        bound = self._bound(members)
        rank = self.rank
        seen: set[int] = set()
        seen_blocks: set[int] = set()
        stack = [j for m in members for j in succ[m] if j not in inside]
        while stack:
            x = stack.pop()
            if x in seen or (within is not None and x not in within):
                continue
            if x in inside:
                return False
            seen.add(x)
            if bound is not None and rank[x] > bound:
                continue  # from above the bound no path comes back down
            b = block_of.get(x)
            if b is None:
                stack.extend(succ[x])
            elif b not in seen_blocks:
                seen_blocks.add(b)
                for y in blocks[b]:
                    seen.add(y)
                    stack.extend(succ[y])
        self._accept(members)
        return True

    def _accept(self, members: list[int]) -> None:
        b = len(self.blocks)
        self.blocks.append(members)
        for m in members:
            self.block_of[m] = b
        rank = self.rank
        if rank:
            insort(self._spans, (min(rank[m] for m in members), max(rank[m] for m in members)))


def strong_components(succ: Sequence[Iterable[int]]) -> list[int]:
    """The strongly connected component of each position ([TARJAN72], iterative);
    two positions share a number exactly when each reaches the other."""
    n = len(succ)
    index = [-1] * n
    low = [0] * n
    comp = [-1] * n
    on_stack = [False] * n
    stack: list[int] = []
    counter = n_comp = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        work = [(root, iter(succ[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, it = work[-1]
            for w in it:
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, iter(succ[w])))
                    break
                if on_stack[w]:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
                if low[v] == index[v]:
                    while True:
                        w = stack.pop()
                        on_stack[w] = False
                        comp[w] = n_comp
                        if w == v:
                            break
                    n_comp += 1
    return comp


def series_shape(succ: Sequence[Iterable[int]], members: Sequence[int]) -> Optional[str]:
    """``"chain"``, ``"unconnected"``, ``"forward"`` or None for members given in index order.

    ``"forward"``: every member-to-member edge goes forward but the members are not a chain
    (a stack drawn in index order has no upward edge); callers accept it only for members on
    one cycle the graph already has (:meth:`Contraction.on_one_cycle`)."""
    rank = {m: k for k, m in enumerate(members)}
    joined = False
    for k, m in enumerate(members):
        for j in succ[m]:
            r = rank.get(j)
            if r is None:
                continue
            joined = True
            if r <= k:
                return None  # a backward edge between members
    if not joined:
        return "unconnected"
    for k in range(len(members) - 1):
        if members[k + 1] not in succ[members[k]]:
            return "forward"
    return "chain"


def _topological(succ: Sequence[Iterable[int]], by_position: bool = True) -> Optional[list[int]]:
    """Kahn's order (successors released by increasing position unless ``by_position`` is
    False: any topological order then, cheaper), or None when the graph has a cycle."""
    indeg = [0] * len(succ)
    for s in succ:
        for j in s:
            indeg[j] += 1
    order = [k for k, d in enumerate(indeg) if d == 0]
    for k in order:  # the list grows while it is walked
        for j in (sorted(succ[k]) if by_position else succ[k]):
            indeg[j] -= 1
            if indeg[j] == 0:
                order.append(j)
    return order if len(order) == len(succ) else None


def dominator_regions(succ: Sequence[Iterable[int]]) -> list[tuple[list[int], int]]:
    """Single-entry single-exit regions of a DAG, each with its exit (output) position.

    A virtual source feeds every position without predecessors and every position without
    successors feeds a virtual sink; the *separators* are the positions that dominate the
    sink (every source-to-sink path passes through them: the cut vertices of the main path).
    Region ``i`` holds the positions dominated by separator ``i`` but not by separator
    ``i+1``, minus separator ``i``, plus separator ``i+1`` (its exit): an Inception module
    is everything after one ``mixed`` concat up to and including the next. Positions before
    the first separator form a region ending at it; positions after the last one a region
    without exit (exit ``-1``).

    Post-condition: the regions partition the positions; each region is convex (no path
    leaves it and comes back), so contracting all of them keeps the graph acyclic. An
    empty list when the graph has a cycle.
    """
    n = len(succ)
    order = _topological(succ)
    if order is None or n == 0:
        return []
    preds: list[list[int]] = [[] for _ in range(n + 2)]
    src, sink = n, n + 1
    for k in range(n):
        for j in succ[k]:
            preds[j].append(k)
    for k in range(n):
        if not preds[k]:
            preds[k].append(src)
        if not succ[k]:
            preds[sink].append(k)
    rank = {src: -1, sink: n}
    for r, k in enumerate(order):
        rank[k] = r
    idom: dict[int, int] = {src: src}

    def intersect(a: int, b: int) -> int:
        while a != b:
            while rank[a] > rank[b]:
                a = idom[a]
            while rank[b] > rank[a]:
                b = idom[b]
        return a

    for k in order + [sink]:
        ps = preds[k]
        d = ps[0]
        for p in ps[1:]:
            d = intersect(d, p)
        idom[k] = d
    chain = []
    x = idom[sink]
    while x != src:
        chain.append(x)
        x = idom[x]
    chain.reverse()  # separators from the entry to the exit
    sep_index = {s: i for i, s in enumerate(chain)}
    # The separator dominating each position most closely: walk up the dominator tree.
    owner: dict[int, int] = {}
    for k in order:
        x, path = k, []
        while x != src and x not in sep_index and x not in owner:
            path.append(x)
            x = idom[x]
        o = owner[x] if x in owner else (sep_index[x] if x != src else -1)
        for y in path:
            owner[y] = o
    regions: list[list[int]] = [[] for _ in range(len(chain) + 1)]
    for k in order:
        if k in sep_index:
            regions[sep_index[k]].append(k)  # a separator closes the region before it
        else:
            regions[owner[k] + 1].append(k)
    exits = chain + [-1]
    return [(r, e) for r, e in zip(regions, exits) if r]
