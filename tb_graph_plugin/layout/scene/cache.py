"""What the scenes of one Hierarchy reuse across expansion states, owned by whoever owns the
Hierarchy (a worker's ``GraphState``, a bench, a test) and passed to ``build_scene``.

Three :class:`~tb_graph_plugin.cache.LruCache`\\ s: the :class:`GroupLayout` of each group under
(group id, expanded groups below it, options) ([VAST] §5.2: a sibling's layout is reused untouched
when another group is expanded), the boundary edges of each group (:mod:`bridge`), and the
structural layout memo (:class:`~tb_graph_plugin.layout.memo.LayoutMemo`); and the height the
first view gives each group it opens (:mod:`fit`: their folds depend on it).

Pre: one LayoutCache serves one Hierarchy (group ids are its ids): :meth:`LayoutCache.bind`
raises when it is handed a second one while the first is alive.
"""

from __future__ import annotations

import weakref
from typing import Optional

from tb_graph_plugin.cache import LruCache
from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.layout.memo import MAX_ENTRIES, LayoutMemo
from tb_graph_plugin.layout.scene.bridge import BoundaryEdge
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.placed import GroupLayout

__all__ = ["LayoutCache"]


class LayoutCache:
    def __init__(self, max_groups: int = 2048, max_boundaries: int = 1 << 16, memo_entries: int = MAX_ENTRIES,
                 memo: Optional[LayoutMemo] = None):
        self.groups: LruCache[tuple, GroupLayout] = LruCache(max_entries=max_groups)
        self.boundaries: LruCache[int, list[BoundaryEdge]] = LruCache(max_entries=max_boundaries)
        self.memo = memo if memo is not None else LayoutMemo(memo_entries)  # (shared by fit.py's trials)
        self._owner: Optional[weakref.ref] = None
        self.fit_heights: dict[SceneOptions, dict[int, float]] = {}  # fit.fit_heights, per options

    def bind(self, h: Hierarchy) -> "LayoutCache":
        """This cache, now serving ``h``; raises ValueError if it serves another live Hierarchy."""
        owner = self._owner() if self._owner is not None else None
        if owner is None:
            self._owner = weakref.ref(h)
        elif owner is not h:
            raise ValueError("a LayoutCache serves one Hierarchy: make one per Hierarchy")
        return self
