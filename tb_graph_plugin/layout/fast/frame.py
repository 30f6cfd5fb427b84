"""Map the canonical frame (ranks downwards, TB) to the requested rank direction.

BT flips the rank axis (edges point upward, TensorBoard's convention), LR swaps the axes,
RL swaps and flips. Pre: canonical ``x``/``y``/``px``/``py``. Post: returns arrays
``(node_x, node_y, point_x, point_y)`` for the real nodes and the edge points in the
requested frame (sizes are the input sizes, untouched).
"""

from __future__ import annotations

import numpy as np

from tb_graph_plugin.layout.fast.state import LayeredGraph
from tb_graph_plugin.layout.model import RankDir

__all__ = ["to_frame"]


def to_frame(g: LayeredGraph):
    rd = g.options.rankdir
    n = g.n_real
    nx, ny, px, py = g.x[:n], g.y[:n], g.px, g.py
    if rd in (RankDir.BT, RankDir.RL):
        h = float(np.max(g.row_bottom)) if g.n else 0.0
        ny, py = h - ny, h - py
    if not rd.vertical:
        nx, ny, px, py = ny, nx, py, px
    return nx, ny, px, py
