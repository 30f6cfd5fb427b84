"""Polyline routing through the dummy chains.

Follows dagre ``normalize.undo`` + ``assignNodeIntersects``: an edge is the polyline from its
source centre through each dummy (entering and leaving the dummy's row vertically, so it
never cuts a box of that row), to its target centre, then both ends are moved onto the node
borders; edges reversed by ``acyclic`` are reversed back ([HCG-LAYOUT]: "再将被反转了的边方向恢复").
Vectorised over all edges: points of kept edge i are ``px/py[ptr[i]:ptr[i+1]]``.

Pre: coordinates set (``pack``). Post: the polyline of kept edge i starts on the border of
its original source box and ends on the border of its original target box.
"""

from __future__ import annotations

import numpy as np

from tb_graph_plugin.layout.fast.state import LayeredGraph

__all__ = ["route_edges", "clip_to_border_many"]


def clip_to_border_many(cx, cy, w, h, tx, ty):
    """Vectorised :func:`tb_graph_plugin.layout.geometry.clip_to_border`."""
    dx, dy = tx - cx, ty - cy
    hw, hh = w / 2.0, h / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        sx = np.where(dx != 0, hw / np.abs(dx), np.inf)
        sy = np.where(dy != 0, hh / np.abs(dy), np.inf)
    s = np.minimum(sx, sy)
    degenerate = ~np.isfinite(s)
    s = np.where(degenerate, 0.0, s)
    return cx + dx * s, np.where(degenerate, cy + hh, cy + dy * s)


def route_edges(g: LayeredGraph) -> None:
    m = len(g.src)
    k = g.n_dummies
    cnt = 2 + 2 * k
    ptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(cnt, out=ptr[1:])
    total = int(ptr[-1])
    e = np.repeat(np.arange(m), cnt)
    j = np.arange(total) - ptr[e]
    is_src, is_dst = j == 0, j == cnt[e] - 1
    node = np.where(is_src, g.src[e], np.where(is_dst, g.dst[e], g.first_dummy[e] + (j - 1) // 2))
    px = g.x[node]
    upper = (j - 1) % 2 == 0
    py = np.where(is_src | is_dst, g.y[node], np.where(upper, g.row_top[node], g.row_bottom[node]))
    s, t = g.src, g.dst
    a, b = ptr[:-1], ptr[1:] - 1
    px[a], py[a] = clip_to_border_many(g.x[s], g.y[s], g.across[s], g.along[s], px[a + 1], py[a + 1])
    px[b], py[b] = clip_to_border_many(g.x[t], g.y[t], g.across[t], g.along[t], px[b - 1], py[b - 1])
    rev = g.reversed[e]
    perm = np.where(rev, ptr[e] + ptr[e + 1] - 1 - np.arange(total), np.arange(total))
    g.px, g.py, g.ptr = px[perm], py[perm], ptr
