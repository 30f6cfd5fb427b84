"""Annotation stubs for edges that touch an extracted (side-column) node.

Follows the stock tab (``render.ts`` in/out annotations) and [VAST] §5.2 ("Extract
Auxiliary Nodes": an extracted node's edges are replaced by short annotations naming the
neighbour, so no long edge runs across the picture). For every metaedge between a flow
child and an extracted child, the flow child gets a STUB in its input (left) or output
(right) column naming the extracted neighbour, and the extracted child gets one naming the
flow child; metaedges between two extracted children and boundary edges whose inner end is
extracted get stubs beside the extracted end(s) the same way. An extracted child shows at
most ``max_annotations`` named stubs per side; the rest share one ``+N more`` stub.

Hub bridges (:func:`annotate_hub_bridges`, ours): an outside neighbour joined to more than
``max_bridge_degree`` flow children (the next run of a split optimizer group is fed by 600 of
this run's ops) would be one bridge node that every layout engine must reach from all of
them: crossings by the thousand. Its boundary edges become a stub beside each inner child
instead, and the bridge is not laid out.

Pre: the group's metaedges and boundary edges, the extracted and floated child sets.
Post: for every such metaedge or boundary edge, each stub edge joins a child to a stub in
that child's own columns (so no edge crosses between the flow and a side column); every
metaedge touching an extracted child is drawn at each of its ends by a stub edge (at an
extracted end possibly merged into its ``+N more`` stub); named stubs carry ``of`` = the
neighbour's name.
"""

from __future__ import annotations

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.layout.scene.bridge import BoundaryEdge
from tb_graph_plugin.layout.scene.endpoint import Bridge, Child, Endpoint
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.placed import Annex, Annexes
from tb_graph_plugin.layout.scene.sizes import stub_box
from tb_graph_plugin.wire import EdgeKind, NodeKind

__all__ = ["annotate_extracted", "annotate_hub_bridges"]

_IN, _OUT = 0, 1


def _edge(kind, size, count, base):
    return (kind, size, count, base if count == 1 else None)


def annotate_extracted(h: Hierarchy, gid: int, side: set, floated: frozenset, bounds: list[BoundaryEdge],
                       o: SceneOptions, annexes: Annexes) -> None:
    """Add the stubs to ``annexes`` (child -> ([left], [right])), in place."""
    if not side:
        return
    # (child, column, other end) -> edges
    wanted: dict[tuple[int, int, Endpoint], list] = {}
    for me in h.group(gid).metaedges:
        if me.src in floated or (me.src not in side and me.dst not in side):
            continue
        e = _edge(me.kind, me.size, me.count, me.base_edges[0] if me.base_edges else None)
        wanted.setdefault((me.src, _OUT, Child(me.dst)), []).append(e)
        wanted.setdefault((me.dst, _IN, Child(me.src)), []).append(e)
    for be in bounds:
        if be.inner in side:
            e = _edge(be.kind, be.size, len(be.base_edges), be.base_edges[0] if be.base_edges else None)
            wanted.setdefault((be.inner, _IN if be.incoming else _OUT, Bridge(be.incoming, be.outer)), []).append(e)
    shown: dict[tuple, int] = {}
    more: dict[tuple, list] = {}
    n_more: dict[tuple, int] = {}
    for (child, col, other), edges in wanted.items():
        if child in side:
            k = shown.get((child, col), 0)
            if k >= o.max_annotations:
                more.setdefault((child, col), []).extend(edges)
                n_more[(child, col)] = n_more.get((child, col), 0) + 1
                continue
            shown[(child, col)] = k + 1
        outer = other.outer if isinstance(other, Bridge) else other.hid
        arrow = "\u2190 " if col == _IN else "\u2192 "
        name = f"{h.name_of(child)}/__ann_{'in' if col == _IN else 'out'}__/{h.name_of(outer)}"
        annexes.setdefault(child, ([], []))[col].append(
            Annex(name, NodeKind.STUB, *stub_box(arrow + h.label(outer), o), of=h.name_of(outer), label=arrow + h.label(outer),
                  edges=list(edges)))
    for (child, col), edges in more.items():
        kinds = {e[0] for e in edges}
        kind = (EdgeKind.DATA if EdgeKind.DATA in kinds
                else (EdgeKind.REFERENCE if EdgeKind.REFERENCE in kinds else EdgeKind.CONTROL))
        merged = (kind, sum(e[1] for e in edges), sum(e[2] for e in edges), None)
        name = f"{h.name_of(child)}/__ann_{'in' if col == _IN else 'out'}__/+more"
        annexes.setdefault(child, ([], []))[col].append(
            Annex(name, NodeKind.STUB, *stub_box(f"+{n_more[(child, col)]} more", o), label=f"+{n_more[(child, col)]} more",
                  edges=[merged]))


def annotate_hub_bridges(h: Hierarchy, gid: int, side: set, floated: frozenset, bounds: list[BoundaryEdge],
                         o: SceneOptions, annexes: Annexes) -> frozenset[Bridge]:
    """Stubs for the boundary edges of hub bridges, added to ``annexes``; the hub keys.

    Post: every boundary edge between a flow child and an outside neighbour with more than
    ``o.max_bridge_degree`` such edges (per direction) is drawn as a stub edge in that child's
    own column, and the returned bridges are not laid out.
    """
    if o.max_bridge_degree <= 0:
        return frozenset()
    degree: dict[Bridge, int] = {}
    for be in bounds:
        if be.inner not in side and be.inner not in floated:
            key = Bridge(be.incoming, be.outer)
            degree[key] = degree.get(key, 0) + 1
    hubs = frozenset(k for k, d in degree.items() if d > o.max_bridge_degree)
    for be in bounds:
        if Bridge(be.incoming, be.outer) not in hubs or be.inner in side or be.inner in floated:
            continue
        col = _IN if be.incoming else _OUT
        arrow = "\u2190 " if col == _IN else "\u2192 "
        name = f"{h.name_of(be.inner)}/__ann_{'in' if col == _IN else 'out'}__/{h.name_of(be.outer)}"
        edge = _edge(be.kind, be.size, len(be.base_edges), be.base_edges[0] if be.base_edges else None)
        annexes.setdefault(be.inner, ([], []))[col].append(
            Annex(name, NodeKind.STUB, *stub_box(arrow + h.label(be.outer), o), of=h.name_of(be.outer),
                  label=arrow + h.label(be.outer),
                  edges=[edge]))
    return hubs
