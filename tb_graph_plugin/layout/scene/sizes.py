"""Collapsed node sizes, edge stroke widths and edge labels (stock TensorBoard rules), and the
room op labels take beside their ellipses (ours)."""

from __future__ import annotations

from typing import Optional

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.layout.model import LayoutResult
from tb_graph_plugin.layout.scene.options import SceneOptions

__all__ = ["meta_size", "collapsed_size", "stub_box", "edge_width", "shape_label", "op_label_room", "extent"]


def meta_size(cardinality: int, o: SceneOptions, label: str = "") -> tuple[float, float]:
    """A collapsed group's box: height from its cardinality (stock rule); width wide enough for
    its label and cardinality (ours: the stock fixed width cut most labels to a few characters),
    between ``o.meta_width`` and ``o.meta_max_width`` (longer labels end in an ellipsis)."""
    lo, hi = o.meta_card_domain
    t = min(max((cardinality - lo) / (hi - lo), 0.0), 1.0)
    chars = len(label) + (len(str(cardinality)) + 1 if cardinality > 1 else 0)
    text = o.meta_label_padding + o.label_char_width * chars
    width = min(max(o.meta_width, text), max(o.meta_width, o.meta_max_width))
    return (width, o.meta_height[0] + t * (o.meta_height[1] - o.meta_height[0]))


def collapsed_size(h: Hierarchy, c: int, o: SceneOptions) -> tuple[float, float]:
    """The box of node ``c`` drawn collapsed: an op's fixed size, a group's :func:`meta_size`."""
    if c < h.n_ops:
        return o.op_size
    return meta_size(h.cardinality(c), o, h.label(c))


def stub_box(label: str, o: SceneOptions) -> tuple[float, float]:
    """A stub's pill: as wide as its label (``o.stub_char_width`` per character and the padding,
    between ``o.stub_min_width`` and ``o.stub_max_width``), ``o.stub_height`` high."""
    width = o.stub_label_padding + o.stub_char_width * len(label)
    return (min(max(o.stub_min_width, width), o.stub_max_width), o.stub_height)


def edge_width(size: int, o: SceneOptions) -> float:
    lo, hi = o.edge_size_domain
    t = min(max((max(size, 1) - lo) / (hi - lo), 0.0), 1.0) ** o.edge_width_exponent
    return o.edge_width[0] + t * (o.edge_width[1] - o.edge_width[0])


def shape_label(count: int, shape: Optional[tuple]) -> Optional[str]:
    """``?×128`` for one tensor (``?`` unknown, ``scalar`` for rank 0), ``N tensors`` otherwise."""
    if count > 1:
        return f"{count} tensors"
    if shape is None:
        return None
    if len(shape) == 0:
        return "scalar"
    return "×".join("?" if d is None or d < 0 else str(d) for d in shape)


def op_label_room(h: Hierarchy, res: LayoutResult, o: SceneOptions) -> dict[str, float]:
    """World px right of each op node of ``res`` that its label takes (an op's label is drawn
    beside its ellipse; a group carries its label inside its box)."""
    n = h.n_ops
    return {nid: min(o.op_label_max_width, o.op_label_char_width * len(h.label(int(nid))) + 4.0)
            for nid in res.positions if nid.isdigit() and int(nid) < n}


def extent(res: LayoutResult, room: dict[str, float]) -> float:
    """The drawing's width with the op labels that stick out on its right."""
    right = res.width
    for nid, extra in room.items():
        x, _ = res.positions[nid]
        right = max(right, x + res.sizes[nid][0] / 2 + extra)
    return right
