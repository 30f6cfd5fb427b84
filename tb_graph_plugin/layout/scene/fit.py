"""The room each group the first view opens gets, so that the first view fits the window readable.

Ours (issue 23: tall first views opened zoomed in on their first rows, the head and outputs above
the window). ``o.fold_window`` is the room of the whole first view at a readable zoom (world px:
TensorBoard at 1400 x 900 shows a 1083 x 771 canvas; op labels, 7 world px, are drawn at >= 9
screen px; 12 px margins, the frontend's FIRST_FIT_PAD). The groups :func:`~tb_graph_plugin.layout.scene.first_view.first_view_expanded`
opens are nested; each level around a group takes about ``o.fold_level`` of the height (header,
padding, the bridge ranks, the root's input and output), so the group opened at level ``i``
(0 the outermost, -1 the root) gets ``fold_window height - fold_level * (i + 1)`` (at least
``o.fold_min_height``): :mod:`fold` folds a taller flow into bands, :mod:`series` wraps a taller
stack into columns. Those rooms are a guess; the first view is laid out with them, and while its
main graph (extracted side columns aside) does not fit ``o.fold_window`` and the last scaling
helped, again with every room scaled by the next of :data:`ROOM_SCALES` (the rooms that fit, else
those whose fit is largest).

The rooms are a property of the Hierarchy and the options, computed once (kept in the
:class:`~tb_graph_plugin.layout.scene.cache.LayoutCache`) and used by every scene, so a group is
drawn the same in every expansion state. The first trial lays out into the caller's cache (the
first view's own layouts: no extra work when it fits); the others into a throwaway cache that
shares the structural memo, and then the caller's group layouts laid out with other rooms are
dropped.

Pre: ``o.layout.rankdir`` vertical for folds to apply. Post: a dict group id -> room (world px
high) for the root and every group the first view opens.
"""

from __future__ import annotations

from typing import Callable

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.layout.scene.cache import LayoutCache
from tb_graph_plugin.layout.scene.first_view import first_view_levels
from tb_graph_plugin.layout.scene.fold import fold_height
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.placed import GroupLayout

__all__ = ["ROOM_SCALES", "fit_heights", "main_extent"]

ROOM_SCALES = (1.0, 0.8, 0.64, 0.5)

LayOut = Callable[[Hierarchy, set, SceneOptions, LayoutCache, dict], dict]


def main_extent(root: GroupLayout) -> tuple[float, float]:
    """Width and height of the main graph of a root layout (its nodes but extracted ones)."""
    main = [p for p in root.nodes if not p.extracted] or root.nodes
    if not main:
        return (root.width, root.height)
    x0 = min(p.x - p.width / 2 for p in main)
    x1 = max(p.x + p.width / 2 for p in main)
    y0 = min(p.y - p.height / 2 for p in main)
    y1 = max(p.y + p.height / 2 for p in main)
    return (x1 - x0, y1 - y0)


def fit_heights(h: Hierarchy, o: SceneOptions, cache: LayoutCache, lay_out: LayOut) -> dict[int, float]:
    """Group id -> room (see the module doc); ``lay_out``: ``compose.group_layouts``."""
    got = cache.fit_heights.get(o)
    if got is not None:
        return got
    levels = first_view_levels(h)
    visible = set(levels)
    win_w, win_h = o.fold_window
    best, best_scale, best_at = {}, -1.0, 0
    for i, s in enumerate(ROOM_SCALES):
        rooms = {g: fold_height(level, o) * s for g, level in levels.items()}
        trial = cache if i == 0 else LayoutCache(memo=cache.memo)
        w, ht = main_extent(lay_out(h, visible, o, trial, rooms)[h.root.id])
        scale = min(win_w / max(w, 1.0), win_h / max(ht, 1.0))
        if scale >= 1.0 or scale <= best_scale:
            if scale > best_scale:
                best, best_scale, best_at = rooms, scale, i
            break  # it fits, or smaller rooms stopped helping
        best, best_scale, best_at = rooms, scale, i
    if best_at != 0:
        cache.groups.clear()  # laid out with the first trial's rooms
    cache.fit_heights[o] = best
    return best
