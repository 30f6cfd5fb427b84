"""Lay out one expanded group: a series as a stack (:mod:`series`), any other group as a flow
(:mod:`flow`: its BridgeGraph through the layered engine, side columns for auxiliary nodes,
embeddings beside their op, stubs for long and cut edges).

Pre: the sizes of the group's children (collapsed sizes, or the boxes of expanded child
groups laid out before: bottom-up). Post: a :class:`GroupLayout` in the group's own frame
(top-left of the group box at (0, 0), y down): no two placed boxes overlap, every box lies
inside ``[0, width] x [0, height]``, every edge starts on its source box border and ends on
its target box border; bridges sit on the group border; series members are stacked along
the rank axis in index order (member 0 at the flow's start, the bottom for rankdir BT). A group
the first view opens is folded (a flow, :mod:`fold`) or wrapped (a series) to fit the height
:mod:`fit` gives it.
"""

from __future__ import annotations

from typing import Optional

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.layout.scene.bridge_graph import bridge_layout_graph
from tb_graph_plugin.layout.scene.cache import LayoutCache
from tb_graph_plugin.layout.scene.flow import layout_flow
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.partition import partition
from tb_graph_plugin.layout.scene.placed import GroupLayout, PlacedEdge, PlacedNode
from tb_graph_plugin.layout.scene.series import layout_series

__all__ = ["PlacedNode", "PlacedEdge", "GroupLayout", "layout_group", "partition", "bridge_layout_graph"]


def layout_group(h: Hierarchy, gid: int, sizes: dict[int, tuple[float, float]], o: SceneOptions,
                 is_root: bool = False, cache: Optional[LayoutCache] = None, fit_h: Optional[float] = None) -> GroupLayout:
    """Lay out group ``gid``; ``sizes[c]`` is the box of each child (collapsed or expanded).
    ``cache`` (of ``h``) supplies boundary edges and the layout memo; without one, nothing is kept.
    ``fit_h``: the height the first view gives the group (:mod:`fit`), None for other groups."""
    cache = cache if cache is not None else LayoutCache()
    if h.group(gid).is_series and not is_root:
        return layout_series(h, gid, sizes, o, cache.boundaries, fit_h)
    return layout_flow(h, gid, sizes, o, is_root, cache, fit_h)
