"""An op's label is drawn to the right of its ellipse (frontend ``OP_LABEL_PX`` 7, cut at 90 world
px): the box of the group that holds the op leaves that room, so the label is not cut to ``d…``
by the box's border or hidden under the next band of a folded flow (a Keras UNet's 24 layers,
folded into four bands packed at their ellipses' width, read ``d…``, ``up…``)."""

from __future__ import annotations

import pytest

from tb_graph_plugin import wire
from tb_graph_plugin.cli import load_graph_def
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.layout.scene import LayoutCache, build_scene
from tb_graph_plugin.layout.scene.first_view import first_view_expanded

OP_LABEL_MAX_W = 90.0  # frontend/src/render/op_labels.ts
CHAR_W = 0.58 * 7  # Roboto's mean advance at the 7 px op label font


@pytest.mark.parametrize("kind, kind_of_graph", [("keras_unet_callback", wire.GraphKind.CONCEPTUAL),
                                                 ("keras_callback", wire.GraphKind.CONCEPTUAL),
                                                 ("torch_cnn", wire.GraphKind.OP), ("tf1_graph", wire.GraphKind.OP)])
def test_first_view_boxes_hold_their_ops_labels(real_logs, kind, kind_of_graph):
    h = build_hierarchy(build_slim_graph(load_graph_def(str(real_logs.get(kind)))))  # its default graph
    expanded = first_view_expanded(h) or [h.name_of(c) for c in h.group(h.root.id).children if h.is_group(c)][:1]
    scene = build_scene(h, wire.GraphRef("run", "tag", kind_of_graph), expanded, cache=LayoutCache())
    by_name = {n.name: n for n in scene.nodes}
    checked = 0
    for n in scene.nodes:
        parent = by_name.get(n.parent) if n.parent else None
        if n.kind != wire.NodeKind.OP or parent is None:
            continue
        label_w = min(OP_LABEL_MAX_W, CHAR_W * len(n.label))
        assert n.x + n.width / 2 + label_w <= parent.x + parent.width / 2 + 0.5, (n.name, n.label, parent.name)
        checked += 1
    assert checked > 0
