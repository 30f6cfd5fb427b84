"""Expanded SeriesNode: members stacked along the rank axis in index order.

A series (``add_[1-5]``, ``Layer[0-5]``) is drawn as a column: member 0 where the flow starts
(the bottom for rankdir BT), each next member above the previous one, ``series_gap`` apart; a
stack more than ``series_max_aspect`` times as tall as wide, or one the first view opens taller than
its room there (``fold.window_bands``: BERT's 12 layers), wraps into columns of equal member
count (:func:`stack_columns`, ours: the 428 members of ``sgd/Mul_[0-427]`` were 81 x 11,154 px),
read column by column, left to right (a wrapped stack draws its boundary edges as stubs beside
each member, :func:`border_stubs`, not as lines from the side borders across the columns);
edges between consecutive members are straight, others run in a lane on the right; bridges
for edges crossing the series border sit on the left (inputs) and right (outputs) borders,
spread so that they never overlap.

Pre: member sizes. Post: the :mod:`group` post-conditions, and within each column members'
boxes are ordered along the rank axis by index with no overlap; column ``j`` holds the members
after those of column ``j - 1``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Optional

from tb_graph_plugin.cache import LruCache
from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.layout.geometry import attach_ends
from tb_graph_plugin.layout.model import RankDir
from tb_graph_plugin.layout.scene.bridge import BoundaryEdge, boundary_edges
from tb_graph_plugin.layout.scene.endpoint import Bridge
from tb_graph_plugin.layout.scene.fold import window_bands
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.placed import (
    Annex,
    Annexes,
    GroupLayout,
    PlacedEdge,
    PlacedNode,
    endpoint_name,
    kind_of,
    place_child,
    reserved,
    spread,
)
from tb_graph_plugin.layout.scene.sizes import stub_box
from tb_graph_plugin.wire import NodeKind

__all__ = ["layout_series", "stack_columns"]


def stack_columns(heights: list[float], col_w: float, o: SceneOptions, fit_h: Optional[float] = None) -> list[list[int]]:
    """Member indices per column, in index order: one column while the stack is at most
    ``o.series_max_aspect`` times as tall as wide, else ``c`` columns whose member counts differ by at most one, with
    ``c`` chosen so that the whole is about ``o.pack_aspect`` wide per unit height; a stack taller
    than ``fit_h`` (a first view's, :func:`~tb_graph_plugin.layout.scene.fold.window_bands`) in
    as many columns as fit ``o.fold_window``'s width and ``fit_h`` best.

    >>> stack_columns([10.0] * 3, 20.0, SceneOptions())
    [[0, 1, 2]]
    >>> [len(c) for c in stack_columns([10.0] * 100, 10.0, SceneOptions())]
    [12, 11, 11, 11, 11, 11, 11, 11, 11]
    """
    n = len(heights)
    total = sum(heights) + o.series_gap * max(n - 1, 0)
    step = col_w + o.series_column_gap
    # a stack the first view opens, taller than its room there: the columns that fit it best
    cols = 1 if fit_h is None else window_bands(total, step, o.series_column_gap, n // 2, o, fit_h)
    if cols < 2 and n >= 2 and total > o.series_max_aspect * col_w:
        cols = max(2, min(n, round(math.sqrt(o.pack_aspect * total / step))))
    if cols < 2:
        return [list(range(n))]
    out, start = [], 0
    for j in range(cols):  # column lengths differ by at most one member
        end = start + n // cols + (1 if j < n % cols else 0)
        out.append(list(range(start, end)))
        start = end
    return out


@dataclasses.dataclass
class _Stack:
    """A series' members in columns, with the boundary edges still drawn as bridges."""

    members: list[int]
    boxes: list  # reserved (w, h) per member
    columns: list[list[int]]  # member indices per column
    inner_w: float
    lane: float  # right-hand lane for edges between non-adjacent members
    bounds: list[BoundaryEdge]  # [] once wrapped (then drawn as stubs, ``annex``)
    annex: Optional[Annexes]


def _stack(h: Hierarchy, gid: int, sizes, o: SceneOptions, bounds: list[BoundaryEdge],
           fit_h: Optional[float] = None) -> _Stack:
    members = h.group(gid).children
    member_boxes = [reserved(h, c, sizes[c], o)[0] for c in members]
    lane = o.layout.edgesep * 2
    annex = None
    inner_w = max((r[0] for r in member_boxes), default=0.0)
    columns = stack_columns([r[1] for r in member_boxes], inner_w + lane * 2, o, fit_h)
    if len(columns) > 1 and bounds:  # wrapped: a line from the side border would cross the columns
        annex = border_stubs(h, bounds, o)
        bounds = []
        member_boxes = [reserved(h, c, sizes[c], o, annex)[0] for c in members]
        inner_w = max((r[0] for r in member_boxes), default=0.0)
        columns = stack_columns([r[1] for r in member_boxes], inner_w + lane * 2, o, fit_h)
    return _Stack(members, member_boxes, columns, inner_w, lane, bounds, annex)


def _box_size(st: _Stack, o: SceneOptions) -> tuple[float, float, float]:
    """``(width, height, x of the first column's centre)`` of the series box."""
    bw, bh = o.bridge_size
    side = bw + o.embedding_gap * 2 if st.bounds else 0.0
    col_w = st.inner_w + st.lane * 2
    n_cols = len(st.columns)
    width = max(o.padding * 2 + side * 2 + col_w * n_cols + o.series_column_gap * (n_cols - 1), o.meta_width)
    total = max(sum(st.boxes[i][1] for i in col) + o.series_gap * max(len(col) - 1, 0) for col in st.columns)
    keys = {(b.incoming, b.outer) for b in st.bounds}
    n_side = max(sum(1 for k in keys if k[0]), sum(1 for k in keys if not k[0]), 0)
    total = max(total, n_side * (bh + 1.0))
    height = o.padding_top + total + o.padding
    x_first = (width - col_w * n_cols - o.series_column_gap * (n_cols - 1)) / 2 + col_w / 2
    return width, height, x_first


def _place_members(h: Hierarchy, st: _Stack, sizes, o: SceneOptions, height: float, x_first: float,
                   nodes: list, annex_edges: list) -> tuple[dict, dict]:
    """Members placed column by column; ``(box per member, lane x per member)``."""
    kind_fn = kind_of(h)
    col_w = st.inner_w + st.lane * 2
    box, lane_of = {}, {}
    # member 0 where the flow starts: bottom for BT, top for TB (LR/RL drawn like TB/BT)
    upward = o.layout.rankdir in (RankDir.BT, RankDir.RL)
    for j, col in enumerate(st.columns):
        cx = x_first + j * (col_w + o.series_column_gap)
        y = height - o.padding if upward else o.padding_top
        for i in col:
            c, (_, rh) = st.members[i], st.boxes[i]
            cy = y - rh / 2 if upward else y + rh / 2
            box[c] = place_child(h, c, cx, cy, sizes[c], o, nodes, kind_fn, annex=st.annex, out_edges=annex_edges)
            lane_of[c] = cx + st.inner_w / 2 + st.lane
            y = (y - rh - o.series_gap) if upward else (y + rh + o.series_gap)
    return box, lane_of


def _member_edges(h: Hierarchy, gid: int, st: _Stack, box: dict, lane_of: dict) -> list[PlacedEdge]:
    """Straight between consecutive members of a column, else through the right-hand lane."""
    index = {c: i for i, c in enumerate(st.members)}
    column_of = {st.members[i]: j for j, col in enumerate(st.columns) for i in col}
    edges = []
    for me in h.group(gid).metaedges:
        sb, tb = box[me.src], box[me.dst]
        if abs(index[me.src] - index[me.dst]) == 1 and column_of[me.src] == column_of[me.dst]:
            pts = [[sb[0], sb[1]], [tb[0], tb[1]]]
        else:
            lane_x = lane_of[me.src]
            pts = [[sb[0], sb[1]], [lane_x, sb[1]], [lane_x, tb[1]], [tb[0], tb[1]]]
        pts = [list(p) for p in attach_ends(pts, sb, tb)]
        edges.append(PlacedEdge(h.name_of(me.src), h.name_of(me.dst), pts, me.kind, me.size, me.count,
                                me.base_edges[0] if me.count == 1 else None,
                                reversed=index[me.src] > index[me.dst]))  # against the stack's flow
    return edges


def _side_bridges(h: Hierarchy, gid: int, bounds: list[BoundaryEdge], box: dict, o: SceneOptions, width: float,
                  height: float, nodes: list, edges: list) -> None:
    """Bridges on the side borders (inputs left, outputs right), near their first member."""
    bw, bh = o.bridge_size
    keys, ideal = [], []
    for be in bounds:
        key = Bridge(be.incoming, be.outer)
        if key not in keys:
            keys.append(key)
            ideal.append(box[be.inner][1])
    placed_bridges = {}
    for incoming in (True, False):
        idx = [i for i, k in enumerate(keys) if k.incoming == incoming]
        ys = spread([ideal[i] for i in idx], bh + 1.0, o.padding_top + bh / 2, height - o.padding - bh / 2)
        bx = bw / 2 if incoming else width - bw / 2
        for i, y in zip(idx, ys):
            name = endpoint_name(h, gid, keys[i])
            nodes.append(PlacedNode(name, NodeKind.BRIDGE, bx, y, bw, bh, of=h.name_of(keys[i].outer)))
            placed_bridges[keys[i]] = (name, (bx, y, bw, bh))
    for be in bounds:
        ib = box[be.inner]
        name, bb = placed_bridges[Bridge(be.incoming, be.outer)]
        pts = [[bb[0], bb[1]], [ib[0], ib[1]]] if be.incoming else [[ib[0], ib[1]], [bb[0], bb[1]]]
        s_box, t_box = (bb, ib) if be.incoming else (ib, bb)
        pts = [list(p) for p in attach_ends(pts, s_box, t_box)]
        count = len(be.base_edges)
        s, t = (name, h.name_of(be.inner)) if be.incoming else (h.name_of(be.inner), name)
        edges.append(PlacedEdge(s, t, pts, be.kind, be.size, count, be.base_edges[0] if count == 1 else None))


def layout_series(h: Hierarchy, gid: int, sizes: dict[int, tuple[float, float]], o: SceneOptions,
                  boundaries: Optional[LruCache] = None, fit_h: Optional[float] = None) -> GroupLayout:
    """Members stacked along the rank axis in index order; bridges on the side borders.
    ``boundaries``: the boundary-edge memo of ``h`` (``LayoutCache.boundaries``); ``fit_h``: the
    height a first view gives the stack (``fold.fold_height``), None for a group it does not open."""
    st = _stack(h, gid, sizes, o, boundary_edges(h, gid, boundaries), fit_h)
    width, height, x_first = _box_size(st, o)
    nodes: list[PlacedNode] = []
    annex_edges: list[PlacedEdge] = []
    box, lane_of = _place_members(h, st, sizes, o, height, x_first, nodes, annex_edges)
    edges = _member_edges(h, gid, st, box, lane_of)
    _side_bridges(h, gid, st.bounds, box, o, width, height, nodes, edges)
    edges.extend(annex_edges)
    return GroupLayout(width, height, nodes, edges, engine="stack")


def border_stubs(h: Hierarchy, bounds: list[BoundaryEdge], o: SceneOptions) -> Annexes:
    """Annexes: each boundary edge of a wrapped stack as a stub beside its member naming the
    outside end (inputs left, outputs right; one stub per member, direction and outside node)."""
    annex: dict = {}
    stubs: dict = {}
    for be in bounds:
        key = (be.inner, be.incoming, be.outer)
        count = len(be.base_edges)
        edge = (be.kind, be.size, count, be.base_edges[0] if count == 1 else None)
        if key in stubs:
            stubs[key].edges.append(edge)
            continue
        col = 0 if be.incoming else 1
        arrow = "\u2190 " if be.incoming else "\u2192 "
        name = f"{h.name_of(be.inner)}/__ann_{'in' if be.incoming else 'out'}__/{h.name_of(be.outer)}"
        label = arrow + h.label(be.outer)
        stubs[key] = Annex(name, NodeKind.STUB, *stub_box(label, o), of=h.name_of(be.outer), label=label, edges=[edge])
        annex.setdefault(be.inner, ([], []))[col].append(stubs[key])
    return annex
