"""Hierarchy phase 3b: split wide groups into ordered artificial sub-groups.

A group with thousands of direct children (a Keras optimizer's ``adam`` scope holds 7,700 in
a 48-layer transformer training step) makes one huge layout and one unreadable picture.
This phase (ours, for groups too wide to draw; no reference document) cuts the children of
every group with more than ``max_children`` (``HierarchyOptions.split_max_children``,
default :data:`DEFAULT_MAX_CHILDREN`) into consecutive runs, **by position** in the
children order (GraphDef order: in an optimizer, the update ops of one variable sit side by
side), first made a topological order of the children's dataflow that moves only what must
move (a producer written after its consumer is pulled in before it), so that edges between
runs only go forward and the runs never form a cycle; each run becoming a :class:`SplitNode`:

* the number of runs is ``k = ceil(n / max_children)``; each cut is placed within
  +-10% of the balanced position (and never making a run longer than ``max_children``)
  where the fewest local base edges (ends at most 10% of a run apart) jump over it, so
  the ops of one variable stay together;
* a SplitNode is a real MetaNode (``h.parent()`` returns it, search reaches into it,
  the user expands it); ``artificial`` is True, ``split_range`` the 1-based positions
  of its first and last child in the original children list, its label
  ``<parent label> [lo-hi]`` (``adam [1-967]``), its name ``<parent>/[lo-hi]`` with
  ``*`` appended while that name exists (so it never collides with a real name);
* when ``k`` itself exceeds ``max_children`` the runs are split again (levels nest);
* a SeriesNode with more than ``max_children`` members is first cut into consecutive
  sub-series (``Add_[0-999]``, ``Add_[1000-1541]``, flagged ``artificial``) taking its
  place among its parent's children, so series stay series (stacked members).

Pre-condition: scopes, inferred scopes and op series made; metaedges not yet built (they
are computed afterwards on the final tree). Block series (a later phase) are not split.

Post-condition: no group has more than ``max_children`` children (block series aside);
the concatenation of a split group's runs, in order, is its former children list in that
dataflow order (GraphDef order where it already is one); a split group's metagraph is acyclic
when its children's graph was; every main op is still in exactly one ``children`` list, with ``h.op_parent`` and
``MetaNode.parent`` pointing at its holder; ``h.series_of_op`` names each member's series.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from tb_graph_plugin.hierarchy.model import Hierarchy, MetaNode, SeriesNode
from tb_graph_plugin.hierarchy.placement import placed_edges
from tb_graph_plugin.hierarchy.scopes import add_group
from tb_graph_plugin.hierarchy.wide import distinct

__all__ = ["DEFAULT_MAX_CHILDREN", "SplitNode", "is_artificial", "split_wide_groups"]

DEFAULT_MAX_CHILDREN = 1000


@dataclasses.dataclass(eq=False)
class SplitNode(MetaNode):
    """An artificial group holding a run of a wide group's children (``adam [1-967]``)."""

    split_range: tuple[int, int] = (0, 0)  # 1-based positions in the original children list

    artificial = True


def is_artificial(group) -> bool:
    """True for groups made by this phase (SplitNodes and cut sub-series)."""
    return bool(getattr(group, "artificial", False))


def _max_children(h: Hierarchy) -> int:
    return max(2, int(h.options.split_max_children))


def split_wide_groups(h: Hierarchy, max_children: int | None = None) -> int:
    """Split every group wider than ``max_children``; return how many groups were made."""
    limit = max(2, max_children) if max_children is not None else _max_children(h)
    made = 0
    for g in list(h.groups):  # snapshot: new groups are never wider than the limit
        if isinstance(g, SeriesNode) and len(g.children) > limit:  # made in a group regrouped
            made += _cut_series(h, g, limit)
    edges = placed_edges(h)
    for g in h.regrouped_groups():
        if not isinstance(g, SeriesNode) and len(g.children) > limit:
            made += _split_group(h, g, limit, edges.of(g.id))
    return made


# ---- series -------------------------------------------------------------------------------

def _cut_series(h: Hierarchy, s: SeriesNode, limit: int) -> int:
    """Cut ``s`` into consecutive sub-series of <= limit members, in its place."""
    members, indices = s.children, s.indices
    k = math.ceil(len(members) / limit)
    size = math.ceil(len(members) / k)
    parent = h.groups[s.parent - h.n_ops]
    base = "" if parent.parent < 0 else parent.name + "/"
    del h.group_index[s.name]  # the first piece keeps the SeriesNode (and its id), renamed
    pieces = []
    for start in range(0, len(members), size):
        part, idx = members[start:start + size], indices[start:start + size]
        if s.prefix.endswith("[") and s.suffix.startswith("]"):
            label = f"{s.prefix}{idx[0]}-{idx[-1]}{s.suffix}"  # Layer[0-999]
        else:
            label = f"{s.prefix}[{idx[0]}-{idx[-1]}]{s.suffix}"  # Add_[0-999]
        name = _free_name(h, base + label)
        if start == 0:
            piece = s
            piece.name, piece.label = name, label
            h.group_index[name] = s.id
        else:
            piece = add_group(h, name, label, s.parent, cls=SeriesNode, series_kind=s.series_kind,
                              prefix=s.prefix, suffix=s.suffix)
        piece.children, piece.indices = list(part), list(idx)
        piece.artificial = True
        h.set_parents(piece.children, piece.id)
        h.series_of_op.update(dict.fromkeys(part, piece.id))
        pieces.append(piece)
    at = parent.children.index(s.id)
    parent.children[at:at + 1] = [p.id for p in pieces]
    return len(pieces) - 1


def _free_name(h: Hierarchy, name: str) -> str:
    while name in h.group_index or name in h.slim.index:
        name += "*"
    return name


# ---- wide groups ---------------------------------------------------------------------------

def _jump_counts(h: Hierarchy, g: MetaNode, max_span: int, edges) -> np.ndarray:
    """``out[p]`` = local base edges (positions of their ends at most ``max_span`` apart)
    between a child before position p and one at or after it; edges from hubs (which
    jump over any cut near them alike) are not counted."""
    src, dst = edges
    keep = np.abs(src - dst) <= max_span
    a = np.minimum(src[keep], dst[keep])
    b = np.maximum(src[keep], dst[keep])
    diff = np.zeros(len(g.children) + 2, dtype=np.int64)
    np.add.at(diff, a + 1, 1)
    np.add.at(diff, b + 1, -1)
    return np.cumsum(diff)[: len(g.children) + 1]


def _cuts(jumps: np.ndarray, total: int, limit: int) -> list[int]:
    """Cut positions (exclusive ends of runs), each run 1..limit long, near balanced."""
    k = math.ceil(total / limit)
    size = math.ceil(total / k)
    slack = max(1, size // 10)
    cuts, prev = [], 0
    for remaining in range(k, 1, -1):  # runs left including this one
        lo = max(prev + 1, prev + size - slack, total - limit * (remaining - 1))
        hi = min(prev + limit, prev + size + slack, total - (remaining - 1))
        if hi < lo:
            hi = lo
        window = jumps[lo:hi + 1]
        best = np.flatnonzero(window == window.min())
        target = prev + size - lo
        p = lo + int(best[np.argmin(np.abs(best - target))])
        cuts.append(p)
        prev = p
    cuts.append(total)
    return cuts


def _dataflow_order(h: Hierarchy, g: MetaNode, edges) -> list[int]:
    """The children's positions in GraphDef order, each preceded by its not yet placed producers.

    A topological order of the children's DAG as close to GraphDef order as the dataflow
    allows (a shared ``Cast`` written late is pulled in before its first consumer), so that
    every edge between consecutive runs goes forward and the runs never form a cycle. Only a
    child with a producer after it starts a walk over producers (in increasing position); the
    children as they are when their graph has a cycle. ``edges``: ``ChildEdges.of`` ``g``.
    """
    m = len(g.children)
    src, dst = edges
    back = src > dst
    if not back.any():
        return list(range(m))  # GraphDef order is already one
    pairs = distinct(dst * m + src)  # each child's distinct producers, sorted
    targets = pairs // m
    starts = np.searchsorted(targets, np.arange(m + 1)).tolist()
    producers_of = (pairs % m).tolist()
    late = set(distinct(dst[back]).tolist())
    placed = [False] * m
    order: list[int] = []
    for k in range(m):
        if placed[k]:
            continue
        if k not in late:  # every producer comes earlier, so it is placed
            placed[k] = True
            order.append(k)
            continue
        on_path = {k}
        stack = [(k, iter(producers_of[starts[k]:starts[k + 1]]))]
        while stack:
            x, producers = stack[-1]
            for p in producers:
                if placed[p]:
                    continue
                if p in on_path:
                    return list(range(m))  # a cycle: no order puts producers first
                on_path.add(p)
                stack.append((p, iter(producers_of[starts[p]:starts[p + 1]])))
                break
            else:
                stack.pop()
                on_path.discard(x)
                placed[x] = True
                order.append(x)
    return order


def _split_group(h: Hierarchy, g: MetaNode, limit: int, edges) -> int:
    """Cut ``g`` into levels of runs; ``edges``: the base edges between its children
    (``ChildEdges.of``), as positions."""
    made = 0
    order = _dataflow_order(h, g, edges)
    g.children = list(map(g.children.__getitem__, order))
    new_position = np.empty(len(order), dtype=np.int64)
    new_position[order] = np.arange(len(order))
    edges = (new_position[edges[0]], new_position[edges[1]])  # the same edges, in the new order
    first = last = range(1, len(order) + 1)  # positions in that order of each child's first and last op
    while len(g.children) > limit:
        children = g.children
        span = max(2, math.ceil(len(children) / math.ceil(len(children) / limit)) // 10)
        cuts = _cuts(_jump_counts(h, g, span, edges), len(children), limit)
        new_children, new_first, new_last, prev = [], [], [], 0
        base = "" if g.parent < 0 else g.name + "/"
        stem = "" if g.parent < 0 else g.label + " "
        for p in cuts:
            run = children[prev:p]
            rng = (first[prev], last[p - 1])
            label = f"{stem}[{rng[0]}-{rng[1]}]"
            sub = add_group(h, _free_name(h, f"{base}[{rng[0]}-{rng[1]}]"), label, g.id, cls=SplitNode,
                            split_range=rng)
            sub.children = list(run)
            h.set_parents(sub.children, sub.id)
            new_children.append(sub.id)
            new_first.append(rng[0])
            new_last.append(rng[1])
            made += 1
            prev = p
        g.children = new_children
        first, last = new_first, new_last
        run_of = np.repeat(np.arange(len(cuts)), np.diff(cuts, prepend=0))
        src, dst = run_of[edges[0]], run_of[edges[1]]
        edges = (src[src != dst], dst[src != dst])  # between the runs, the next level's children
    return made
