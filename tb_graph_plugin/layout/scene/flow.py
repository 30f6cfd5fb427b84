"""Lay out one expanded group as a flow: the steps of :data:`FLOW`, in order, over a :class:`Flow`.

1. ``boundary``        edges crossing the group border (``bridge.boundary_edges``; none at the root)
2. ``partition``       floated parameters, side columns, annotation and hub stubs (``partition``)
3. ``bridge_graph``    the group's BridgeGraph as a private LayoutGraph (``bridge_graph``)
4. ``cut_long_edges``  long skip edges -> labelled stubs, each a pill holding its label (``stubs``,
                       [NGRAPH-VIS], span > 20)
5. ``components``      weakly connected components; packed or not (``pack.should_pack``)
6. ``pack``            (packed) a grid of components, bridges -> a stub per component (``pack``)
7. ``layout``          (not packed) the BridgeGraph through the layered engine
8. ``bands``           (not packed) how many bands, counting the op labels' room (``fold.fold_bands``;
                       a group the first view opens: ``fold.fit_bands``)
9. ``fold``            (drawing taller than ``fold_aspect``, or than a first view's room) bands side by side,
                       the edges between bands drawn in the gaps (``fold``)
10.-14.                the group box and what is placed in it (:mod:`~tb_graph_plugin.layout.scene.frame`):
                       ``frame`` (side columns, box size), ``border`` (bridges spread on the border,
                       in rows when many), ``place_children``, ``place_bridges``, ``place_stubs``
15. ``route``          edges from the layout, bridge ends moved onto the border, attached to boxes

Pre: the sizes of the group's children (collapsed, or the boxes of expanded child groups laid
out before: bottom-up). Post: the :mod:`group` post-conditions.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.layout import LayoutResult, layout
from tb_graph_plugin.layout.geometry import attach_ends
from tb_graph_plugin.layout.scene.bridge import BoundaryEdge, boundary_edges
from tb_graph_plugin.layout.scene.bridge_graph import bridge_graph
from tb_graph_plugin.layout.scene.cache import LayoutCache
from tb_graph_plugin.layout.scene.endpoint import (Bridge, BridgeGraph, Endpoint, FlowEdge, Partition, StubNode,
                                                  StubSizer)
from tb_graph_plugin.layout.scene.fold import fit_bands, fold_bands, fold_layout
from tb_graph_plugin.layout.scene.frame import (Frame, measure, place_bridge_nodes, place_children, place_stub_nodes,
                                               spread_bridges)
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.pack import components, pack_layout, should_pack
from tb_graph_plugin.layout.scene.partition import partition
from tb_graph_plugin.layout.scene.placed import GroupLayout, PlacedEdge, PlacedNode, endpoint_name, stub_label
from tb_graph_plugin.layout.scene.sizes import op_label_room, stub_box
from tb_graph_plugin.layout.scene.stubs import cut_long_edges
from tb_graph_plugin.pipeline import Pipeline, Step

__all__ = ["Flow", "FLOW", "layout_flow"]


@dataclasses.dataclass
class Flow:
    """The state the steps of :data:`FLOW` fill in, in step order."""

    h: Hierarchy
    gid: int
    sizes: dict[int, tuple[float, float]]
    o: SceneOptions
    is_root: bool
    cache: LayoutCache
    fit_h: Optional[float] = None  # the height a first view gives this flow (fold.fold_height)
    bounds: list[BoundaryEdge] = dataclasses.field(default_factory=list)
    part: Partition = dataclasses.field(init=False)
    bg: BridgeGraph = dataclasses.field(init=False)
    stubs: list[StubNode] = dataclasses.field(default_factory=list)
    comps: list[list[int]] = dataclasses.field(default_factory=list)
    packed: bool = False
    res: LayoutResult = dataclasses.field(init=False)
    label_room: dict[str, float] = dataclasses.field(default_factory=dict)  # op labels right of their ellipses
    bands: int = 1  # the flow folded into this many bands (fold.py)
    flow: list[FlowEdge] = dataclasses.field(default_factory=list)  # parallel to res.edge_points
    bridges: dict[Bridge, str] = dataclasses.field(default_factory=dict)  # laid out on the border
    frame: Frame = dataclasses.field(init=False)
    nodes: list[PlacedNode] = dataclasses.field(default_factory=list)
    edges: list[PlacedEdge] = dataclasses.field(default_factory=list)
    annex_edges: list[PlacedEdge] = dataclasses.field(default_factory=list)
    box: dict[Endpoint, tuple[float, float, float, float]] = dataclasses.field(default_factory=dict)


def _stub_sizer(f: Flow) -> StubSizer:
    """A stub's pill as big as its label (``sizes.stub_box`` of ``placed.stub_label``)."""
    return lambda direction, other: stub_box(stub_label(f.h, f.gid, direction, other), f.o)


def _boundary(f: Flow) -> None:
    f.bounds = [] if f.is_root else boundary_edges(f.h, f.gid, f.cache.boundaries)


def _partition(f: Flow) -> None:
    f.part = partition(f.h, f.gid, f.bounds, f.o)


def _bridge_graph(f: Flow) -> None:
    f.bg = bridge_graph(f.h, f.gid, f.part, f.bounds, f.sizes, f.o)


def _cut_long_edges(f: Flow) -> None:
    f.bg, f.stubs = cut_long_edges(f.bg, f.o.stub_min_span, _stub_sizer(f))


def _components(f: Flow) -> None:
    f.comps = components(f.bg.graph, frozenset(f.bg.bridges.values()))
    f.packed = should_pack(f.comps, len(f.bg.bridges), f.o)


def _pack(f: Flow) -> None:
    h = f.h

    def lid_name(lid: str) -> str:
        return h.name_of(int(lid)) if lid.isdigit() else (h.name_of(int(lid[1:])) if lid[0] == "f" else "~" + lid)

    f.res, f.flow, more = pack_layout(f.bg, f.comps, f.o, lid_name, _stub_sizer(f), f.cache.memo)
    f.stubs = f.stubs + more
    f.bridges = {}


def _layout(f: Flow) -> None:
    f.res = layout(f.bg.graph, f.o.layout, f.cache.memo)
    f.flow, f.bridges = f.bg.edges, f.bg.bridges


def _bands(f: Flow) -> None:
    f.label_room = op_label_room(f.h, f.res, f.o)
    # a group the first view opens: the bands that fit its room there best; else (and any other
    # group) as many as its aspect asks
    f.bands = 1 if f.fit_h is None else fit_bands(f.bg, f.res, f.o, f.fit_h, f.cache.memo, f.label_room)
    if f.bands == 1:
        f.bands = fold_bands(f.res, f.o, f.label_room)


def _fold(f: Flow) -> None:
    f.res, f.flow, more = fold_layout(f.bg, f.res, f.bands, f.o, f.cache.memo, f.label_room)
    f.stubs = f.stubs + more


def _frame(f: Flow) -> None:
    f.frame = measure(f.h, f.part, f.res, f.sizes, f.o, f.is_root)


def _border(f: Flow) -> None:
    spread_bridges(f.frame, f.bridges, f.res, f.o)


def _place_children(f: Flow) -> None:
    place_children(f.h, f.part, f.res, f.frame, f.sizes, f.o, f.nodes, f.annex_edges, f.box)


def _place_bridges(f: Flow) -> None:
    place_bridge_nodes(f.h, f.gid, f.frame, f.o, f.nodes, f.box)


def _place_stubs(f: Flow) -> None:
    place_stub_nodes(f.h, f.gid, f.stubs, f.res, f.frame, f.o, f.nodes, f.box)


def _route(f: Flow) -> None:
    """Edges from the layout in the group frame, bridge ends on the border, attached to the boxes."""
    x0, y0 = f.frame.x0, f.frame.y0
    for fe, pts, back in zip(f.flow, f.res.edge_points, f.res.reversed):
        pts = [[x + x0, y + y0] for x, y in pts]
        sb, tb = f.box[fe.source], f.box[fe.target]
        if isinstance(fe.source, Bridge):  # bridges moved onto the border
            pts = [[sb[0], sb[1]]] + pts[1:]
        if isinstance(fe.target, Bridge):
            pts = pts[:-1] + [[tb[0], tb[1]]]
        pts = [list(p) for p in attach_ends(pts, sb, tb)]
        f.edges.append(PlacedEdge(endpoint_name(f.h, f.gid, fe.source), endpoint_name(f.h, f.gid, fe.target), pts,
                                  fe.kind, fe.size, fe.count, fe.base_edge, reversed=back))
    f.edges.extend(f.annex_edges)


FLOW: Pipeline[Flow] = Pipeline("flow", [
    Step("boundary", _boundary),
    Step("partition", _partition),
    Step("bridge_graph", _bridge_graph),
    Step("cut_long_edges", _cut_long_edges),
    Step("components", _components),
    Step("pack", _pack, when=lambda f: f.packed),
    Step("layout", _layout, when=lambda f: not f.packed),
    Step("bands", _bands, when=lambda f: not f.packed),
    Step("fold", _fold, when=lambda f: f.bands > 1),
    Step("frame", _frame),
    Step("border", _border),
    Step("place_children", _place_children),
    Step("place_bridges", _place_bridges),
    Step("place_stubs", _place_stubs),
    Step("route", _route),
])


def layout_flow(h: Hierarchy, gid: int, sizes: dict[int, tuple[float, float]], o: SceneOptions,
                is_root: bool, cache: LayoutCache, fit_h: Optional[float] = None) -> GroupLayout:
    """Group ``gid`` laid out by :data:`FLOW` (see the module doc); ``fit_h``: the height a first
    view gives it (``fold.fold_height``), None for a group the first view does not open."""
    f = FLOW.run(Flow(h, gid, sizes, o, is_root, cache, fit_h))
    return GroupLayout(f.frame.width, f.frame.height, f.nodes, f.edges,
                       engine="pack" if f.packed else f.res.engine_used.value,
                       seconds=f.res.timings.get("total", 0.0))
