"""SlimGraph -> Hierarchy (no TensorBoard server dependency).

The pipeline, in order (each step timed into ``h.timings``):

1. ``scopes.build_scopes``          MetaNodes from ``/`` scopes
2. ``infer.infer_scopes``           missing levels from indices in names (Keras 3), optional
2b. ``regions.infer_regions``       blocks cut from the children's dataflow (InceptionV3), optional
3. ``series.detect_op_series``      stock op series ``add_[1-5]``
3b. ``split.split_wide_groups``     groups > 1000 children -> ordered artificial sub-groups
4. ``metaedges.build_metaedges``    MetaEdges at the lowest common ancestor
5. ``templates.hash_templates``     structural hash and shared template ids
6. ``series.detect_block_series``   repeated blocks ``Layer[0-5]`` (parents' metaedges
                                    re-routed); then 5 again for the new series and
                                    their ancestors only
7. ``stats.compute_stats``          cardinality, depth, level, op/device/XLA histograms

Afterwards, on demand: ``profile.join_step_stats`` (step stats per op, summed per group)
and ``details.node_details`` (the info pane).

Example::

    >>> from tensorboard.compat.proto import graph_pb2
    >>> from tb_graph_plugin.graph import build_slim_graph
    >>> g = graph_pb2.GraphDef()
    >>> _ = g.node.add(name="x", op="Placeholder")
    >>> _ = g.node.add(name="dense/MatMul", op="MatMul", input=["x"])
    >>> _ = g.node.add(name="dense/Relu", op="Relu", input=["dense/MatMul"])
    >>> h = build_hierarchy(build_slim_graph(g))
    >>> h.child_names("__root__")
    ['x', 'dense']
    >>> [(h.name_of(e.src), h.name_of(e.dst)) for e in h.metaedges("__root__")]
    [('x', 'dense')]
"""

from __future__ import annotations

import gc
import time
from typing import Optional

from tb_graph_plugin.graph.model import SlimGraph
from tb_graph_plugin.hierarchy import infer, metaedges, regions, scopes, series, split, stats, templates
from tb_graph_plugin.hierarchy.details import node_details
from tb_graph_plugin.hierarchy.model import (
    ROOT_NAME,
    Hierarchy,
    HierarchyOptions,
    MetaEdge,
    MetaNode,
    SeriesNode,
)
from tb_graph_plugin.hierarchy.profile import join_step_stats

__all__ = [
    "build_hierarchy",
    "join_step_stats",
    "node_details",
    "Hierarchy",
    "HierarchyOptions",
    "MetaEdge",
    "MetaNode",
    "SeriesNode",
    "ROOT_NAME",
]


def build_hierarchy(slim: SlimGraph, options: Optional[HierarchyOptions] = None) -> Hierarchy:
    """Group a SlimGraph into MetaNodes, SeriesNodes and MetaEdges."""
    was_enabled = gc.isenabled()
    gc.disable()  # many small objects, no cycles: GC passes would cost O(heap) each
    try:
        return _build(slim, options)
    finally:
        if was_enabled:
            gc.enable()


def _build(slim: SlimGraph, options: Optional[HierarchyOptions]) -> Hierarchy:
    h = Hierarchy(slim, options or HierarchyOptions())
    t = h.timings

    def step(name, fn):
        t0 = time.perf_counter()
        out = fn(h)
        t[name] = t.get(name, 0.0) + time.perf_counter() - t0
        return out

    step("scopes", scopes.build_scopes)
    step("infer_scopes", infer.infer_scopes)
    step("infer_regions", regions.infer_regions)
    step("op_series", series.detect_op_series)
    step("split", split.split_wide_groups)
    step("metaedges", metaedges.build_metaedges)
    if h.options.templates or h.options.block_series_min_size > 0:
        step("templates", templates.hash_templates)
    made = step("block_series", series.detect_block_series)
    if made:
        dirty = set()
        for s in made:
            dirty.add(s.id)
            dirty.update(h.ancestors(s.id))
        step("templates", lambda h: templates.hash_templates(h, dirty))
    if not h.options.templates:
        h.templates = {}
        for g in h.groups:
            g.template = None
    step("stats", stats.compute_stats)
    h.out_neighbours = h.edge_arrays = None  # the grouping phases' adjacency: not needed once the tree is final
    return h
