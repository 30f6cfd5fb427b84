"""Lay out one expanded group: its BridgeGraph through the layered engine, side columns for
auxiliary nodes, embeddings beside their op (:mod:`placed`); series go to :mod:`series`.

Before layout (:func:`partition`): high fan-out parameters float beside their consumers
(:mod:`floating`), auxiliary children go to side columns (:mod:`extract`) and edges touching
them become annotation stubs (:mod:`annotate`); long skip edges are cut into stubs
(:mod:`~tb_graph_plugin.layout.scene.stubs`).

Pre: the sizes of the group's children (collapsed sizes, or the boxes of expanded child
groups laid out before: bottom-up). Post: a :class:`GroupLayout` in the group's own frame
(top-left of the group box at (0, 0), y down): no two placed boxes overlap, every box lies
inside ``[0, width] x [0, height]``, every edge starts on its source box border and ends on
its target box border; bridges sit on the group border; series members are stacked along
the rank axis in index order (member 0 at the flow's start, the bottom for rankdir BT).
"""

from __future__ import annotations

import math

from tb_graph_plugin.wire import NodeKind
from tb_graph_plugin.layout import LayoutEdge, LayoutGraph, LayoutNode, layout
from tb_graph_plugin.layout.geometry import attach_ends
from tb_graph_plugin.layout.model import RankDir
from tb_graph_plugin.layout.scene.annotate import annotate_extracted, annotate_hub_bridges
from tb_graph_plugin.layout.scene.border import band_extra, bridge_rows, place_bridges
from tb_graph_plugin.layout.scene.bridge import boundary_edges
from tb_graph_plugin.layout.scene.extract import extract_auxiliary
from tb_graph_plugin.layout.scene.floating import float_parameters
from tb_graph_plugin.layout.scene.fold import fold_bands, fold_layout
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.placed import (
    GroupLayout,
    PlacedEdge,
    PlacedNode,
    bridge_name,
    kind_of,
    place_child,
    reserved,
)
from tb_graph_plugin.layout.scene.pack import components, pack_layout, should_pack
from tb_graph_plugin.layout.scene.series import layout_series
from tb_graph_plugin.layout.scene.stubs import cut_long_edges

__all__ = ["PlacedNode", "PlacedEdge", "GroupLayout", "layout_group", "partition", "bridge_layout_graph"]


def layout_group(h, gid: int, sizes: dict[int, tuple[float, float]], o: SceneOptions, is_root: bool = False) -> GroupLayout:
    """Lay out group ``gid``; ``sizes[c]`` is the box of each child (collapsed or expanded)."""
    group = h.group(gid)
    if group.is_series and not is_root:
        return layout_series(h, gid, sizes, o)
    return _layout_flow(h, gid, sizes, o, is_root)


def partition(h, gid: int, bounds, o: SceneOptions):
    """``(core, left, right, annexes, carriers, hubs)``: the flow children, the side columns,
    the annex nodes (floating copies, annotation stubs) drawn in the children's columns, the
    floated children whose carrier copy takes their outgoing bridges (:mod:`floating`), and the
    hub bridges drawn as stubs instead of laid out (:mod:`annotate`)."""
    floated, annexes, carriers = float_parameters(h, gid, bounds, o)
    fl = frozenset(floated)
    left, right = extract_auxiliary(h, gid, o, exclude=fl)
    side = set(left) | set(right)
    annotate_extracted(h, gid, side, fl, bounds, o, annexes)
    hubs = annotate_hub_bridges(h, gid, side, fl, bounds, o, annexes)
    core = [c for c in h.group(gid).children if c not in side and c not in fl]
    return core, left, right, annexes, carriers, hubs


def _lid(c, carriers) -> str:
    return f"f{c}" if c in carriers else str(c)


def _bridge_graph(h, group, core, bounds, sizes, o: SceneOptions, annex=None, carriers=frozenset(),
                  hubs=frozenset()):
    """The BridgeGraph of a group as a private LayoutGraph (+ what each layout edge stands for, and
    the layout node of each bridge ``(incoming, outer)``; bridges joining the same children share one)."""
    if hubs:
        bounds = [be for be in bounds if (be.incoming, be.outer) not in hubs]
    lnodes = []
    for c in core:
        (rw, rh), _, _ = reserved(h, c, sizes[c], o, annex)
        lnodes.append(LayoutNode(str(c), rw, rh))
    for c in sorted(carriers):
        lnodes.append(LayoutNode(_lid(c, carriers), *o.embedding_size))
    core_set = set(core)
    # one layout node per (direction, inner children) signature: bridges that join the same
    # children are drawn side by side on the border anyway (border.py), and 600 of them as
    # separate layout nodes made a 3,000 px wide rank of dots
    inners: dict[tuple, set] = {}
    for be in bounds:
        inners.setdefault((be.incoming, be.outer), set())
        if be.inner in core_set or be.inner in carriers:
            inners[(be.incoming, be.outer)].add(be.inner)
    bridges, shared = {}, {}
    for key, inner in inners.items():
        sig = (key[0], tuple(sorted(inner)))
        if sig not in shared:
            shared[sig] = f"b{len(shared)}"
            lnodes.append(LayoutNode(shared[sig], *o.bridge_size))
        bridges[key] = shared[sig]
    ledges, edge_meta = [], []
    for me in group.metaedges:
        if me.src in core_set and me.dst in core_set:
            ledges.append(LayoutEdge(str(me.src), str(me.dst), weight=1.0, kind=me.kind))
            edge_meta.append((me.src, me.dst, me.kind, me.size, me.count, me.base_edges[0] if me.count == 1 else None))
    for be in bounds:
        if be.inner not in core_set and be.inner not in carriers:
            continue  # an extracted child: annotation stubs in its side column (annotate.py)
        b = bridges[(be.incoming, be.outer)]
        s, t = (b, str(be.inner)) if be.incoming else (_lid(be.inner, carriers), b)
        ledges.append(LayoutEdge(s, t, weight=1.0, kind=be.kind))
        count = len(be.base_edges)
        edge_meta.append((("bridge", be.incoming, be.outer) if be.incoming else be.inner,
                          be.inner if be.incoming else ("bridge", be.incoming, be.outer),
                          be.kind, be.size, count, be.base_edges[0] if count == 1 else None))
    return LayoutGraph(lnodes, ledges), edge_meta, bridges


def bridge_layout_graph(h, gid: int, o: SceneOptions = SceneOptions()) -> LayoutGraph:
    """The LayoutGraph the flow layout of group ``gid`` sees, children collapsed (bench, tests)."""
    from tb_graph_plugin.layout.scene.compose import _collapsed_size

    group = h.group(gid)
    bounds = [] if gid == h.root.id else boundary_edges(h, gid)
    core, _, _, annex, carriers, hubs = partition(h, gid, bounds, o)
    sizes = {c: _collapsed_size(h, c, o) for c in group.children}
    return _bridge_graph(h, group, core, bounds, sizes, o, annex, carriers, hubs)[0]


def _layout_flow(h, gid, sizes, o: SceneOptions, is_root: bool) -> GroupLayout:
    group = h.group(gid)
    kind_fn = kind_of(h)
    pad_top = 0.0 if is_root else o.padding_top
    pad = 0.0 if is_root else o.padding
    bounds = [] if is_root else boundary_edges(h, gid)
    core, left, right, annex, carriers, hubs = partition(h, gid, bounds, o)
    annex_edges: list[PlacedEdge] = []
    lgraph, edge_meta, bridges = _bridge_graph(h, group, core, bounds, sizes, o, annex, carriers, hubs)
    lgraph, edge_meta, stubs = cut_long_edges(lgraph, edge_meta, o.stub_min_span, o.stub_size)
    comps = components(lgraph, frozenset(bridges.values()))
    packed = should_pack(comps, len(bridges), o)
    if packed:  # a grid of components; bridges become a stub per component (pack.py)
        def lid_name(lid: str) -> str:
            return h.name_of(int(lid)) if lid.isdigit() else (h.name_of(int(lid[1:])) if lid[0] == "f" else "~" + lid)

        res, edge_meta, more = pack_layout(lgraph, edge_meta, bridges, comps, o, lid_name)
        stubs = stubs + more
        bridges = {}
    else:
        res = layout(lgraph, o.layout)
        bands = fold_bands(res, o)
        if bands > 1:  # a tall flow: bands side by side, edges between them cut into stubs (fold.py)
            res, edge_meta, more = fold_layout(lgraph, edge_meta, res, bands, o)
            stubs = stubs + more
    # side columns
    sep = max(o.layout.nodesep * 2, o.embedding_gap)

    def column(ids):
        boxes = [(reserved(h, c, sizes[c], o, annex)[0], c) for c in ids]
        width = max((b[0][0] for b in boxes), default=0.0)
        height = sum(b[0][1] for b in boxes) + sep * max(len(boxes) - 1, 0)
        return boxes, width, height

    lcol, lw, lh = column(left)
    rcol, rw_, rh = column(right)
    x0 = pad + (lw + o.side_column_gap if left else 0.0)
    core_w, core_h = (res.width, res.height) if core or carriers else (0.0, 0.0)
    inner_h = max(core_h, lh, rh)
    width = x0 + core_w + (o.side_column_gap + rw_ if right else 0.0) + pad
    height = pad_top + inner_h + pad
    if not is_root:
        width = max(width, o.meta_width)
    # bridges on the group border (border.py): inputs where the flow starts, outputs where it
    # ends, spread along the border so that they never overlap, in rows when there are many
    rd = o.layout.rankdir
    bw, bh = o.bridge_size
    start_low = rd in (RankDir.BT, RankDir.RL)
    per_border: dict[bool, list] = {True: [], False: []}
    for (incoming, outer), b in bridges.items():
        bx, by = res.positions[b]
        per_border[incoming != start_low].append((incoming, outer, bx, by))
    rows = {True: 0, False: 0}
    if rd.vertical:
        rows = {at_low: (bridge_rows(len(v), width, height, pad, o) if v else 0) for at_low, v in per_border.items()}
        extra_top, extra_bottom = band_extra(rows, pad_top, pad, o)
        height += extra_top + extra_bottom
    else:
        extra_top = 0.0
    y0 = pad_top + extra_top + (inner_h - core_h) / 2
    along_total = width if rd.vertical else height
    need = max(math.ceil(len(v) / max(rows[k] if rd.vertical else 1, 1)) for k, v in per_border.items()) * (bw + 1.0) + 2 * pad
    if need > along_total:
        if rd.vertical:
            width = need
        else:
            height = need
    per_border = {k: [(i, out, bx + x0 if rd.vertical else by + y0) for i, out, bx, by in v] for k, v in per_border.items()}
    nodes: list[PlacedNode] = []
    box: dict = {}
    for c in core:
        cx, cy = res.positions[str(c)]
        box[c] = place_child(h, c, cx + x0, cy + y0, sizes[c], o, nodes, kind_fn, annex=annex, out_edges=annex_edges)
    for c in sorted(carriers):  # the copy of a floated parameter that feeds the group's outside
        cx, cy = res.positions[_lid(c, carriers)]
        ew, eh = o.embedding_size
        name = h.name_of(c)
        nodes.append(PlacedNode(name, NodeKind.IN_EMBEDDING, cx + x0, cy + y0, ew, eh, hid=c, of=name))
        box[c] = (cx + x0, cy + y0, ew, eh)
    for boxes, cx in ((lcol, pad + lw / 2), (rcol, width - pad - rw_ / 2)):
        y = pad_top + extra_top
        for (_, ch), c in boxes:
            box[c] = place_child(h, c, cx, y + ch / 2, sizes[c], o, nodes, kind_fn, extracted=True, annex=annex,
                                 out_edges=annex_edges)
            y += ch + sep
    for incoming, outer, bx, by in place_bridges(per_border, rows, width, height, pad, rd.vertical, o):
        name = bridge_name(h, gid, incoming, outer)
        nodes.append(PlacedNode(name, NodeKind.BRIDGE, bx, by, bw, bh, of=h.name_of(outer), label=h.label(outer)))
        box[("bridge", incoming, outer)] = (bx, by, bw, bh)
    def name_of(key) -> str:
        if isinstance(key, tuple) and key[0] == "bridge":
            return bridge_name(h, gid, key[1], key[2])
        if isinstance(key, tuple):  # ("stub", k, "out" | "in")
            return f"{h.name_of(gid)}/__stub__/{key[1]}_{key[2]}"
        return h.name_of(key)

    def label_of(key) -> str:
        return name_of(key).rsplit("/", 1)[-1] if not (isinstance(key, tuple) and key[0] == "bridge") else h.label(key[2])

    for lid, key, other in stubs:
        sx, sy = res.positions[lid]
        sw, sh = o.stub_size
        arrow = "\u2192 " if key[2] == "out" else "\u2190 "
        of = h.name_of(other[2]) if isinstance(other, tuple) and other[0] == "bridge" else name_of(other)
        nodes.append(PlacedNode(name_of(key), NodeKind.STUB, sx + x0, sy + y0, sw, sh, of=of,
                                label=arrow + label_of(other)))
        box[key] = (sx + x0, sy + y0, sw, sh)
    edges = []
    for (s, t, kind, size, count, base), pts, back in zip(edge_meta, res.edge_points, res.reversed):
        pts = [[x + x0, y + y0] for x, y in pts]
        sb, tb = box[s], box[t]
        if isinstance(s, tuple) and s[0] == "bridge":  # bridges moved onto the border
            pts = [[sb[0], sb[1]]] + pts[1:]
        if isinstance(t, tuple) and t[0] == "bridge":
            pts = pts[:-1] + [[tb[0], tb[1]]]
        pts = [list(p) for p in attach_ends(pts, sb, tb)]
        edges.append(PlacedEdge(name_of(s), name_of(t), pts, kind, size, count, base, reversed=back))
    edges.extend(annex_edges)
    return GroupLayout(width, height, nodes, edges, engine="pack" if packed else res.engine_used.value,
                       seconds=res.timings.get("total", 0.0))
