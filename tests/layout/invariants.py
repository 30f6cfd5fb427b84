"""Checks every layout result must pass (used by the engine and composition tests)."""

from __future__ import annotations

import itertools

from tb_graph_plugin.layout import LayoutGraph, LayoutResult

TOL = 0.01


def on_border(p, cx, cy, w, h, tol=TOL) -> bool:
    dx, dy = abs(p[0] - cx), abs(p[1] - cy)
    on_vertical = abs(dx - w / 2) <= tol and dy <= h / 2 + tol
    on_horizontal = abs(dy - h / 2) <= tol and dx <= w / 2 + tol
    return on_vertical or on_horizontal


def boxes_overlap(a, b, tol=TOL) -> bool:
    (ax, ay, aw, ah), (bx, by, bw, bh) = a, b
    return abs(ax - bx) < (aw + bw) / 2 - tol and abs(ay - by) < (ah + bh) / 2 - tol


def check_result(graph: LayoutGraph, r: LayoutResult, upward: bool = False) -> None:
    assert set(r.positions) == {n.id for n in graph.nodes}
    assert len(r.edge_points) == len(graph.edges)
    box = {n.id: (*r.positions[n.id], n.width, n.height) for n in graph.nodes}
    for n in graph.nodes:
        assert r.sizes[n.id] == (n.width, n.height)
    # no two node boxes overlap
    for a, b in itertools.combinations(graph.nodes, 2):
        assert not boxes_overlap(box[a.id], box[b.id]), (a.id, b.id, box[a.id], box[b.id])
    # every edge starts and ends on its nodes' borders
    for e, pts in zip(graph.edges, r.edge_points):
        assert len(pts) >= 2
        assert on_border(pts[0], *box[e.source]), (e, pts[0], box[e.source])
        assert on_border(pts[-1], *box[e.target]), (e, pts[-1], box[e.target])
    # bounding box starts at the origin and holds everything
    xs = [x for x, _, w, _ in box.values()]
    assert all(-TOL <= x - w / 2 and x + w / 2 <= r.width + TOL for x, _, w, _ in box.values())
    assert all(-TOL <= y - h / 2 and y + h / 2 <= r.height + TOL for _, y, _, h in box.values())
    for pts in r.edge_points:
        assert all(-TOL <= x <= r.width + TOL and -TOL <= y <= r.height + TOL for x, y in pts)
    if xs:
        assert min(min(x - w / 2 for x, _, w, _ in box.values()), min((p[0] for pts in r.edge_points for p in pts), default=1e9)) <= TOL
    if upward:  # a DAG drawn with rankdir BT: every edge points upward
        for e in graph.edges:
            if e.source != e.target:
                assert box[e.source][1] > box[e.target][1], e
