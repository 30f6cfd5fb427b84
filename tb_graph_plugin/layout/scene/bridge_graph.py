"""A group's BridgeGraph as a private LayoutGraph: the flow children, the carrier copies of
floated parameters, one node per bridge signature, and what each layout edge stands for.

Follows [VAST] §5.2 (each group is laid out on its own, edges leaving it drawn to
bridge nodes on its border) and the stock ``render.ts`` bridge graph ([TB-SRC]). Bridges that join the same
children in the same direction share one layout node: they are drawn side by side on the border
anyway (:mod:`border`), and 600 of them as separate layout nodes made a 3,000 px wide rank of dots.

Pre: a :class:`Partition` of the group and the sizes of its children. Post: a
:class:`BridgeGraph` whose ``edges`` are parallel to ``graph.edges``; a child's layout id is
``str(hid)``, a carrier's ``f<hid>``, a bridge's ``b<k>``; no edge touches an extracted child
or a hub bridge.
"""

from __future__ import annotations

from typing import Optional

from tb_graph_plugin.cache import LruCache
from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.layout.model import LayoutEdge, LayoutGraph, LayoutNode
from tb_graph_plugin.layout.scene.bridge import BoundaryEdge, boundary_edges
from tb_graph_plugin.layout.scene.endpoint import Bridge, BridgeGraph, Child, Endpoint, FlowEdge, Partition
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.partition import partition
from tb_graph_plugin.layout.scene.placed import reserved
from tb_graph_plugin.layout.scene.sizes import collapsed_size

__all__ = ["bridge_graph", "layout_id", "bridge_layout_graph"]


def layout_id(c: int, carriers: set[int]) -> str:
    """The layout node id of child ``c`` (``f<c>``: the carrier copy of a floated parameter)."""
    return f"f{c}" if c in carriers else str(c)


def _bridge_nodes(bounds: list[BoundaryEdge], part: Partition, core_set: set[int],
                  o: SceneOptions, lnodes: list[LayoutNode]) -> dict[Bridge, str]:
    """One layout node per (direction, inner children) signature, appended to ``lnodes``."""
    inners: dict[Bridge, set] = {}
    for be in bounds:
        inner = inners.setdefault(Bridge(be.incoming, be.outer), set())
        if be.inner in core_set or be.inner in part.carriers:
            inner.add(be.inner)
    bridges, shared = {}, {}
    for key, inner in inners.items():
        sig = (key.incoming, tuple(sorted(inner)))
        if sig not in shared:
            shared[sig] = f"b{len(shared)}"
            lnodes.append(LayoutNode(shared[sig], *o.bridge_size))
        bridges[key] = shared[sig]
    return bridges


def bridge_graph(h: Hierarchy, gid: int, part: Partition, bounds: list[BoundaryEdge],
                 sizes: dict[int, tuple[float, float]], o: SceneOptions) -> BridgeGraph:
    """The BridgeGraph of group ``gid`` (see the module doc)."""
    if part.hubs:
        bounds = [be for be in bounds if Bridge(be.incoming, be.outer) not in part.hubs]
    lnodes = []
    for c in part.core:
        (rw, rh), _, _ = reserved(h, c, sizes[c], o, part.annexes)
        lnodes.append(LayoutNode(str(c), rw, rh))
    for c in sorted(part.carriers):
        lnodes.append(LayoutNode(layout_id(c, part.carriers), *o.embedding_size))
    core_set = set(part.core)
    bridges = _bridge_nodes(bounds, part, core_set, o, lnodes)
    ledges, flow = [], []
    for me in h.group(gid).metaedges:
        if me.src in core_set and me.dst in core_set:
            ledges.append(LayoutEdge(str(me.src), str(me.dst), weight=1.0, kind=me.kind))
            flow.append(FlowEdge(Child(me.src), Child(me.dst), me.kind, me.size, me.count,
                                 me.base_edges[0] if me.count == 1 else None))
    for be in bounds:
        if be.inner not in core_set and be.inner not in part.carriers:
            continue  # an extracted child: annotation stubs in its side column (annotate.py)
        key = Bridge(be.incoming, be.outer)
        b = bridges[key]
        s, t = (b, str(be.inner)) if be.incoming else (layout_id(be.inner, part.carriers), b)
        ledges.append(LayoutEdge(s, t, weight=1.0, kind=be.kind))
        count = len(be.base_edges)
        ends: tuple[Endpoint, Endpoint] = (key, Child(be.inner)) if be.incoming else (Child(be.inner), key)
        flow.append(FlowEdge(*ends, be.kind, be.size, count, be.base_edges[0] if count == 1 else None))
    return BridgeGraph(LayoutGraph(lnodes, ledges), flow, bridges)


def bridge_layout_graph(h: Hierarchy, gid: int, o: SceneOptions = SceneOptions(),
                        boundaries: Optional[LruCache] = None) -> LayoutGraph:
    """The LayoutGraph the flow layout of group ``gid`` sees, children collapsed (bench, tests)."""
    bounds = [] if gid == h.root.id else boundary_edges(h, gid, boundaries)
    part = partition(h, gid, bounds, o)
    sizes = {c: collapsed_size(h, c, o) for c in h.group(gid).children}
    return bridge_graph(h, gid, part, bounds, sizes, o).graph
