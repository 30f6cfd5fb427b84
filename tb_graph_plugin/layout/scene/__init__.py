"""The compound scene: a Hierarchy and an expansion state in, a wire ``Scene`` out.

Pipeline for one ``build_scene`` call (:mod:`~tb_graph_plugin.layout.scene.compose`):

0. ``first_view.first_view_expanded`` (a request without an expansion state) the dominant groups
1. ``compose.visible_expanded``    which expanded groups are visible
2. ``compose.group_layouts``       bottom-up, per visible expanded group (cached):
   a. ``bridge.boundary_edges``      edges crossing the group border -> bridges
      ``group.partition``:
      ``floating.float_parameters``  high fan-out parameters -> a copy beside each consumer (nGraph)
      ``extract.extract_auxiliary``  high-degree children -> side columns (VAST, stock thresholds)
      ``annotate.annotate_extracted`` edges touching them -> labelled stubs at both ends
      ``annotate.annotate_hub_bridges`` bridges to > 40 children -> a stub beside each child
   b. ``group._bridge_graph``        the group's BridgeGraph as a private LayoutGraph
      ``stubs.cut_long_edges``       long skip edges -> labelled stubs (nGraph, span > 20)
      ``pack.should_pack``          many weakly connected components -> a grid of them
                                     (``pack.pack_layout``: one layout per component, rows
                                     wrapped at ``pack_aspect``, bridges -> stubs per component)
   c. ``group.layout_group``         the BridgeGraph through the layered engine
                                     (``tb_graph_plugin.layout.layout``), embeddings beside
                                     their op, series members stacked (``series.stack_columns``:
                                     a tall stack wraps into columns)
      ``fold.fold_bands``           a drawing taller than ``fold_aspect`` x its width -> bands
                                     side by side (``fold.fold_layout``, cut edges -> stubs)
      ``border.place_bridges``      bridges on the border, in rows below the header when many
3. ``compose.build_scene``         place each group into its parent, absolute coordinates

Expand/collapse: ``delta.scene_delta`` builds the old and new scenes from the same cache and
returns only the nodes that changed (``delta.apply_delta`` is what a client does with it).

Example::

    scene = build_scene(hierarchy, wire.GraphRef("run", "tag", wire.GraphKind.OP),
                        expanded={"model", "model/block1"})
"""

from tb_graph_plugin.layout.scene.compose import LayoutCache, build_scene, cache_for, visible_expanded
from tb_graph_plugin.layout.scene.delta import apply_delta, diff_scenes, scene_delta
from tb_graph_plugin.layout.scene.options import SceneOptions

__all__ = ["build_scene", "SceneOptions", "LayoutCache", "cache_for", "visible_expanded", "scene_delta",
           "diff_scenes", "apply_delta"]
