"""What a group layout places: nodes, edges and the group box, plus the helpers that put a
child (with its embeddings) at a spot. Shared by :mod:`group` (flow) and :mod:`series` (stack).

Embeddings (VAST 004, "Extract Non-Critical Operations"): up to ``max_annotations`` in- and
out-embeddings of an op are drawn as small icons in columns left and right of it; the layout
reserves room for those columns, so they never overlap other boxes.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from tb_graph_plugin.api.wire import NodeKind
from tb_graph_plugin.layout.scene.options import SceneOptions

__all__ = ["PlacedNode", "PlacedEdge", "GroupLayout", "reserved", "place_child", "spread", "kind_of", "bridge_name"]


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


def embedding_nodes(h, op: int, o: SceneOptions):
    if op >= h.n_ops:
        return [], []
    ins, outs = h.embeddings(op)
    return ins[: o.max_annotations], outs[: o.max_annotations]


def reserved(h, c: int, size, o: SceneOptions):
    """Box reserved in the layout for child c: its own box plus embedding columns."""
    w, hh = size
    ins, outs = embedding_nodes(h, c, o)
    ew, eh = o.embedding_size
    left = ew + o.embedding_gap if ins else 0.0
    right = ew + o.embedding_gap if outs else 0.0
    stack = max(len(ins), len(outs)) * (eh + o.embedding_gap) - o.embedding_gap if (ins or outs) else 0.0
    return (w + left + right, max(hh, stack)), left, right


def place_child(h, c, cx, cy, size, o, out_nodes, kind_fn, extracted=False):
    """Place child c with its reserved box centred at (cx, cy); returns the child's own box."""
    (rw, rh), left, right = reserved(h, c, size, o)
    w, hh = size
    x = cx - rw / 2 + left + w / 2
    name = h.name_of(c)
    out_nodes.append(PlacedNode(name, kind_fn(c), x, cy, w, hh, hid=c, extracted=extracted))
    ins, outs = embedding_nodes(h, c, o)
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


def kind_of(h):
    def kind(c):
        k = h.kind(c)
        return {"op": NodeKind.OP, "meta": NodeKind.META, "series": NodeKind.SERIES}.get(k, NodeKind.OP)
    return kind


def bridge_name(h, gid, incoming, outer):
    return f"{h.name_of(gid)}/__bridge_{'in' if incoming else 'out'}__/{h.name_of(outer)}"
