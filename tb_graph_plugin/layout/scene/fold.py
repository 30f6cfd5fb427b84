"""Folding a tall flow into bands side by side (a long chain of blocks read column by column).

Ours, after the newspaper-column idea of ELK's ``wrapping`` strategies ([ELK] Layered: graph
wrapping, single-edge / multi-edge wrapping: a long, narrow layered drawing is cut between
layers into chunks placed next to each other, the cuts chosen where few edges cross them).
InceptionV3's model group is a chain of 27 modules, 110 x 1,326 px (aspect 12:1) when drawn as
one column. A group's drawing is folded into ``k`` bands when

- it is taller than ``o.fold_aspect`` times its width (``k`` from ``o.pack_aspect``), or
- the first view opens the group (``first_view.first_view_levels``) and its drawing is taller
  than its room there (:func:`fold_height`: ``o.fold_window``, the whole first view at a
  readable zoom, less ``o.fold_level`` per level of groups around it), and ``k`` bands fit that
  room at a scale ``o.fold_gain`` times the unfolded drawing's or more (``k``: the count with
  the largest such scale, each fold of 2 .. 6 bands tried and measured: :func:`fit_bands`): a ResNet50's 16 blocks, a UNet's 24 layers open readable and whole
  instead of zoomed in on their first rows (issue 23). Which groups the first view opens is a
  property of the Hierarchy, so a group is drawn the same in every expansion state.

The ``k - 1`` cuts are between ranks, each at the gap with the fewest edges across it within a
third of a band of its place at equal heights (nearest to that place on a tie), so a chain is cut
on its one edge, not through a block's skip connection. Each band is laid out on its own and
placed left to right in flow order (band 0, where the flow starts, on the left), bottoms
aligned, each as wide as its drawing plus the labels its ops show on their right (a band of ops
packed at the ellipses' width hid its labels under the next band: a Keras UNet's layers read
``d…``). An edge between two bands stays one edge (issue 40: it used to be a pair of stubs, and
three layers stood side by side with nothing saying in which order they run): from its source
sideways into the gap after its band, along the gap, sideways into its target (a link past a
neighbouring band runs beyond the end of the flow); parallel links through one gap a few px
apart.

Pre: a BridgeGraph and its layout (``res``), vertical rankdir. Post (:func:`fold_layout`): a
LayoutResult of the same nodes and edges (the edges between bands last), bands pairwise disjoint
(``o.pack_gap`` apart), every edge inside one band but those between bands, which run in the gaps.
"""

from __future__ import annotations

import bisect
import math
from typing import Optional

from tb_graph_plugin.layout import LayoutEdge, LayoutGraph, LayoutMemo, LayoutNode, LayoutResult, layout
from tb_graph_plugin.layout.model import RankDir
from tb_graph_plugin.layout.scene.endpoint import BridgeGraph, FlowEdge, StubNode
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.pack import assemble
from tb_graph_plugin.layout.scene.sizes import extent

__all__ = ["fit_bands", "fold_bands", "fold_height", "fold_layout", "window_bands"]


def fold_height(level: int, o: SceneOptions) -> float:
    """The height a flow the first view opens at ``level`` (``first_view.first_view_levels``:
    -1 the root, 0 the outermost opened group) has in ``o.fold_window``: the levels around it
    take ``o.fold_level`` each."""
    return max(o.fold_min_height, o.fold_window[1] - o.fold_level * (level + 1))


def fold_bands(res: LayoutResult, o: SceneOptions, room: Optional[dict[str, float]] = None) -> int:
    """How many bands the drawing ``res`` is folded into for its aspect (1: not folded).
    ``room``: the op labels' widths (``sizes.op_label_room``), part of a band's width."""
    width = max(extent(res, room or {}), o.meta_width)
    if not o.layout.rankdir.vertical or res.height <= o.fold_aspect * width:
        return 1
    rows = len({round(y, 1) for _, y in res.positions.values()})
    step = width + o.pack_gap
    # k bands: about k * step wide and height / k tall, k * step / (height / k) ~ pack_aspect
    return max(1, min(rows // 2, round(math.sqrt(o.pack_aspect * res.height / step))))


def fit_bands(bg: BridgeGraph, res: LayoutResult, o: SceneOptions, fit_h: float, memo: Optional[LayoutMemo] = None,
              room: Optional[dict[str, float]] = None, most: int = 6) -> int:
    """How many bands fit the drawing ``res`` of ``bg`` into ``o.fold_window``'s width and
    ``fit_h`` (:func:`fold_height`) at the largest scale, folds of 2 .. ``most`` bands tried
    (each fold's own drawings measured) until the scale drops; 1 when the drawing fits already,
    or no fold's scale is ``o.fold_gain`` times the unfolded one's."""
    if not o.layout.rankdir.vertical or res.height <= fit_h:
        return 1
    win_w = o.fold_window[0]
    rows = len({round(y, 1) for _, y in res.positions.values()})

    def scale(r: LayoutResult) -> float:
        width = max(extent(r, {nid: w for nid, w in (room or {}).items() if nid in r.positions}), o.meta_width)
        return min(win_w / width, fit_h / max(r.height, 1.0))

    best, best_scale, last = 1, scale(res), 0.0
    for k in range(2, min(most, rows) + 1):
        got = scale(fold_layout(bg, res, k, o, memo, room)[0])
        if got > best_scale * (o.fold_gain if best == 1 else 1.0):
            best, best_scale = k, got
        if got < last:
            break  # past the best count: more bands only widen the drawing
        last = got
    return best


def window_bands(height: float, step: float, gap: float, most: int, o: SceneOptions, fit_h: float) -> int:
    """The number of bands (at most ``most``; each ``step`` wide with its ``gap``) that fits a
    drawing ``height`` tall into ``o.fold_window``'s width and ``fit_h`` at the largest scale,
    when that scale is ``o.fold_gain`` times the single band's or more; else 1 (also when it
    fits already)."""
    win_w, win_h = o.fold_window[0], fit_h
    if height <= win_h or most < 2:
        return 1

    def scale(k: int) -> float:  # the scale at which k bands fit the window
        return min(win_w / (k * step - gap), win_h * k / height)

    best = max(range(1, most + 1), key=lambda k: (scale(k), -k))
    return best if scale(best) >= o.fold_gain * scale(1) else 1


def _cuts(along: dict[str, float], edges: list[tuple[str, str]], height: float, k: int) -> list[float]:
    """The ``k - 1`` cut positions along the flow (see the module doc): gaps between rank
    centres, each the one crossed by the fewest edges within a third of a band of its ideal
    place ``i * height / k``."""
    ranks = sorted(set(round(a, 3) for a in along.values()))
    gaps = [(a + b) / 2 for a, b in zip(ranks, ranks[1:])]
    spans = [tuple(sorted((along[s], along[t]))) for s, t in edges]

    def crossing(c: float) -> int:
        return sum(1 for lo, hi in spans if lo < c < hi)

    cuts: list[float] = []
    band_h = height / k
    for i in range(1, k):
        ideal = i * band_h
        near = [g for g in gaps if abs(g - ideal) <= band_h / 3 and (not cuts or g > cuts[-1])]
        if not near:
            near = [min((g for g in gaps if not cuts or g > cuts[-1]), key=lambda g: abs(g - ideal), default=ideal)]
        cuts.append(min(near, key=lambda g: (crossing(g), abs(g - ideal))))
    return cuts


def fold_layout(bg: BridgeGraph, res: LayoutResult, k: int, o: SceneOptions,
                memo: Optional[LayoutMemo] = None, room: Optional[dict[str, float]] = None,
                ) -> tuple[LayoutResult, list[FlowEdge], list[StubNode]]:
    """``(result, edges, stubs)`` of ``bg`` folded into ``k`` bands (see the module doc); each
    band is as wide as its drawing and the op labels on its right (``room``). An edge between
    two bands stays one edge (:func:`_cross_route`); ``stubs`` is empty (kept for the flow's
    other steps, which add stubs of their own)."""
    graph = bg.graph
    upward = o.layout.rankdir is RankDir.BT
    along = {nid: (res.height - y if upward else y) for nid, (x, y) in res.positions.items()}  # from the flow start
    cuts = _cuts(along, [(e.source, e.target) for e in graph.edges], res.height, k)
    band = {nid: bisect.bisect_left(cuts, a) for nid, a in along.items()}
    parts_nodes: list[list[LayoutNode]] = [[] for _ in range(k)]
    for n in graph.nodes:
        parts_nodes[band[n.id]].append(n)
    parts_edges: list[list] = [[] for _ in range(k)]
    crossing = []  # (LayoutEdge, FlowEdge) between bands, in edge order
    for e, m in zip(graph.edges, bg.edges):
        if band[e.source] == band[e.target]:
            parts_edges[band[e.source]].append((e, m))
        else:
            crossing.append((e, m))
    keep = [b for b in range(k) if parts_nodes[b]]
    results = [layout(LayoutGraph(parts_nodes[b], [x[0] for x in parts_edges[b]]), o.layout, memo) for b in keep]
    height = max(r.height for r in results)
    corners, spans, x = [], [], 0.0
    for r in results:
        corners.append((x, height - r.height if upward else 0.0))
        right = x + extent(r, {nid: w for nid, w in (room or {}).items() if nid in r.positions})
        spans.append((x, right))
        x = right + o.pack_gap
    out, out_meta = assemble(results, [parts_edges[b] for b in keep], corners, x - o.pack_gap, height)
    slot = {b: i for i, b in enumerate(keep)}
    lanes: dict[tuple[int, int], int] = {}
    for e, m in crossing:
        key = (slot[band[e.source]], slot[band[e.target]])
        lanes[key] = lanes.get(key, 0) + 1
    used: dict[tuple[int, int], int] = {}
    for e, m in crossing:
        key = (slot[band[e.source]], slot[band[e.target]])
        j = used.get(key, 0)
        used[key] = j + 1
        offset = (j - (lanes[key] - 1) / 2) * min(4.0, o.pack_gap / (lanes[key] + 1))
        out.edge_points.append(_cross_route(out.positions[e.source], out.positions[e.target], key, spans,
                                            o.pack_gap, offset, upward, height))
        out.reversed.append(False)
        out_meta.append(m)
    out.timings["bands"] = float(len(keep))
    return out, out_meta, []


def _cross_route(src, dst, bands: tuple[int, int], spans: list[tuple[float, float]], gap: float, offset: float,
                 upward: bool, height: float) -> list[list[float]]:
    """The polyline of an edge from band ``bands[0]`` to band ``bands[1]`` (issue 40: the link
    from one band to the next is drawn, not cut into a stub pair). From the source sideways into
    the gap after its band, along the gap to the target's height, sideways into the target; a
    link past a neighbouring band runs outside the bands, beyond the end of the flow."""
    (sx, sy), (tx, ty) = src, dst
    bs, bt = bands
    forward = bt > bs
    gs = (spans[bs][1] + gap / 2 if forward else spans[bs][0] - gap / 2) + offset
    gt = (spans[bt][0] - gap / 2 if forward else spans[bt][1] + gap / 2) + offset
    if abs(bt - bs) == 1:
        return [[sx, sy], [gs, sy], [gs, ty], [tx, ty]]
    lane = (-gap / 2 if upward else height + gap / 2) - offset
    return [[sx, sy], [gs, sy], [gs, lane], [gt, lane], [gt, ty], [tx, ty]]
