"""Lay out one expanded group: its BridgeGraph through the layered engine, side columns for
auxiliary nodes, embeddings beside their op, and series members stacked.

Long skip edges are cut into stubs first (:mod:`~tb_graph_plugin.layout.scene.stubs`).

Pre: the sizes of the group's children (collapsed sizes, or the boxes of expanded child
groups laid out before: bottom-up). Post: a :class:`GroupLayout` in the group's own frame
(top-left of the group box at (0, 0), y down): no two placed boxes overlap, every box lies
inside ``[0, width] x [0, height]``, every edge starts on its source box border and ends on
its target box border; bridges sit on the group border; series members are stacked along
the rank axis in index order (member 0 at the flow's start, the bottom for rankdir BT).
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from tb_graph_plugin.api.wire import NodeKind
from tb_graph_plugin.layout import LayoutEdge, LayoutGraph, LayoutNode, layout
from tb_graph_plugin.layout.geometry import attach_ends
from tb_graph_plugin.layout.model import RankDir
from tb_graph_plugin.layout.scene.bridge import boundary_edges
from tb_graph_plugin.layout.scene.extract import extract_auxiliary
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.stubs import cut_long_edges

__all__ = ["PlacedNode", "PlacedEdge", "GroupLayout", "layout_group", "bridge_layout_graph"]


@dataclasses.dataclass
class PlacedNode:
    name: str
    kind: NodeKind
    x: float  # centre, group frame
    y: float
    width: float
    height: float
    hid: Optional[int] = None  # hierarchy id (None for bridges and stubs)
    extracted: bool = False
    of: Optional[str] = None
    label: Optional[str] = None  # for bridges and stubs; others take the hierarchy label


@dataclasses.dataclass
class PlacedEdge:
    source: str
    target: str
    points: list
    kind: str
    size: int
    count: int
    base_edge: Optional[int] = None  # the base edge when count == 1 (shape label)


@dataclasses.dataclass
class GroupLayout:
    width: float
    height: float
    nodes: list[PlacedNode]
    edges: list[PlacedEdge]
    engine: str = ""
    seconds: float = 0.0


def _embedding_nodes(h, op: int, o: SceneOptions):
    if op >= h.n_ops:
        return [], []
    ins, outs = h.embeddings(op)
    return ins[: o.max_annotations], outs[: o.max_annotations]


def _reserved(h, c: int, size, o: SceneOptions):
    """Box reserved in the layout for child c: its own box plus embedding columns."""
    w, hh = size
    ins, outs = _embedding_nodes(h, c, o)
    ew, eh = o.embedding_size
    left = ew + o.embedding_gap if ins else 0.0
    right = ew + o.embedding_gap if outs else 0.0
    stack = max(len(ins), len(outs)) * (eh + o.embedding_gap) - o.embedding_gap if (ins or outs) else 0.0
    return (w + left + right, max(hh, stack)), left, right


def _place_child(h, c, cx, cy, size, o, out_nodes, kind_of, extracted=False):
    """Place child c with its reserved box centred at (cx, cy); returns the child's own box."""
    (rw, rh), left, right = _reserved(h, c, size, o)
    w, hh = size
    x = cx - rw / 2 + left + w / 2
    name = h.name_of(c)
    out_nodes.append(PlacedNode(name, kind_of(c), x, cy, w, hh, hid=c, extracted=extracted))
    ins, outs = _embedding_nodes(h, c, o)
    ew, eh = o.embedding_size
    for side, embs, kind in ((-1, ins, NodeKind.IN_EMBEDDING), (1, outs, NodeKind.OUT_EMBEDDING)):
        if not embs:
            continue
        ex = cx - rw / 2 + ew / 2 if side < 0 else cx + rw / 2 - ew / 2
        total = len(embs) * (eh + o.embedding_gap) - o.embedding_gap
        for i, emb in enumerate(embs):
            ey = cy - total / 2 + eh / 2 + i * (eh + o.embedding_gap)
            ename = h.name_of(emb)
            if h.slim.owner[emb] != c:
                ename = f"{ename}@{name}"
            out_nodes.append(PlacedNode(ename, kind, ex, ey, ew, eh, hid=emb, of=name))
    return (x, cy, w, hh)


def _spread(ideal: list[float], size: float, lo: float, hi: float) -> list[float]:
    """Positions near ``ideal`` (same order), at least ``size`` apart, inside [lo, hi] if it fits."""
    order = sorted(range(len(ideal)), key=lambda i: (ideal[i], i))
    pos = [0.0] * len(ideal)
    cur = lo - size
    for i in order:
        cur = max(ideal[i], cur + size, lo)
        pos[i] = cur
    cur = hi + size
    for i in reversed(order):  # pull back inside from the far end
        cur = min(pos[i], cur - size)
        pos[i] = cur
    return pos


def _kind_of(h):
    def kind(c):
        k = h.kind(c)
        return {"op": NodeKind.OP, "meta": NodeKind.META, "series": NodeKind.SERIES}.get(k, NodeKind.OP)
    return kind


def _bridge_name(h, gid, incoming, outer):
    return f"{h.name_of(gid)}/__bridge_{'in' if incoming else 'out'}__/{h.name_of(outer)}"


def layout_group(h, gid: int, sizes: dict[int, tuple[float, float]], o: SceneOptions, is_root: bool = False) -> GroupLayout:
    """Lay out group ``gid``; ``sizes[c]`` is the box of each child (collapsed or expanded)."""
    group = h.group(gid)
    if group.is_series and not is_root:
        return _layout_series(h, gid, sizes, o)
    return _layout_flow(h, gid, sizes, o, is_root)


def _bridge_graph(h, group, core, bounds, sizes, o: SceneOptions):
    """The BridgeGraph of a group as a private LayoutGraph (+ what each layout edge stands for)."""
    lnodes = []
    for c in core:
        (rw, rh), _, _ = _reserved(h, c, sizes[c], o)
        lnodes.append(LayoutNode(str(c), rw, rh))
    bridges = {}
    for be in bounds:
        key = (be.incoming, be.outer)
        if key not in bridges:
            bridges[key] = f"b{len(bridges)}"
            lnodes.append(LayoutNode(bridges[key], *o.bridge_size))
    core_set = set(core)
    ledges, edge_meta = [], []
    for me in group.metaedges:
        if me.src in core_set and me.dst in core_set:
            ledges.append(LayoutEdge(str(me.src), str(me.dst), weight=1.0, kind=me.kind))
            edge_meta.append((me.src, me.dst, me.kind, me.size, me.count, me.base_edges[0] if me.count == 1 else None))
    for be in bounds:
        if be.inner not in core_set:
            continue  # an extracted child: drawn in its side column without edges
        b = bridges[(be.incoming, be.outer)]
        s, t = (b, str(be.inner)) if be.incoming else (str(be.inner), b)
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
    left, right = extract_auxiliary(h, gid, o)
    side = set(left) | set(right)
    core = [c for c in group.children if c not in side]
    bounds = [] if gid == h.root.id else boundary_edges(h, gid)
    sizes = {c: _collapsed_size(h, c, o) for c in group.children}
    return _bridge_graph(h, group, core, bounds, sizes, o)[0]


def _layout_flow(h, gid, sizes, o: SceneOptions, is_root: bool) -> GroupLayout:
    group = h.group(gid)
    kind_of = _kind_of(h)
    left, right = extract_auxiliary(h, gid, o)
    side = set(left) | set(right)
    core = [c for c in group.children if c not in side]
    pad_top = 0.0 if is_root else o.padding_top
    pad = 0.0 if is_root else o.padding
    bounds = [] if is_root else boundary_edges(h, gid)
    lgraph, edge_meta, bridges = _bridge_graph(h, group, core, bounds, sizes, o)
    lgraph, edge_meta, stubs = cut_long_edges(lgraph, edge_meta, o.stub_min_span, o.stub_size)
    res = layout(lgraph, o.layout)
    # side columns
    sep = max(o.layout.nodesep * 2, o.embedding_gap)

    def column(ids):
        boxes = [(_reserved(h, c, sizes[c], o)[0], c) for c in ids]
        width = max((b[0][0] for b in boxes), default=0.0)
        height = sum(b[0][1] for b in boxes) + sep * max(len(boxes) - 1, 0)
        return boxes, width, height

    lcol, lw, lh = column(left)
    rcol, rw_, rh = column(right)
    x0 = pad + (lw + o.side_column_gap if left else 0.0)
    core_w, core_h = (res.width, res.height) if core else (0.0, 0.0)
    inner_h = max(core_h, lh, rh)
    width = x0 + core_w + (o.side_column_gap + rw_ if right else 0.0) + pad
    height = pad_top + inner_h + pad
    if not is_root:
        width = max(width, o.meta_width)
    y0 = pad_top + (inner_h - core_h) / 2
    nodes: list[PlacedNode] = []
    box: dict = {}
    for c in core:
        cx, cy = res.positions[str(c)]
        box[c] = _place_child(h, c, cx + x0, cy + y0, sizes[c], o, nodes, kind_of)
    for boxes, cx in ((lcol, pad + lw / 2), (rcol, width - pad - rw_ / 2)):
        y = pad_top
        for (bw, bh), c in boxes:
            box[c] = _place_child(h, c, cx, y + bh / 2, sizes[c], o, nodes, kind_of, extracted=True)
            y += bh + sep
    # bridges on the group border: inputs where the flow starts, outputs where it ends,
    # spread along the border so that they never overlap
    rd = o.layout.rankdir
    bw, bh = o.bridge_size
    start_low = rd in (RankDir.BT, RankDir.RL)
    per_border: dict[bool, list] = {True: [], False: []}
    for (incoming, outer), b in bridges.items():
        bx, by = res.positions[b]
        at_low = incoming != start_low
        per_border[at_low].append((incoming, outer, bx + x0 if rd.vertical else by + y0))
    along_total = width if rd.vertical else height
    need = max(len(v) for v in per_border.values()) * (bw + 1.0) + 2 * pad
    if need > along_total:
        if rd.vertical:
            width = need
        else:
            height = need
        along_total = need
    for at_low, items in per_border.items():
        spread = _spread([v[2] for v in items], (bw if rd.vertical else bh) + 1.0, pad + bw / 2, along_total - pad - bw / 2)
        for (incoming, outer, _), a in zip(items, spread):
            if rd.vertical:
                bx, by = a, (bh / 2 if at_low else height - bh / 2)
            else:
                bx, by = (bw / 2 if at_low else width - bw / 2), a
            name = _bridge_name(h, gid, incoming, outer)
            nodes.append(PlacedNode(name, NodeKind.BRIDGE, bx, by, bw, bh, of=h.name_of(outer), label=h.label(outer)))
            box[("bridge", incoming, outer)] = (bx, by, bw, bh)
    def name_of(key) -> str:
        if isinstance(key, tuple) and key[0] == "bridge":
            return _bridge_name(h, gid, key[1], key[2])
        if isinstance(key, tuple):  # ("stub", k, "out" | "in")
            return f"{h.name_of(gid)}/__stub__/{key[1]}_{key[2]}"
        return h.name_of(key)

    def label_of(key) -> str:
        return name_of(key).rsplit("/", 1)[-1] if not (isinstance(key, tuple) and key[0] == "bridge") else h.label(key[2])

    for lid, key, other in stubs:
        sx, sy = res.positions[lid]
        sw, sh = o.stub_size
        arrow = "\u2192 " if key[2] == "out" else "\u2190 "
        nodes.append(PlacedNode(name_of(key), NodeKind.STUB, sx + x0, sy + y0, sw, sh, of=name_of(other),
                                label=arrow + label_of(other)))
        box[key] = (sx + x0, sy + y0, sw, sh)
    edges = []
    for (s, t, kind, size, count, base), pts in zip(edge_meta, res.edge_points):
        pts = [[x + x0, y + y0] for x, y in pts]
        sb, tb = box[s], box[t]
        if isinstance(s, tuple) and s[0] == "bridge":  # bridges moved onto the border
            pts = [[sb[0], sb[1]]] + pts[1:]
        if isinstance(t, tuple) and t[0] == "bridge":
            pts = pts[:-1] + [[tb[0], tb[1]]]
        pts = [list(p) for p in attach_ends(pts, sb, tb)]
        edges.append(PlacedEdge(name_of(s), name_of(t), pts, kind, size, count, base))
    return GroupLayout(width, height, nodes, edges, engine=res.engine_used.value,
                       seconds=res.timings.get("total", 0.0))


def _layout_series(h, gid, sizes, o: SceneOptions) -> GroupLayout:
    """Members stacked along the rank axis in index order; bridges on the side borders."""
    group = h.group(gid)
    kind_of = _kind_of(h)
    members = group.children
    reserved = [_reserved(h, c, sizes[c], o)[0] for c in members]
    rd = o.layout.rankdir
    bounds = boundary_edges(h, gid)
    bw, bh = o.bridge_size
    side = bw + o.embedding_gap * 2 if bounds else 0.0
    inner_w = max((r[0] for r in reserved), default=0.0)
    lane = o.layout.edgesep * 2  # right-hand lane for edges between non-adjacent members
    width = max(o.padding * 2 + side * 2 + inner_w + lane * 2, o.meta_width)
    total = sum(r[1] for r in reserved) + o.series_gap * max(len(members) - 1, 0)
    n_side = max(sum(1 for k in {(b.incoming, b.outer) for b in bounds} if k[0]),
                 sum(1 for k in {(b.incoming, b.outer) for b in bounds} if not k[0]), 0)
    total = max(total, n_side * (bh + 1.0))
    height = o.padding_top + total + o.padding
    cx = width / 2
    nodes, box = [], {}
    # member 0 where the flow starts: bottom for BT, top for TB (LR/RL drawn like TB/BT)
    upward = rd in (RankDir.BT, RankDir.RL)
    y = height - o.padding if upward else o.padding_top
    for c, (rw, rh) in zip(members, reserved):
        cy = y - rh / 2 if upward else y + rh / 2
        box[c] = _place_child(h, c, cx, cy, sizes[c], o, nodes, kind_of)
        y = (y - rh - o.series_gap) if upward else (y + rh + o.series_gap)
    index = {c: i for i, c in enumerate(members)}
    edges = []
    lane_x = cx + inner_w / 2 + lane
    for me in group.metaedges:
        sb, tb = box[me.src], box[me.dst]
        if abs(index[me.src] - index[me.dst]) == 1:
            pts = [[sb[0], sb[1]], [tb[0], tb[1]]]
        else:
            pts = [[sb[0], sb[1]], [lane_x, sb[1]], [lane_x, tb[1]], [tb[0], tb[1]]]
        pts = [list(p) for p in attach_ends(pts, sb, tb)]
        edges.append(PlacedEdge(h.name_of(me.src), h.name_of(me.dst), pts, me.kind, me.size, me.count,
                                me.base_edges[0] if me.count == 1 else None))
    # bridges on the side borders (inputs left, outputs right), near their first member
    keys, ideal = [], []
    for be in bounds:
        key = (be.incoming, be.outer)
        if key not in keys:
            keys.append(key)
            ideal.append(box[be.inner][1])
    placed_bridges = {}
    for incoming in (True, False):
        idx = [i for i, k in enumerate(keys) if k[0] == incoming]
        ys = _spread([ideal[i] for i in idx], bh + 1.0, o.padding_top + bh / 2, height - o.padding - bh / 2)
        bx = bw / 2 if incoming else width - bw / 2
        for i, y in zip(idx, ys):
            name = _bridge_name(h, gid, incoming, keys[i][1])
            nodes.append(PlacedNode(name, NodeKind.BRIDGE, bx, y, bw, bh, of=h.name_of(keys[i][1])))
            placed_bridges[keys[i]] = (name, (bx, y, bw, bh))
    for be in bounds:
        ib = box[be.inner]
        name, bb = placed_bridges[(be.incoming, be.outer)]
        pts = [[bb[0], bb[1]], [ib[0], ib[1]]] if be.incoming else [[ib[0], ib[1]], [bb[0], bb[1]]]
        s_box, t_box = (bb, ib) if be.incoming else (ib, bb)
        pts = [list(p) for p in attach_ends(pts, s_box, t_box)]
        count = len(be.base_edges)
        s, t = (name, h.name_of(be.inner)) if be.incoming else (h.name_of(be.inner), name)
        edges.append(PlacedEdge(s, t, pts, be.kind, be.size, count, be.base_edges[0] if count == 1 else None))
    return GroupLayout(width, height, nodes, edges, engine="stack")
