"""The first view's scene: the groups ``first_view.first_view_expanded`` opens, laid out; for a
training step, measured and closed back until it reads.

Ours (issue 41: a training step's first view shows its ``loss``, ``backward`` and ``optimizer``
boxes stacked above the model, and the model opened as deep as a forward-only graph's left its
loose ops labelled at 7.5 px). A forward-only graph's first view is ``first_view_expanded``'s, as
it was. A training step's (``first_view.is_training_step``) is laid out, and while its main graph
(side columns aside, as the frontend fits it) is larger than ``SceneOptions.fold_window`` (the
window at a readable zoom: op labels >= 9 screen px) and more than the forward model is open, the
group opened last is closed again with the peers opened beside it (never one block of a list
alone) and whatever is open inside them; at most one layout per opened group.

Pre: ``h`` a Hierarchy (whole or a first view's partial one). Post: the Scene ``build_scene``
gives for the groups kept open; its ``expanded`` says which.
"""

from __future__ import annotations

from typing import Optional

from tb_graph_plugin import wire
from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.layout.scene.cache import LayoutCache
from tb_graph_plugin.layout.scene.compose import build_scene
from tb_graph_plugin.layout.scene.first_view import first_view_expanded, is_training_step
from tb_graph_plugin.layout.scene.options import SceneOptions

__all__ = ["build_first_view_scene"]


def _main_extent(scene: wire.Scene) -> tuple[float, float]:
    main = [n for n in scene.nodes if n.parent is None and not n.extracted] or scene.nodes
    if not main:
        return (0.0, 0.0)
    return (max(n.x + n.width / 2 for n in main) - min(n.x - n.width / 2 for n in main),
            max(n.y + n.height / 2 for n in main) - min(n.y - n.height / 2 for n in main))


def _fits(scene: wire.Scene, o: SceneOptions) -> bool:
    w, ht = _main_extent(scene)
    return w <= o.fold_window[0] and ht <= o.fold_window[1]


def _close_last(h: Hierarchy, expanded: list[str]) -> list[str]:
    """``expanded`` (parents before children) without its last group, the groups opened beside it
    in the same parent, and everything inside them; the first (the forward model) stays."""
    parent = h.parent(h.group_index[expanded[-1]])
    gone = [g for g in expanded[1:] if h.parent(h.group_index[g]) == parent]
    return [g for g in expanded if not any(g == x or g.startswith(x + "/") for x in gone)]


def build_first_view_scene(h: Hierarchy, ref: wire.GraphRef, options: SceneOptions = SceneOptions(),
                           cache: Optional[LayoutCache] = None) -> wire.Scene:
    """The first view's Scene (module docstring)."""
    expanded = first_view_expanded(h)
    scene = build_scene(h, ref, expanded, options=options, cache=cache)
    if not is_training_step(h):
        return scene
    while len(expanded) > 1 and not _fits(scene, options):
        expanded = _close_last(h, expanded)
        scene = build_scene(h, ref, expanded, options=options, cache=cache)
    return scene
