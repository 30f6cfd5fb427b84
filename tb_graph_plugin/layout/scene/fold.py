"""Folding a tall flow into bands side by side (a long chain of blocks read column by column).

Ours, after the newspaper-column idea of ELK's ``wrapping`` strategies ([ELK] Layered: graph
wrapping, single-edge / multi-edge wrapping: a long, narrow layered drawing is cut between
layers into chunks placed next to each other). InceptionV3's model group is a chain of 27
modules, 110 x 1,326 px (aspect 12:1) when drawn as one column. A group's drawing whose height
exceeds ``o.fold_aspect`` times its width is cut into ``k`` bands of about equal height along
the rank axis (cuts between ranks, at node centres), each band laid out on its own and placed
left to right in flow order (band 0, where the flow starts, on the left), bottoms aligned, each as
wide as its drawing plus the labels its ops show on their right (a band of ops packed at the
ellipses' width hid its labels under the next band: a Keras UNet's layers read ``d…``). An
edge between two bands becomes two labelled stubs, as :mod:`~tb_graph_plugin.layout.scene.stubs`
cuts long edges ([NGRAPH-VIS]): ``→ target`` at its source and ``← source`` at its target.

Pre: a BridgeGraph and its layout (``res``), vertical rankdir. Post (:func:`fold_layout`): a LayoutResult of the same nodes plus the
new stubs, bands pairwise disjoint (``o.pack_gap`` apart), every edge inside one band; the
returned stubs name the other end of each cut edge.
"""

from __future__ import annotations

import math
from typing import Optional

from tb_graph_plugin.layout import LayoutEdge, LayoutGraph, LayoutMemo, LayoutNode, LayoutResult, layout
from tb_graph_plugin.layout.model import RankDir
from tb_graph_plugin.layout.scene.endpoint import BridgeGraph, FlowEdge, Stub, StubNode
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.pack import assemble
from tb_graph_plugin.layout.scene.sizes import extent

__all__ = ["fold_bands", "fold_layout"]


def fold_bands(res: LayoutResult, o: SceneOptions, room: Optional[dict[str, float]] = None) -> int:
    """How many bands the drawing ``res`` is folded into (1: not folded). ``room``: the op
    labels' widths (``sizes.op_label_room``), part of a band's width."""
    width = extent(res, room or {})
    if not o.layout.rankdir.vertical or res.height <= o.fold_aspect * max(width, o.meta_width):
        return 1
    rows = len({round(y, 1) for _, y in res.positions.values()})
    step = max(width, o.meta_width) + o.pack_gap
    # k bands: about k * step wide and height / k tall, k * step / (height / k) ~ pack_aspect
    return max(1, min(rows // 2, round(math.sqrt(o.pack_aspect * res.height / step))))


def fold_layout(bg: BridgeGraph, res: LayoutResult, k: int, o: SceneOptions,
                memo: Optional[LayoutMemo] = None, room: Optional[dict[str, float]] = None,
                ) -> tuple[LayoutResult, list[FlowEdge], list[StubNode]]:
    """``(result, edges, stubs)`` of ``bg`` folded into ``k`` bands (see the module doc); each
    band is as wide as its drawing and the op labels on its right (``room``)."""
    graph = bg.graph
    upward = o.layout.rankdir is RankDir.BT
    along = {nid: (res.height - y if upward else y) for nid, (x, y) in res.positions.items()}  # from the flow start
    band_h = res.height / k
    band = {nid: min(k - 1, int(a // band_h)) for nid, a in along.items()}
    parts_nodes: list[list[LayoutNode]] = [[] for _ in range(k)]
    for n in graph.nodes:
        parts_nodes[band[n.id]].append(n)
    parts_edges: list[list] = [[] for _ in range(k)]
    stubs = []
    for e, m in zip(graph.edges, bg.edges):
        bs, bt = band[e.source], band[e.target]
        if bs == bt:
            parts_edges[bs].append((e, m))
            continue
        j = len(stubs) // 2
        out_id, in_id = f"w{j}o", f"w{j}i"
        out_key, in_key = Stub(f"w{j}", "out"), Stub(f"w{j}", "in")
        parts_nodes[bs].append(LayoutNode(out_id, *o.stub_size))
        parts_nodes[bt].append(LayoutNode(in_id, *o.stub_size))
        stubs += [StubNode(out_id, out_key, m.target), StubNode(in_id, in_key, m.source)]
        parts_edges[bs].append((LayoutEdge(e.source, out_id, e.weight, e.kind), m.with_ends(m.source, out_key)))
        parts_edges[bt].append((LayoutEdge(in_id, e.target, e.weight, e.kind), m.with_ends(in_key, m.target)))
    keep = [b for b in range(k) if parts_nodes[b]]
    results = [layout(LayoutGraph(parts_nodes[b], [x[0] for x in parts_edges[b]]), o.layout, memo) for b in keep]
    height = max(r.height for r in results)
    corners, x = [], 0.0
    for r in results:
        corners.append((x, height - r.height if upward else 0.0))
        x += extent(r, {nid: w for nid, w in (room or {}).items() if nid in r.positions}) + o.pack_gap
    out, out_meta = assemble(results, [parts_edges[b] for b in keep], corners, x - o.pack_gap, height)
    out.timings["bands"] = float(len(keep))
    return out, out_meta, stubs
