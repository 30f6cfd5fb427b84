"""Geometry shared by every engine: border clipping, self-loops, bounding-box normalisation.

Post-conditions (asserted in tests/layout): after :func:`finish`, every edge polyline starts
on its source box border and ends on its target box border, and the bounding box of nodes
and edge points is ``[0, width] x [0, height]``.
"""

from __future__ import annotations

import math

from tb_graph_plugin.layout.model import Point

__all__ = ["clip_to_border", "self_loop", "attach_ends", "finish", "against_rank"]


def clip_to_border(cx: float, cy: float, w: float, h: float, tx: float, ty: float) -> Point:
    """Point where the ray from the box centre towards (tx, ty) leaves the box.

    The dagre ``intersectRect`` rule; a degenerate direction gives the bottom-centre.
    """
    dx, dy = tx - cx, ty - cy
    hw, hh = w / 2.0, h / 2.0
    if abs(dx) < 1e-9 and abs(dy) < 1e-9:
        return (cx, cy + hh)
    if hw <= 0 or hh <= 0:
        return (cx, cy)
    # scale so that the ray hits the nearer of the vertical / horizontal sides
    s = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf)
    return (cx + dx * s, cy + dy * s)


def self_loop(cx: float, cy: float, w: float, h: float) -> list[Point]:
    """A small loop on the right side of a box, starting and ending on its border."""
    r = max(6.0, h / 2.0)
    x0 = cx + w / 2.0
    return [[x0, cy - h / 4.0], [x0 + r, cy - h / 4.0], [x0 + r, cy + h / 4.0], [x0, cy + h / 4.0]]


def attach_ends(points: list[Point], src: tuple[float, float, float, float], dst: tuple[float, float, float, float]) -> list[Point]:
    """Move the first/last point onto the source/target border (box = cx, cy, w, h).

    An end already outside or on its box keeps its direction from the centre; an end inside
    the box (e.g. the centre itself) is moved along the direction to its neighbour point.
    """
    pts = list(points)
    if len(pts) < 2:
        pts = [(src[0], src[1]), (dst[0], dst[1])]
    for end, nxt, box in ((0, 1, src), (-1, -2, dst)):
        cx, cy, w, h = box
        px, py = pts[end]
        inside = abs(px - cx) < w / 2.0 - 1e-6 and abs(py - cy) < h / 2.0 - 1e-6
        if inside or (abs(px - cx) < 1e-9 and abs(py - cy) < 1e-9):
            px, py = pts[nxt]
        pts[end] = clip_to_border(cx, cy, w, h, px, py)
    return pts


def finish(positions: dict, sizes: dict, edge_points: list[list[Point]]):
    """Shift everything so the bounding box starts at (0, 0); return (width, height)."""
    xs0, ys0, xs1, ys1 = [], [], [], []
    for k, (x, y) in positions.items():
        w, h = sizes[k]
        xs0.append(x - w / 2.0)
        xs1.append(x + w / 2.0)
        ys0.append(y - h / 2.0)
        ys1.append(y + h / 2.0)
    for pts in edge_points:
        for x, y in pts:
            xs0.append(x)
            xs1.append(x)
            ys0.append(y)
            ys1.append(y)
    if not xs0:
        return 0.0, 0.0
    mx, my = min(xs0), min(ys0)
    for k, (x, y) in list(positions.items()):
        positions[k] = (x - mx, y - my)
    for i, pts in enumerate(edge_points):
        edge_points[i] = [[x - mx, y - my] for x, y in pts]
    return max(xs1) - mx, max(ys1) - my


def against_rank(edges, positions, rankdir) -> list[bool]:
    """Per edge: does its target's centre lie strictly behind its source's along the rank
    direction (below it for rankdir BT)? These are the edges a layered layout turned round
    to break cycles; self-loops and same-rank edges are not."""
    axis, sign = {"BT": (1, -1.0), "TB": (1, 1.0), "LR": (0, 1.0), "RL": (0, -1.0)}[getattr(rankdir, "value", rankdir)]
    out = []
    for e in edges:
        s, t = positions[e.source][axis], positions[e.target][axis]
        out.append((t - s) * sign < -1e-6)
    return out
