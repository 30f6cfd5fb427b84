"""Expand/collapse as a delta: only the scene nodes that changed between two expansion states.

Ours (no reference document; the stock tab re-lays out and redraws everything on every click). Both
scenes come from the same :class:`~tb_graph_plugin.layout.scene.cache.LayoutCache` (the caller's), so the
old one costs only its assembly (its group layouts were made when the client asked for it)
and the new one lays out just the newly expanded group and its ancestors.

Pre: a Hierarchy, the client's expansion state ``old`` and the wanted one ``new`` (group
names; invisible or unknown names as in :func:`build_scene`). Post: a wire
:class:`SceneDelta` such that :func:`apply_delta` of it on ``build_scene(old)`` gives
``build_scene(new)``: the same nodes field for field (keyed by name; node order carries no
meaning), the same edges, size and expanded list. ``upserted_nodes`` lists, in the new
scene's order (parents before children), every node that is new or differs in any field;
``removed_nodes`` every name no longer present; ``edges`` is the new full edge list.
"""

from __future__ import annotations

import time
from typing import Iterable, Optional

from tb_graph_plugin import wire
from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.layout.scene.cache import LayoutCache
from tb_graph_plugin.layout.scene.compose import build_scene
from tb_graph_plugin.layout.scene.options import SceneOptions

__all__ = ["scene_delta", "diff_scenes", "apply_delta"]


def diff_scenes(old: wire.Scene, new: wire.Scene) -> wire.SceneDelta:
    """The delta turning ``old`` into ``new``; ``stats`` are the new scene's plus counts."""
    before = {n.name: n for n in old.nodes}
    upserted = [n for n in new.nodes if before.get(n.name) != n]
    present = {n.name for n in new.nodes}
    removed = [n.name for n in old.nodes if n.name not in present]
    stats = dict(new.stats, upserted=len(upserted), removed=len(removed), unchanged=len(new.nodes) - len(upserted))
    return wire.SceneDelta(graph=new.graph, expanded=list(new.expanded), upserted_nodes=upserted,
                           removed_nodes=removed, edges=new.edges, width=new.width, height=new.height,
                           stats=stats)


def scene_delta(h: Hierarchy, graph_ref: wire.GraphRef, old: Iterable[str], new: Iterable[str],
                options: SceneOptions = SceneOptions(), cache: Optional[LayoutCache] = None) -> wire.SceneDelta:
    """Build (from the cache) the scenes of ``old`` and ``new`` and return their difference."""
    t0 = time.perf_counter()
    cache = cache if cache is not None else LayoutCache()  # both scenes from one cache
    before = build_scene(h, graph_ref, old, options=options, cache=cache)
    after = build_scene(h, graph_ref, new, options=options, cache=cache)
    delta = diff_scenes(before, after)
    delta.stats["delta_seconds"] = time.perf_counter() - t0
    return delta


def apply_delta(scene: wire.Scene, delta: wire.SceneDelta) -> wire.Scene:
    """What a client does with a delta: drop removed nodes, replace or add upserted ones."""
    gone = set(delta.removed_nodes)
    nodes = {n.name: n for n in scene.nodes if n.name not in gone}
    for n in delta.upserted_nodes:
        nodes[n.name] = n
    return wire.Scene(graph=delta.graph, expanded=list(delta.expanded), nodes=list(nodes.values()),
                      edges=list(delta.edges), width=delta.width, height=delta.height, stats=dict(delta.stats))
