"""What a group layout places: nodes, edges and the group box, plus the helpers that put a
child (with its embeddings) at a spot. Shared by :mod:`group` (flow) and :mod:`series` (stack).

Embeddings ([VAST] §5.2, "Extract Non-Critical Operations"): up to ``max_annotations`` in- and
out-embeddings of an op are drawn as small icons in columns left and right of it; the layout
reserves room for those columns, so they never overlap other boxes. The same columns hold a
child's :class:`Annex` nodes: floating copies of high fan-out parameters (:mod:`floating`)
and annotation stubs naming an extracted neighbour (:mod:`annotate`), each joined to the
child by short edges that never leave the child's reserved box.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.layout.geometry import attach_ends
from tb_graph_plugin.layout.scene.endpoint import Annex, Annexes, Bridge, Child, Endpoint, Stub  # Annex*: re-exported
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.wire import NodeKind

__all__ = ["PlacedNode", "PlacedEdge", "GroupLayout", "Annex", "reserved", "place_child", "spread", "kind_of",
           "bridge_name", "endpoint_name", "endpoint_label", "stub_label"]


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
    reversed: bool = False  # drawn against the rank direction (a cycle's back edge)


@dataclasses.dataclass
class GroupLayout:
    width: float
    height: float
    nodes: list[PlacedNode]
    edges: list[PlacedEdge]
    engine: str = ""
    seconds: float = 0.0


def embedding_nodes(h: Hierarchy, op: int, o: SceneOptions):
    if op >= h.n_ops:
        return [], []
    ins, outs = h.embeddings(op)
    return ins[: o.max_annotations], outs[: o.max_annotations]


def _columns(h: Hierarchy, c: int, o: SceneOptions, annex: Optional[Annexes]):
    """(left, right) column items of child c: ``(width, height, embedding id | Annex)``."""
    ins, outs = embedding_nodes(h, c, o)
    ew, eh = o.embedding_size
    extra_in, extra_out = annex.get(c, ((), ())) if annex else ((), ())
    left = [(ew, eh, e) for e in ins] + [(a.width, a.height, a) for a in extra_in]
    right = [(ew, eh, e) for e in outs] + [(a.width, a.height, a) for a in extra_out]
    return left, right


def _stack(items, gap: float) -> float:
    return sum(i[1] for i in items) + gap * (len(items) - 1) if items else 0.0


def reserved(h: Hierarchy, c: int, size, o: SceneOptions, annex: Optional[Annexes] = None):
    """Box reserved in the layout for child c: its own box plus embedding (and annex) columns."""
    w, hh = size
    lcol, rcol = _columns(h, c, o, annex)
    left = max(i[0] for i in lcol) + o.embedding_gap if lcol else 0.0
    right = max(i[0] for i in rcol) + o.embedding_gap if rcol else 0.0
    stack = max(_stack(lcol, o.embedding_gap), _stack(rcol, o.embedding_gap))
    return (w + left + right, max(hh, stack)), left, right


def place_child(h: Hierarchy, c: int, cx: float, cy: float, size, o: SceneOptions, out_nodes: list[PlacedNode],
                kind_fn, extracted: bool = False, annex: Optional[Annexes] = None, out_edges: Optional[list] = None):
    """Place child c with its reserved box centred at (cx, cy); returns the child's own box.

    Annex nodes of c are placed in its columns and their edges appended to ``out_edges``.
    """
    (rw, rh), left, right = reserved(h, c, size, o, annex)
    w, hh = size
    x = cx - rw / 2 + left + w / 2
    name = h.name_of(c)
    out_nodes.append(PlacedNode(name, kind_fn(c), x, cy, w, hh, hid=c, extracted=extracted))
    own = (x, cy, w, hh)
    for side, items in zip((-1, 1), _columns(h, c, o, annex)):
        if not items:
            continue
        col_w = max(i[0] for i in items)
        ex = cx - rw / 2 + col_w / 2 if side < 0 else cx + rw / 2 - col_w / 2
        ey = cy - _stack(items, o.embedding_gap) / 2
        for iw, ih, item in items:
            ey += ih / 2
            if isinstance(item, Annex):
                out_nodes.append(PlacedNode(item.name, item.kind, ex, ey, iw, ih, hid=item.hid, of=item.of,
                                            label=item.label))
                for kind, esize, count, base in item.edges:
                    pts = [[ex, ey], [x, cy]] if side < 0 else [[x, cy], [ex, ey]]
                    ends = ((ex, ey, iw, ih), own) if side < 0 else (own, (ex, ey, iw, ih))
                    s, t = (item.name, name) if side < 0 else (name, item.name)
                    out_edges.append(PlacedEdge(s, t, [list(p) for p in attach_ends(pts, *ends)], kind, esize,
                                                count, base))
            else:
                ename = h.name_of(item)
                if h.slim.owner[item] != c:
                    ename = f"{ename}@{name}"
                kind = NodeKind.IN_EMBEDDING if side < 0 else NodeKind.OUT_EMBEDDING
                out_nodes.append(PlacedNode(ename, kind, ex, ey, iw, ih, hid=item, of=name))
            ey += ih / 2 + o.embedding_gap
    return own


def spread(ideal: list[float], size: float, lo: float, hi: float) -> list[float]:
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


def kind_of(h: Hierarchy):
    def kind(c):
        k = h.kind(c)
        return k if k in (NodeKind.META, NodeKind.SERIES) else NodeKind.OP  # an embedding drawn as an op
    return kind


def bridge_name(h: Hierarchy, gid: int, incoming: bool, outer: int) -> str:
    return f"{h.name_of(gid)}/__bridge_{'in' if incoming else 'out'}__/{h.name_of(outer)}"


def endpoint_name(h: Hierarchy, gid: int, e: Endpoint) -> str:
    """The scene name of an endpoint drawn in group ``gid``."""
    if isinstance(e, Bridge):
        return bridge_name(h, gid, e.incoming, e.outer)
    if isinstance(e, Stub):
        return f"{h.name_of(gid)}/__stub__/{e.id}_{e.direction}"
    return h.name_of(e.hid)


def endpoint_label(h: Hierarchy, gid: int, e: Endpoint) -> str:
    """What a stub naming ``e`` says, in the user's words: a bridge's outside node's label, a
    child's label (an op's, or a group's: ``LlamaDecoderLayer[3]``), else the last name part."""
    if isinstance(e, Bridge):
        return h.label(e.outer)
    if isinstance(e, Child):
        return h.label(e.hid)
    return endpoint_name(h, gid, e).rsplit("/", 1)[-1]


def stub_label(h: Hierarchy, gid: int, direction: str, other: Endpoint) -> str:
    """A stub's text: ``→ target`` at the source of a cut edge (``out``), ``← source`` at its
    target (``in``)."""
    return ("\u2192 " if direction == "out" else "\u2190 ") + endpoint_label(h, gid, other)
