"""The dataflow among a group's children, and what may be contracted without a cycle.

Every grouping phase (inferred scopes, dataflow regions, op and block series) turns a set
of siblings into one node of their parent's metagraph. Contracting a set ``P`` creates a
cycle exactly when some path leaves ``P`` and comes back into it (``P`` is not *convex*);
the stock dashboard never checks this, so its ``AddN_[0-121]`` series in a training step
draws a reversed edge. This module gives the phases one check, ours (no reference
document; the convexity condition is the standard one for graph contraction):

* :class:`ChildEdges`: the children of a group as positions ``0..n-1`` and their successor
  sets (``graph``) or edge arrays (``of``), from the SlimGraph's base edges (all kinds) whose
  ends lie under two different children. Every base edge is placed at its group once per
  phase, for all groups together (numpy, O(E log E + groups x depth)); a question then costs
  O(edges of the group), whatever lies under its children.
* :class:`Contraction`: proposals are accepted one at a time, each only if the quotient
  graph (accepted blocks contracted, the rest single) has no cycle through it. By
  induction, when the children's graph is acyclic the final quotient is acyclic, whatever
  the order of proposals, and whatever topological rank bounds its searches (a search
  prunes only where no path can come back). A proposal whose members already lie on one cycle (one strongly
  connected component) is accepted: it leaves the condensation as it is, so every cycle of
  the quotient is one the graph has. Cost per proposal O(what is reachable from it).
  :class:`WideContraction` gives the same answers for a wide, shallow, acyclic group (an
  optimizer's 45k update ops) in numpy, level by level (``ChildEdges.contraction`` picks it).
* :func:`series_shape`: ``"chain"`` when members in index order each feed the next and
  every member-to-member edge goes forward, ``"unconnected"`` when no edge joins two
  members, ``"forward"`` when edges only go forward otherwise, else ``None``.
* :func:`dominator_regions`: single-entry single-exit regions cut at the separators of
  the main path (the dominator chain of a virtual sink, [CHK01] in docs/references.md), for
  dataflow block inference.

Pre-condition: ``h.slim`` built; ``h.op_parent`` / ``MetaNode.parent`` up to date for
the group asked about (metaedges are not needed). Post-conditions are stated per function.
"""

from __future__ import annotations

from bisect import insort
from itertools import chain
from typing import Iterable, Optional, Sequence

import numpy as np

from tb_graph_plugin.hierarchy.model import Hierarchy

__all__ = ["edge_arrays", "lca_children", "ChildEdges", "placed_edges", "distinct", "Contraction", "series_shape", "dominator_regions", "is_acyclic",
           "strong_components"]


def edge_arrays(h: Hierarchy) -> tuple[np.ndarray, np.ndarray]:
    """(edge_src, edge_dst) as int64 arrays (built once per hierarchy)."""
    if h.edge_arrays is None:
        h.edge_arrays = (np.asarray(h.slim.edge_src, dtype=np.int64), np.asarray(h.slim.edge_dst, dtype=np.int64))
    return h.edge_arrays


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

    def __init__(self, h: Hierarchy) -> None:
        self.h = h
        self._bounds: Optional[np.ndarray] = None  # edges placed at group k: [bounds[k], bounds[k + 1])

    def _place(self) -> None:
        h = self.h
        n, groups = h.n_ops, h.groups
        n_groups = len(groups)
        total = n + n_groups
        self._children = [list(g.children) for g in groups]  # as placed: positions refer to these
        lens = np.fromiter(map(len, self._children), dtype=np.int64, count=n_groups)
        flat = np.fromiter(chain.from_iterable(self._children), dtype=np.int64, count=int(lens.sum()))
        parent = np.full(total, -1, dtype=np.int64)  # the group holding each op and group
        position = np.full(total, -1, dtype=np.int64)  # its position in that group's children
        parent[flat] = np.repeat(np.arange(n, total), lens)
        position[flat] = np.arange(len(flat)) - np.repeat(np.cumsum(lens) - lens, lens)
        group_parent = parent[n:] - n  # ids - n; negative for the root
        level = np.zeros(n_groups, dtype=np.int64)
        up = np.flatnonzero(group_parent >= 0)
        at = group_parent[up]
        while len(up):  # every group climbs to the root together
            level[up] += 1
            keep = group_parent[at] >= 0
            up, at = up[keep], group_parent[at[keep]]
        src, dst = edge_arrays(h)
        a, b = src.copy(), dst.copy()  # the ends' ancestors that are children of the LCA
        ps, pd = parent[src], parent[dst]
        cross = np.flatnonzero(ps != pd)
        if len(cross):
            pairs, inverse = np.unique(ps[cross] * total + pd[cross], return_inverse=True)
            ca, cb = lca_children(pairs // total - n, pairs % total - n, group_parent, level)
            inverse = inverse.reshape(-1)
            ca, cb = ca[inverse], cb[inverse]
            a[cross] = np.where(ca < 0, src[cross], ca + n)
            b[cross] = np.where(cb < 0, dst[cross], cb + n)
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
        now = list(map(at.get, former))  # the position under gid holding each former child, or -1
        op_parent = h.op_parent
        for k in [k for k, p in enumerate(now) if p is None]:  # regrouped: climb to gid's child
            x = former[k]
            while x not in at and x != placed:
                x = op_parent[x] if x < n else groups[x - n].parent
            now[k] = at.get(x, -1)
        now = np.asarray(now, dtype=np.int64)
        src, dst = now[src], now[dst]
        keep = (src >= 0) & (dst >= 0) & (src != dst)
        return src[keep], dst[keep]

    def graph(self, gid: int) -> list[set[int]]:
        """Successor sets over the positions of ``h.group(gid).children``.

        Post-condition: ``succ[a]`` holds ``b != a`` iff some base edge runs from an op under
        child ``a`` to an op under child ``b`` (an op child is "under" itself).
        """
        m = len(self.h.groups[gid - self.h.n_ops].children)
        return _successor_sets(_pairs(*self.of(gid), m), m)

    def contraction(self, gid: int):
        """A :class:`Contraction` over ``graph(gid)``; for a wide, shallow, acyclic group a
        :class:`WideContraction` (the same answers, in numpy, no successor sets)."""
        m = len(self.h.groups[gid - self.h.n_ops].children)
        pairs = _pairs(*self.of(gid), m)
        rank = _peeled_rank(pairs, m) if m >= _WIDE else None
        return Contraction(_successor_sets(pairs, m)) if rank is None else WideContraction(pairs, m, rank)


_WIDE = 2048  # a narrower group is cheaper in Python (Contraction)
_PEEL_MAX_LEVELS = 64  # a deeper graph (a chain of layers) is left to Contraction


def distinct(x: np.ndarray) -> np.ndarray:
    """``np.unique(x)`` of an int array, by a sort (numpy 2's hashing unique is slower here)."""
    x = np.sort(x)
    return x[np.concatenate(([True], x[1:] != x[:-1]))] if len(x) else x


def _pairs(src: np.ndarray, dst: np.ndarray, m: int) -> np.ndarray:
    """The distinct edges ``src * m + dst``, sorted."""
    return distinct(src * m + dst)


def _successor_sets(pairs: np.ndarray, m: int) -> list[set[int]]:
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


def _peeled_rank(pairs: np.ndarray, m: int) -> Optional[np.ndarray]:
    """A topological rank (Kahn's algorithm, every position whose producers are ranked taken at
    once, level by level, in numpy), or None for a cycle or more than ``_PEEL_MAX_LEVELS``
    levels. O(E log E + m) for a shallow graph (an optimizer's 45k updates: 10 levels)."""
    starts, dst = _starts(pairs, m), pairs % m
    indegree = np.bincount(dst, minlength=m)
    rank = np.empty(m, dtype=np.int64)
    ready = np.flatnonzero(indegree == 0)
    done = 0
    for _ in range(_PEEL_MAX_LEVELS):
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


def placed_edges(h: Hierarchy) -> ChildEdges:
    """The hierarchy's :class:`ChildEdges`, made on first use by the grouping phases and kept
    (``h.out_neighbours``) until the tree is final."""
    if h.out_neighbours is None:
        h.out_neighbours = ChildEdges(h)
    return h.out_neighbours


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
