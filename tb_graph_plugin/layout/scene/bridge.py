"""The BridgeGraph of a group: its children, their metaedges, and bridges for edges that
cross the group's border.

Follows [VAST] §5.2 ("Build a Clustered Graph with Bundled Edges": edges are routed
so that they only connect siblings; an edge entering an expanded group is drawn to a bridge
node on the group's border, so each group is laid out once, on its own, and expanding it
re-lays out only it and its ancestors) and the stock ``render.ts`` bridge graph.

Pre: a Hierarchy (metaedges at lowest common ancestors). Post: every base edge with exactly
one end inside the group appears in exactly one :class:`BoundaryEdge`, keyed by direction,
the group's child holding the inner end, and the outer node (the child of the lowest
common ancestor that holds the outer end). Memoised per group in an LruCache the caller owns
(the scene's ``LayoutCache.boundaries``): a group's list is derived from its parent's.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional

import numpy as np

from tb_graph_plugin.cache import LruCache
from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.wire import EdgeKind, EdgeKindCode

__all__ = ["BoundaryEdge", "boundary_edges"]


@dataclasses.dataclass
class BoundaryEdge:
    incoming: bool  # True: outer -> inner
    inner: int  # hierarchy id of the group's child holding the inner end
    outer: int  # hierarchy id of the node outside the group
    base_edges: list[int] = dataclasses.field(default_factory=list)
    size: int = 0
    n_control: int = 0
    n_reference: int = 0

    @property
    def kind(self) -> EdgeKind:
        if self.n_control == len(self.base_edges):
            return EdgeKind.CONTROL
        return EdgeKind.REFERENCE if self.n_reference else EdgeKind.DATA


def boundary_edges(h: Hierarchy, gid: int, memo: Optional[LruCache] = None) -> list[BoundaryEdge]:
    """Boundary edges of group ``gid``, derived from its parent's (kept in ``memo``; without
    one, nothing is kept between calls).

    An edge crosses ``gid``'s border iff it crosses the parent's border with its inner end
    in ``gid``, or it is in a metaedge of the parent at ``gid``; so each group filters its
    parent's list instead of rescanning every ancestor's metaedges.
    """
    memo = memo if memo is not None else LruCache()
    got = memo.get(gid)
    if got is not None:
        return got
    parent = h.parent(gid)
    if parent is None:
        memo.put(gid, [])
        return []
    raw = []  # (incoming, outer, base edge)
    for be in boundary_edges(h, parent, memo):
        if be.inner == gid:
            raw.extend((be.incoming, be.outer, e) for e in be.base_edges)
    for me in h.metaedges(parent):
        if me.src == gid:
            raw.extend((False, me.dst, e) for e in me.base_edges)
        elif me.dst == gid:
            raw.extend((True, me.src, e) for e in me.base_edges)
    result = _bundle(h, raw, _child_in_group(h, gid))
    memo.put(gid, result)
    return result


def _child_in_group(h: Hierarchy, gid: int) -> Callable[[int], int]:
    """``op -> the child of gid holding it`` (pre: the op is inside gid), path-compressed."""
    child_of: dict[int, int] = {}

    def find(op: int) -> int:
        got = child_of.get(op)
        if got is not None:
            return got
        x, chain = op, []
        while True:
            if x in child_of:
                found = child_of[x]
                break
            chain.append(x)
            p = h.parent(x)
            if p == gid:
                found = x
                break
            x = p
        for y in chain:
            child_of[y] = found
        return found

    return find


def _bundle(h: Hierarchy, raw: list, child_of: Callable[[int], int]) -> list[BoundaryEdge]:
    """One BoundaryEdge per (direction, inner child, outer node), in first-seen order."""
    slim = h.slim
    out: dict[tuple[bool, int, int], BoundaryEdge] = {}
    control, reference = EdgeKindCode.CONTROL, EdgeKindCode.REFERENCE
    es = np.fromiter((e for _, _, e in raw), dtype=np.int64, count=len(raw))
    into = np.fromiter((incoming for incoming, _, _ in raw), dtype=bool, count=len(raw))
    inner_ops = np.where(into, slim.edge_dst[es], slim.edge_src[es]).tolist()  # the end inside
    for (incoming, outer, e), op, size, kind in zip(raw, inner_ops, slim.edge_size[es].tolist(),
                                                   slim.edge_kind[es].tolist()):
        inner = child_of(op)
        key = (incoming, inner, outer)
        be = out.get(key)
        if be is None:
            be = out[key] = BoundaryEdge(incoming, inner, outer)
        be.base_edges.append(e)
        be.size += size
        be.n_control += kind == control
        be.n_reference += kind == reference
    return list(out.values())
