"""The BridgeGraph of a group: its children, their metaedges, and bridges for edges that
cross the group's border.

Follows the VAST paper (004, "Build a Clustered Graph with Bundled Edges": edges are routed
so that they only connect siblings; an edge entering an expanded group is drawn to a bridge
node on the group's border, so each group is laid out once, on its own, and expanding it
re-lays out only it and its ancestors) and the stock ``render.ts`` bridge graph.

Pre: a Hierarchy (metaedges at lowest common ancestors). Post: every base edge with exactly
one end inside the group appears in exactly one :class:`BoundaryEdge`, keyed by direction,
the group's child holding the inner end, and the outer node (the child of the lowest
common ancestor that holds the outer end).
"""

from __future__ import annotations

import dataclasses

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
    def kind(self) -> str:
        if self.n_control == len(self.base_edges):
            return "control"
        return "reference" if self.n_reference else "data"


def boundary_edges(h, gid: int) -> list[BoundaryEdge]:
    slim = h.slim
    path = [gid] + h.ancestors(gid)
    child_of: dict[int, int] = {}

    stop = set(path[1:])

    def child_in_group(op: int) -> int:
        """The child of gid holding op, or -1 when op is not inside gid."""
        got = child_of.get(op)
        if got is not None:
            return got
        x, chain, found = op, [], -1
        while True:
            if x in child_of:
                found = child_of[x]
                break
            p = h.parent(x)
            chain.append(x)
            if p == gid:
                found = x
                break
            if p is None or p in stop:
                break
            x = p
        for y in chain:
            child_of[y] = found
        return found

    out: dict[tuple[bool, int, int], BoundaryEdge] = {}
    for k in range(len(path) - 1):
        here, ancestor = path[k], path[k + 1]
        for me in h.metaedges(ancestor):
            if me.src == here:
                incoming, outer = False, me.dst
            elif me.dst == here:
                incoming, outer = True, me.src
            else:
                continue
            for e in me.base_edges:
                inner_op = slim.edge_dst[e] if incoming else slim.edge_src[e]
                inner = child_in_group(inner_op)
                if inner < 0:
                    continue  # crosses an ancestor's border, not this group's
                key = (incoming, inner, outer)
                be = out.get(key)
                if be is None:
                    be = out[key] = BoundaryEdge(incoming, key[1], outer)
                be.base_edges.append(e)
                be.size += slim.edge_size[e]
                kind = slim.edge_kind[e]
                be.n_control += kind == 1
                be.n_reference += kind == 2
    return list(out.values())
