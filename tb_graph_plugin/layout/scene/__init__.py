"""The compound scene: a Hierarchy and an expansion state in, a wire ``Scene`` out.

The pipelines are two lists. :data:`SCENE` (:mod:`~tb_graph_plugin.layout.scene.compose`), one
``build_scene`` call (a request without an expansion state first takes
``first_view.first_view_expanded``, the dominant groups, through ``first_scene.build_first_view_scene``,
which closes a training step's back until it reads):

1. ``visible``         which expanded groups are visible (``compose.visible_expanded``)
2. ``group_layouts``   bottom-up, per visible expanded group, cached in the caller's
                       :class:`LayoutCache`: ``group.layout_group``, a series as a stack
                       (``series.layout_series``; a tall stack wraps into columns), any other
                       group through :data:`FLOW`; the groups the first view opens get the
                       room ``fit.fit_heights`` gives them (once per Hierarchy and options)
3. ``place``           each group placed into its parent, absolute coordinates
4. ``scene``           the wire Scene and its stats

:data:`FLOW` (:mod:`~tb_graph_plugin.layout.scene.flow`), one group laid out as a flow:

1. ``boundary``        ``bridge.boundary_edges``: edges crossing the group border -> bridges
2. ``partition``       ``partition.partition``: high fan-out parameters -> a copy beside each
                       consumer (``floating``, [NGRAPH-VIS]); high-degree children -> side columns
                       (``extract``, [VAST], stock thresholds); edges touching them -> labelled
                       stubs at both ends (``annotate``); bridges to > 40 children -> a stub
                       beside each child
3. ``bridge_graph``    the group's BridgeGraph as a private LayoutGraph (``bridge_graph``)
4. ``cut_long_edges``  long skip edges -> labelled stubs (``stubs``, [NGRAPH-VIS], span > 20)
5. ``components``      many weakly connected components -> packed (``pack.should_pack``)
6. ``pack``            (packed) one layout per component in a grid, rows wrapped at
                       ``pack_aspect``, bridges -> stubs per component (``pack.pack_layout``)
7. ``layout``          (not packed) the layered engine (``tb_graph_plugin.layout.layout``)
8. ``fold``            (a drawing taller than ``fold_aspect`` x its width, or than the room
                       a first view gives it: ``fold.fit_bands``) bands side by side, cut where
                       fewest edges cross, the edges between bands in the gaps (``fold.fold_layout``)
9.-13.                 ``frame``, ``border``, ``place_children``, ``place_bridges``,
                       ``place_stubs`` (``frame``): side columns, bridges on the border (in
                       rows below the header when many), embeddings beside their op
14. ``route``          edges attached to their end boxes

Edge ends are typed (``endpoint``): a ``Child``, a ``Bridge`` or a ``Stub``.

Expand/collapse: ``delta.scene_delta`` builds the old and new scenes from the same cache and
returns only the nodes that changed (``delta.apply_delta`` is what a client does with it).

Example::

    cache = LayoutCache()  # kept by whoever keeps the hierarchy
    scene = build_scene(hierarchy, wire.GraphRef("run", "tag", wire.GraphKind.OP),
                        expanded={"model", "model/block1"}, cache=cache)
"""

from tb_graph_plugin.layout.scene.cache import LayoutCache
from tb_graph_plugin.layout.scene.compose import SCENE, build_scene, visible_expanded
from tb_graph_plugin.layout.scene.delta import apply_delta, diff_scenes, scene_delta
from tb_graph_plugin.layout.scene.flow import FLOW
from tb_graph_plugin.layout.scene.options import SceneOptions

__all__ = ["build_scene", "SceneOptions", "LayoutCache", "visible_expanded", "scene_delta", "diff_scenes",
           "apply_delta", "SCENE", "FLOW"]
