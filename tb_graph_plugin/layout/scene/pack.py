"""Component packing of wide and flat groups: many weakly connected components in a near-square grid.

Follows [GRAPHVIZ] ``pack``/``packmode`` (each connected component laid out on its own, then the
drawings packed) and [ELK] component packing (``separateConnectedComponents``, rows wrapped to a
target aspect ratio): a split optimizer run is ~250 independent update chains; laid out as one
graph, every engine puts them side by side (10,800 x 173 px, aspect 62:1).

A group is *packed* (:func:`should_pack`) when its BridgeGraph without bridge nodes falls into at
least two components and either nothing joins them (no bridges: the root, a group without
outside edges) or there are at least ``o.pack_min_components`` of them. In a packed group a
bridge is not drawn on the group border (an edge from the border to a cell in the middle of the
grid would cross the cells before it): each component gets its own stub for each bridge it
touches (one stub per bridge and component, every edge between them drawn into it), labelled with
the outer neighbour, as the stubs of :mod:`~tb_graph_plugin.layout.scene.stubs` are.

Each component is laid out with :func:`tb_graph_plugin.layout.layout` (identical components hit
the structural memo); the drawings are placed in rows (shelves) wrapped at the width that makes
the whole about ``o.pack_aspect`` wide per unit height, largest component first (node count),
then by the smallest name among its nodes (digit runs read as numbers): the order is stable, the same group packs the same way.

Pre: a BridgeGraph (its bridge nodes are the values of ``bridges``). Post (:func:`pack_layout`): a
LayoutResult of the whole graph whose component boxes are pairwise disjoint (``o.pack_gap``
apart), each component's drawing a translation of its own layout; every edge that touched a
bridge now ends at a stub of that component, listed in the returned stubs.
"""

from __future__ import annotations

import math
import re
from typing import Callable, Optional

from tb_graph_plugin.layout import LayoutEdge, LayoutGraph, LayoutMemo, LayoutNode, LayoutResult, layout
from tb_graph_plugin.layout.model import Engine
from tb_graph_plugin.layout.scene.endpoint import Bridge, BridgeGraph, FlowEdge, Stub, StubNode, StubSizer
from tb_graph_plugin.layout.scene.options import SceneOptions

__all__ = ["components", "should_pack", "pack_layout", "shelf_offsets", "assemble", "natural_key"]

_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple:
    """Sort key reading digit runs as numbers: ``AddN_2`` before ``AddN_10``.

    >>> sorted(["AddN_10", "AddN_2", "AddN"], key=natural_key)
    ['AddN', 'AddN_2', 'AddN_10']
    """
    return tuple(int(t) if t.isdigit() else t for t in _DIGITS.split(name))


def components(graph: LayoutGraph, skip: frozenset) -> list[list[int]]:
    """Weakly connected components of ``graph`` without the nodes ``skip`` (node indices, each
    component in input order, components in order of their first node)."""
    index = {n.id: i for i, n in enumerate(graph.nodes)}
    parent = list(range(len(graph.nodes)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for e in graph.edges:
        if e.source in skip or e.target in skip:
            continue
        a, b = find(index[e.source]), find(index[e.target])
        if a != b:
            parent[max(a, b)] = min(a, b)
    out: dict[int, list[int]] = {}
    for i, n in enumerate(graph.nodes):
        if n.id not in skip:
            out.setdefault(find(i), []).append(i)
    return list(out.values())


def should_pack(comps: list, n_bridges: int, o: SceneOptions) -> bool:
    """Pack when there are >= 2 components and nothing joins them, or very many of them."""
    if not o.pack or len(comps) < 2:
        return False
    return n_bridges == 0 or len(comps) >= o.pack_min_components


def shelf_offsets(sizes: list[tuple[float, float]], gap: float, aspect: float) -> tuple[list[tuple[float, float]], float, float]:
    """Top-left corners of boxes placed in rows (in the given order), each row wrapped at the width
    that makes the whole about ``aspect`` wide per unit height; ``(corners, width, height)``.

    >>> shelf_offsets([(10, 10)] * 4, 0, 1.0)[0]
    [(0.0, 0.0), (10.0, 0.0), (0.0, 10.0), (10.0, 10.0)]
    """
    area = sum((w + gap) * (h + gap) for w, h in sizes)
    target = max(max((w for w, _ in sizes), default=0.0), math.sqrt(area * aspect))
    corners, x, y, row_h, width = [], 0.0, 0.0, 0.0, 0.0
    for w, h in sizes:
        if x > 0 and x + w > target + 1e-9:
            y += row_h + gap
            x = row_h = 0.0
        corners.append((x, y))
        width = max(width, x + w)
        x += w + gap
        row_h = max(row_h, h)
    return corners, width, y + row_h


def pack_layout(bg: BridgeGraph, comps: list[list[int]], o: SceneOptions, name_of: Callable[[str], str],
                stub_size: StubSizer, memo: Optional[LayoutMemo] = None,
                ) -> tuple[LayoutResult, list[FlowEdge], list[StubNode]]:
    """Lay out each component (bridges replaced by per-component stubs) and pack them.

    Returns ``(result, edges, stubs)``: ``result`` covers the component nodes and the new stub
    nodes (its ``edge_points``/``reversed`` parallel to the returned ``edges``), ``stubs`` holds
    one stub per bridge and component, naming the bridge.
    """
    graph = bg.graph
    bridge_ids = frozenset(bg.bridges.values())  # layout ids of bridges (several bridges may share one)
    comp_of = {}
    for k, members in enumerate(comps):
        for i in members:
            comp_of[graph.nodes[i].id] = k
    c_nodes = [[graph.nodes[i] for i in members] for members in comps]
    c_edges: list[list] = [[] for _ in comps]  # (LayoutEdge, FlowEdge)
    stub_of: dict[tuple[Bridge, int], str] = {}
    stubs = []
    for e, m in zip(graph.edges, bg.edges):
        s, t = e.source, e.target
        if s in bridge_ids or t in bridge_ids:
            b, inner = (s, t) if s in bridge_ids else (t, s)
            br = m.source if s in bridge_ids else m.target
            assert isinstance(br, Bridge)
            k = comp_of[inner]
            direction = "in" if br.incoming else "out"
            sid = stub_of.get((br, k))
            if sid is None:
                sid = stub_of[(br, k)] = f"p{len(stub_of)}"
                c_nodes[k].append(LayoutNode(sid, *stub_size(direction, br)))
                stubs.append(StubNode(sid, Stub(sid, direction), br))
            key = Stub(sid, direction)
            s, t = (sid, t) if s == b else (s, sid)
            m = m.with_ends(key, m.target) if br.incoming else m.with_ends(m.source, key)
        else:
            k = comp_of[s]
        c_edges[k].append((LayoutEdge(s, t, e.weight, e.kind), m))
    results = [layout(LayoutGraph(nodes, [x[0] for x in edges]), o.layout, memo)
               for nodes, edges in zip(c_nodes, c_edges)]
    first = [min(natural_key(name_of(n.id)) for n in nodes) for nodes in c_nodes]
    order = sorted(range(len(comps)), key=lambda k: (-len(comps[k]), first[k]))
    corners, width, height = shelf_offsets([(results[k].width, results[k].height) for k in order], o.pack_gap,
                                           o.pack_aspect)
    res, out_meta = assemble([results[k] for k in order], [c_edges[k] for k in order], corners, width, height)
    res.timings["components"] = float(len(comps))
    return res, out_meta, stubs


def assemble(results: list[LayoutResult], edges: list[list], corners, width: float,
             height: float) -> tuple[LayoutResult, list[FlowEdge]]:
    """One LayoutResult of part drawings translated to ``corners``; ``edges[k]`` lists part k's
    ``(LayoutEdge, FlowEdge)`` parallel to ``results[k].edge_points``. Returns ``(result, edges)``."""
    positions, sizes, points, back, out_meta, engines = {}, {}, [], [], [], set()
    for r, part_edges, (dx, dy) in zip(results, edges, corners):
        engines.add(r.engine_used)
        for nid, (x, y) in r.positions.items():
            positions[nid] = (x + dx, y + dy)
            sizes[nid] = r.sizes[nid]
        for (_, m), pts, rev in zip(part_edges, r.edge_points, r.reversed):
            points.append([[x + dx, y + dy] for x, y in pts])
            back.append(rev)
            out_meta.append(m)
    used = next(iter(engines)) if len(engines) == 1 else Engine.AUTO
    return LayoutResult(positions, sizes, points, width, height, used, reversed=back, timings={"total": 0.0}), out_meta
