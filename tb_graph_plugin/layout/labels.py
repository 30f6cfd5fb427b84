"""Label placement for drawings made on the server (the SVG export), with the canvas's rules.

Mirrors ``frontend/src/render/labels.ts`` (the same rules): a greedy placer over candidate spots
([CMS95], docs/references.md: "An empirical study of algorithms for point-feature label
placement"), in priority order: expanded groups' headers, collapsed groups' and series' labels
inside their box, op labels beside the ellipse (right, left, above, below), edge labels on the
middle of a segment of their own edge (longest first; the same text nearby once). A text is
placed only where its box covers no text placed before and no node box other than its own
(expanded groups contain, they cover nothing); no free spot: not drawn. A label that must be
cut keeps the part that differs: a PyTorch ``Type[attribute]`` becomes ``attribute · Type``
before the cut. Bridges, embeddings and stubs carry no text (their names are in ``<title>``).

Text boxes are measured with :func:`text_width`: Helvetica's advance widths (the AFM metrics of
the PostScript core font; Arial shares them), the font the SVG export asks for first.

Pre: a wire Scene (absolute px, y down). Post: :func:`place_labels` returns texts whose boxes
are pairwise disjoint and cover no node but their owner; every text is at least ``min_px``.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Optional

from tb_graph_plugin import wire

__all__ = ["PlacedText", "text_width", "attribute_first", "place_labels", "boxes_intersect"]

# Helvetica advance widths per 1000 em (ASCII 32..126), the PostScript core-font AFM
_HELVETICA = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,  # space ! " # $ % & ' ( ) * + , - . /
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,  # 0-9 : ; < = > ?
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,  # @ A-O
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,  # P-Z [ \ ] ^ _
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,  # ` a-o
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,  # p-z { | } ~
]
_OTHER = {"\u00d7": 584, "\u2026": 1000, "\u00b7": 278, "\u2192": 1000, "\u2190": 1000}
FONT_FAMILY = "Helvetica, Arial, sans-serif"


def text_width(text: str, px: float) -> float:
    """Advance width of ``text`` at ``px`` (Helvetica metrics; other characters 0.6 em).

    >>> round(text_width("AddN", 10), 2)
    25.01
    """
    total = 0
    for ch in text:
        o = ord(ch)
        total += _HELVETICA[o - 32] if 32 <= o <= 126 else _OTHER.get(ch, 600)
    return total * px / 1000.0


_ATTRIBUTE = re.compile(r"^([A-Za-z_][\w.]*)\[([^\]]+)\]$")
_RANGE = re.compile(r"^\d+\s*[-,][\d\s,\-]*$")


def attribute_first(label: str) -> Optional[str]:
    """``layer1 · Sequential`` for ``Sequential[layer1]`` (not for a series range ``mixed[4-7]``).

    >>> attribute_first("Sequential[layer1]"), attribute_first("mixed[4-7]")
    ('layer1 · Sequential', None)
    """
    m = _ATTRIBUTE.match(label)
    return f"{m.group(2)} \u00b7 {m.group(1)}" if m and not _RANGE.match(m.group(2)) else None


@dataclasses.dataclass
class PlacedText:
    text: str
    owner: str  # node name, or "edge:<source>-><target>"
    x0: float
    y0: float
    x1: float
    y1: float
    px: float

    @property
    def anchor_x(self) -> float:  # left end of the text (SVG text-anchor start)
        return self.x0

    @property
    def baseline_y(self) -> float:  # the SVG baseline of a text whose box is [y0, y1]
        return self.y1 - 0.22 * self.px


def boxes_intersect(a, b, tol: float = 0.01) -> bool:
    return a[0] < b[2] - tol and b[0] < a[2] - tol and a[1] < b[3] - tol and b[1] < a[3] - tol


class _Grid:
    def __init__(self, cell: float = 64.0):
        self.cell = cell
        self.cells: dict[tuple[int, int], list[int]] = {}

    def keys(self, r):
        c = self.cell
        for j in range(int(r[1] // c), int(r[3] // c) + 1):
            for i in range(int(r[0] // c), int(r[2] // c) + 1):
                yield i, j

    def add(self, r, item: int) -> None:
        for k in self.keys(r):
            self.cells.setdefault(k, []).append(item)

    def near(self, r):
        seen = set()
        for k in self.keys(r):
            for item in self.cells.get(k, ()):
                if item not in seen:
                    seen.add(item)
                    yield item


def _fit(text: str, avail: float, px: float, min_px: float) -> Optional[tuple[str, float]]:
    """``(text, px)`` fitting ``avail``: shrunk down to ``max(0.8 px, min_px)``, then cut (``…``)."""
    if avail <= px:
        return None
    w = text_width(text, px)
    if w > avail:
        px2 = max(px * 0.8, min_px, px * avail / w)
        if px2 < px:
            px, w = px2, text_width(text, px2)
    if w <= avail + 1e-6:  # (shrunk to fit exactly: rounding may exceed it by an ulp)
        return text, px
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if text_width(text[:mid] + "\u2026", px) <= avail:
            lo = mid
        else:
            hi = mid - 1
    return (text[:lo] + "\u2026", px) if lo else None


def _fit_label(text: str, avail: float, px: float, min_px: float):
    got = _fit(text, avail, px, min_px)
    if got and got[0] != text:
        alt = attribute_first(text)
        if alt:
            return _fit(alt, avail, px, min_px)
    return got


def place_labels(scene: wire.Scene, group_px: float = 10.0, header_px: float = 9.0, op_px: float = 9.0,
                 edge_px: float = 9.0, min_px: float = 9.0, op_max_width: float = 120.0) -> list[PlacedText]:
    """The texts to draw for ``scene`` (see the module doc), in drawing order."""
    K = wire.NodeKind
    by_name = {n.name: n for n in scene.nodes}
    obstacles = [n for n in scene.nodes if not n.expanded]
    ogrid = _Grid()
    for i, n in enumerate(obstacles):
        ogrid.add((n.x - n.width / 2, n.y - n.height / 2, n.x + n.width / 2, n.y + n.height / 2), i)
    placed: list[PlacedText] = []
    tgrid = _Grid()

    def free(r, owner: str) -> bool:
        for i in tgrid.near(r):
            p = placed[i]
            if boxes_intersect(r, (p.x0, p.y0, p.x1, p.y1)):
                return False
        for i in ogrid.near(r):
            n = obstacles[i]
            if n.name != owner and boxes_intersect(r, (n.x - n.width / 2, n.y - n.height / 2, n.x + n.width / 2,
                                                       n.y + n.height / 2)):
                return False
        return True

    def add(text, owner, x0, yc, px) -> bool:
        r = (x0, yc - px / 2, x0 + text_width(text, px), yc + px / 2)
        if not free(r, owner):
            return False
        tgrid.add(r, len(placed))
        placed.append(PlacedText(text, owner, *r, px))
        return True

    for n in sorted((n for n in scene.nodes if n.expanded), key=lambda n: len(n.name)):  # headers
        x0, y0 = n.x - n.width / 2, n.y - n.height / 2
        got = _fit_label(f"{n.label} ({n.cardinality})" if n.cardinality > 1 else n.label, n.width - 8, header_px,
                         min_px)
        if got:
            add(got[0], n.name, x0 + 4, y0 + 7, got[1])
    for n in scene.nodes:  # collapsed groups and series: inside their box
        if n.expanded or n.kind not in (K.META, K.SERIES):
            continue
        px = min(group_px, max(3.0, n.height * 0.6))
        got = _fit_label(n.label, n.width - 6, px, min_px)
        if got:
            w = text_width(got[0], got[1])
            add(got[0], n.name, n.x - w / 2, n.y, got[1])
    for n in scene.nodes:  # ops: beside the ellipse
        if n.kind != K.OP:
            continue
        parent = by_name.get(n.parent) if n.parent else None
        px0 = parent.x - parent.width / 2 + 2 if parent else -1e18
        px1 = parent.x + parent.width / 2 - 2 if parent else 1e18
        right, left = n.x + n.width / 2 + 2, n.x - n.width / 2 - 2
        spots = [("r", n.y, min(op_max_width, px1 - right)), ("l", n.y, min(op_max_width, left - px0)),
                 ("c", n.y - n.height / 2 - op_px / 2 - 1, min(op_max_width, px1 - px0)),
                 ("c", n.y + n.height / 2 + op_px / 2 + 1, min(op_max_width, px1 - px0))]
        for side, yc, room in spots:
            got = _fit_label(n.label, room, op_px, min_px)
            if not got:
                continue
            w = text_width(got[0], got[1])
            x0 = right if side == "r" else left - w if side == "l" else max(px0, min(px1 - w, n.x - w / 2))
            if add(got[0], n.name, x0, yc, got[1]):
                break
    for e in scene.edges:  # edge labels: a free segment of their own edge
        if not e.label or len(e.points) < 2:
            continue
        w = text_width(e.label, edge_px)
        segs = sorted(((abs(b[0] - a[0]) + abs(b[1] - a[1]), (a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
                       for a, b in zip(e.points, e.points[1:])), key=lambda s: -s[0])
        for _, mx, my in segs:
            r = (mx + 2, my - edge_px / 2, mx + 2 + w, my + edge_px / 2)
            grown = (r[0] - edge_px, r[1] - edge_px, r[2] + edge_px, r[3] + edge_px)
            if any(placed[i].text == e.label and placed[i].owner.startswith("edge:")
                   and boxes_intersect(grown, (placed[i].x0, placed[i].y0, placed[i].x1, placed[i].y1))
                   for i in tgrid.near(grown)):
                break  # the same text right there already
            if add(e.label, f"edge:{e.source}->{e.target}", mx + 2, my, edge_px):
                break
    return placed
