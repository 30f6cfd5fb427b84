"""Per-connected-component packing into shelves (rows of components).

Each component was laid out on its own (component-local coordinates). Components are
placed left to right in id order and wrap to a new shelf when the shelf would exceed a
target width chosen for an overall aspect ratio of about ``options.pack_aspect``; the
widest component always fits. Shelves are ``component_sep`` apart.

Pre: component-local ``x``/``y``. Post: component bounding boxes (node boxes) are pairwise
disjoint, separated by at least ``component_sep``; the relative layout inside each
component is unchanged (a translation).
"""

from __future__ import annotations

import math

import numpy as np

from tb_graph_plugin.layout.fast.state import LayeredGraph

__all__ = ["pack_components"]


def pack_components(g: LayeredGraph) -> None:
    o = g.options
    k = g.n_comp
    if k == 0:
        return
    left = np.full(k, np.inf)
    right = np.full(k, -np.inf)
    bottom = np.zeros(k)
    np.minimum.at(left, g.comp, g.x - g.across / 2.0)
    np.maximum.at(right, g.comp, g.x + g.across / 2.0)
    np.maximum.at(bottom, g.comp, g.row_bottom)
    width = right - left
    sep = o.component_sep
    area = float(((width + sep) * (bottom + sep)).sum())
    target = max(float(width.max()), math.sqrt(area * o.pack_aspect))
    dx = np.zeros(k)
    dy = np.zeros(k)
    cx = cy = shelf_h = 0.0
    for c, (w, h, l) in enumerate(zip(width.tolist(), bottom.tolist(), left.tolist())):
        if cx > 0 and cx + w > target:
            cy += shelf_h + sep
            cx = shelf_h = 0.0
        dx[c] = cx - l
        dy[c] = cy
        cx += w + sep
        shelf_h = max(shelf_h, h)
    g.x = g.x + dx[g.comp]
    shift = dy[g.comp]
    g.y = g.y + shift
    g.row_top = g.row_top + shift
    g.row_bottom = g.row_bottom + shift
