"""Bridges on a group's border, in rows when one row would stretch the group.

Follows [VAST] §5.2 (an edge entering an expanded group ends at a bridge node on the
group's border) and the stock ``render.ts`` (bridges spread along the border where the flow
starts, inputs, and ends, outputs). Ours: a group whose border carries more bridges than fit
in one row along ``max(width, o.bridge_band_aspect * height)`` gets several rows of them (the
gradient tape of a 128-layer transformer has ~1,600 outputs: one row made it 8,183 x 194 px),
and the top border's rows sit below the header band (``o.header_band``) so that the group's
label covers no bridge.

Pre: bridges as ``(incoming, outer, ideal position along the border)`` per border (``at_low``:
the top for a vertical rankdir, the left otherwise), the group box so far. Post
(:func:`place_bridges`): each bridge once, on its border's rows, no two overlapping, all inside
the returned ``(width, height)``; ``extra_top``/``extra_bottom`` say how far the rows grew the
group (the caller moves the flow down by ``extra_top``).
"""

from __future__ import annotations

import math

from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.placed import spread

__all__ = ["bridge_rows", "place_bridges"]


def bridge_rows(n: int, width: float, height: float, pad: float, o: SceneOptions) -> int:
    """Rows for ``n`` bridges along a border of a ``width x height`` group (vertical rankdir)."""
    bw = o.bridge_size[0] + 1.0
    limit = max(width, o.bridge_band_aspect * height)
    if n * bw + 2 * pad <= limit:
        return 1
    return math.ceil(n * bw / max(limit - 2 * pad, bw))


def band_extra(rows: dict, pad_top: float, pad: float, o: SceneOptions) -> tuple[float, float]:
    """``(extra_top, extra_bottom)``: how much taller the rows make the group (vertical rankdir)."""
    step = o.bridge_size[1] + 1.0
    top = max(0.0, o.header_band + rows[True] * step + 2.0 - pad_top) if rows[True] else 0.0
    bottom = max(0.0, rows[False] * step + 2.0 - pad) if rows[False] > 1 else 0.0
    return top, bottom


def place_bridges(per_border: dict, rows: dict, width: float, height: float, pad: float, vertical: bool,
                  o: SceneOptions) -> list[tuple[bool, int, float, float]]:
    """``(incoming, outer, x, y)`` of every bridge (centres, group frame)."""
    bw, bh = o.bridge_size
    out = []
    along_total = width if vertical else height
    for at_low, items in per_border.items():
        if not items:
            continue
        k = rows[at_low] if vertical else 1
        order = sorted(range(len(items)), key=lambda i: (items[i][2], i))
        per = math.ceil(len(items) / k)
        for r in range(k):
            chunk = [items[i] for i in order[r * per:(r + 1) * per]]
            spots = spread([v[2] for v in chunk], (bw if vertical else bh) + 1.0, pad + bw / 2,
                           along_total - pad - bw / 2)
            for (incoming, outer, _), a in zip(chunk, spots):
                if vertical:
                    y = o.header_band + bh / 2 + r * (bh + 1.0) if at_low else height - bh / 2 - r * (bh + 1.0)
                    out.append((incoming, outer, a, y))
                else:
                    out.append((incoming, outer, bw / 2 if at_low else width - bw / 2, a))
    return out
