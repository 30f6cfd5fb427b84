"""The box of a flow group and what is placed in it, once the flow is laid out (steps 9-13 of
:data:`~tb_graph_plugin.layout.scene.flow.FLOW`).

The box holds, left to right, the in-column of extracted children, the laid-out flow, the
out-column ([VAST] §5.2, "Extract Auxiliary Nodes"), inside the group padding (none at the root);
bridges go on the border (:mod:`border`): inputs where the flow starts, outputs where it ends,
spread so that they never overlap, in rows below the header when there are many.

Post: :func:`measure` and :func:`spread_bridges` give the box size and the offset ``(x0, y0)``
of the flow's drawing in the group frame; the ``place_*`` functions append every child, bridge
and stub as a :class:`PlacedNode` inside ``[0, width] x [0, height]`` and record each one's own
box under its :data:`Endpoint` (for :func:`~tb_graph_plugin.layout.scene.flow` ``route``).
"""

from __future__ import annotations

import dataclasses
import math

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.layout.model import LayoutResult, RankDir
from tb_graph_plugin.layout.scene.border import band_extra, bridge_rows, place_bridges
from tb_graph_plugin.layout.scene.bridge_graph import layout_id
from tb_graph_plugin.layout.scene.endpoint import Bridge, Child, Endpoint, Partition, StubNode
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.sizes import extent, op_label_room
from tb_graph_plugin.layout.scene.placed import (
    PlacedEdge,
    PlacedNode,
    endpoint_name,
    kind_of,
    place_child,
    reserved,
    stub_label,
)
from tb_graph_plugin.wire import NodeKind

__all__ = ["Frame", "measure", "spread_bridges", "place_children", "place_bridge_nodes", "place_stub_nodes"]

Box = tuple[float, float, float, float]  # centre x, centre y, width, height


@dataclasses.dataclass
class Frame:
    """The group box: padding, side columns, the flow's offset, the bridges per border."""

    pad_top: float
    pad: float
    sep: float  # between the boxes of a side column
    lcol: list  # ((reserved w, reserved h), child id) per extracted child, in-column
    lw: float
    rcol: list  # out-column
    rw: float
    x0: float  # the flow drawing's left edge
    core_h: float
    inner_h: float
    width: float
    height: float
    y0: float = 0.0  # the flow drawing's top edge (set by spread_bridges)
    extra_top: float = 0.0  # bridge rows above the flow
    rows: dict = dataclasses.field(default_factory=dict)  # bridge rows per border (True: the low one)
    per_border: dict = dataclasses.field(default_factory=dict)  # border -> [(incoming, outer, along)]


def _column(h: Hierarchy, ids: list[int], sizes, o: SceneOptions, part: Partition, sep: float):
    boxes = [(reserved(h, c, sizes[c], o, part.annexes)[0], c) for c in ids]
    width = max((b[0][0] for b in boxes), default=0.0)
    height = sum(b[0][1] for b in boxes) + sep * max(len(boxes) - 1, 0)
    return boxes, width, height


def measure(h: Hierarchy, part: Partition, res: LayoutResult, sizes, o: SceneOptions, is_root: bool) -> Frame:
    """The box around the side columns and the flow drawing ``res`` (before bridge rows)."""
    pad_top = 0.0 if is_root else o.padding_top
    pad = 0.0 if is_root else o.padding
    sep = max(o.layout.nodesep * 2, o.embedding_gap)
    lcol, lw, lh = _column(h, part.left, sizes, o, part, sep)
    rcol, rw, rh = _column(h, part.right, sizes, o, part, sep)
    x0 = pad + (lw + o.side_column_gap if part.left else 0.0)
    # the flow's width includes the labels its ops show on their right (drawn inside the box)
    core_w = extent(res, op_label_room(h, res, o)) if part.core or part.carriers else 0.0
    core_h = res.height if part.core or part.carriers else 0.0
    inner_h = max(core_h, lh, rh)
    width = x0 + core_w + (o.side_column_gap + rw if part.right else 0.0) + pad
    height = pad_top + inner_h + pad
    if not is_root:
        width = max(width, o.meta_width)
    return Frame(pad_top, pad, sep, lcol, lw, rcol, rw, x0, core_h, inner_h, width, height)


def spread_bridges(fr: Frame, bridges: dict[Bridge, str], res: LayoutResult, o: SceneOptions) -> None:
    """Sort the bridges onto the two borders across the flow, add their rows, grow the box so
    that they fit side by side; sets ``fr.per_border`` (positions along the border), ``fr.y0``."""
    rd = o.layout.rankdir
    bw, _ = o.bridge_size
    start_low = rd in (RankDir.BT, RankDir.RL)
    per_border: dict[bool, list] = {True: [], False: []}
    for key, b in bridges.items():
        bx, by = res.positions[b]
        per_border[key.incoming != start_low].append((key.incoming, key.outer, bx, by))
    rows = {True: 0, False: 0}
    if rd.vertical:
        rows = {at_low: (bridge_rows(len(v), fr.width, fr.height, fr.pad, o) if v else 0)
                for at_low, v in per_border.items()}
        extra_top, extra_bottom = band_extra(rows, fr.pad_top, fr.pad, o)
        fr.height += extra_top + extra_bottom
    else:
        extra_top = 0.0
    fr.extra_top, fr.rows = extra_top, rows
    fr.y0 = fr.pad_top + extra_top + (fr.inner_h - fr.core_h) / 2
    along_total = fr.width if rd.vertical else fr.height
    need = max(math.ceil(len(v) / max(rows[k] if rd.vertical else 1, 1)) for k, v in per_border.items()) \
        * (bw + 1.0) + 2 * fr.pad
    if need > along_total:
        if rd.vertical:
            fr.width = need
        else:
            fr.height = need
    fr.per_border = {k: [(i, out, bx + fr.x0 if rd.vertical else by + fr.y0) for i, out, bx, by in v]
                     for k, v in per_border.items()}


def place_children(h: Hierarchy, part: Partition, res: LayoutResult, fr: Frame, sizes, o: SceneOptions,
                   nodes: list[PlacedNode], annex_edges: list[PlacedEdge], box: dict[Endpoint, Box]) -> None:
    """The flow children where the layout put them, the carrier copies, then the side columns."""
    kind_fn = kind_of(h)
    x0, y0 = fr.x0, fr.y0
    for c in part.core:
        cx, cy = res.positions[str(c)]
        box[Child(c)] = place_child(h, c, cx + x0, cy + y0, sizes[c], o, nodes, kind_fn, annex=part.annexes,
                                    out_edges=annex_edges)
    for c in sorted(part.carriers):  # the copy of a floated parameter that feeds the group's outside
        cx, cy = res.positions[layout_id(c, part.carriers)]
        ew, eh = o.embedding_size
        name = h.name_of(c)
        nodes.append(PlacedNode(name, NodeKind.IN_EMBEDDING, cx + x0, cy + y0, ew, eh, hid=c, of=name))
        box[Child(c)] = (cx + x0, cy + y0, ew, eh)
    for boxes, cx in ((fr.lcol, fr.pad + fr.lw / 2), (fr.rcol, fr.width - fr.pad - fr.rw / 2)):
        y = fr.pad_top + fr.extra_top
        for (_, ch), c in boxes:
            box[Child(c)] = place_child(h, c, cx, y + ch / 2, sizes[c], o, nodes, kind_fn, extracted=True,
                                        annex=part.annexes, out_edges=annex_edges)
            y += ch + fr.sep


def place_bridge_nodes(h: Hierarchy, gid: int, fr: Frame, o: SceneOptions, nodes: list[PlacedNode],
                       box: dict[Endpoint, Box]) -> None:
    """Each bridge on its border (``border.place_bridges``)."""
    bw, bh = o.bridge_size
    for incoming, outer, bx, by in place_bridges(fr.per_border, fr.rows, fr.width, fr.height, fr.pad,
                                                 o.layout.rankdir.vertical, o):
        key = Bridge(incoming, outer)
        nodes.append(PlacedNode(endpoint_name(h, gid, key), NodeKind.BRIDGE, bx, by, bw, bh, of=h.name_of(outer),
                                label=h.label(outer)))
        box[key] = (bx, by, bw, bh)


def place_stub_nodes(h: Hierarchy, gid: int, stubs: list[StubNode], res: LayoutResult, fr: Frame,
                     o: SceneOptions, nodes: list[PlacedNode], box: dict[Endpoint, Box]) -> None:
    """Each stub where the layout put it, labelled with an arrow and its other end."""
    for stub in stubs:
        sx, sy = res.positions[stub.lid]
        sw, sh = res.sizes[stub.lid]
        other = stub.other
        of = h.name_of(other.outer) if isinstance(other, Bridge) else endpoint_name(h, gid, other)
        nodes.append(PlacedNode(endpoint_name(h, gid, stub.key), NodeKind.STUB, sx + fr.x0, sy + fr.y0, sw, sh,
                                of=of, label=stub_label(h, gid, stub.key.direction, other)))
        box[stub.key] = (sx + fr.x0, sy + fr.y0, sw, sh)
