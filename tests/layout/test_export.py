"""SVG and DOT export of a scene: well-formed, every node and edge present, text escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pygraphviz
import pytest

from tb_graph_plugin import wire
from tb_graph_plugin.layout.export import EXPORTERS, scene_to_dot, scene_to_svg

SVG = "{http://www.w3.org/2000/svg}"


def hostile_scene() -> wire.Scene:
    evil = 'a<b>&"c\'\\d\n</svg><script>x</script>'
    g = wire.SceneNode(name="grp" + evil, label=evil, kind=wire.NodeKind.META, x=50, y=40, width=100, height=80,
                       parent=None, expanded=True)
    a = wire.SceneNode(name="grp/a" + evil, label=evil, kind=wire.NodeKind.OP, x=30, y=60, width=15, height=6,
                       parent=g.name, op="Mat<Mul>")
    b = wire.SceneNode(name="grp/b", label="b", kind=wire.NodeKind.OP, x=30, y=20, width=15, height=6, parent=g.name)
    e = wire.SceneEdge(source=a.name, target=b.name, points=[[30, 57], [30, 23]], kind=wire.EdgeKind.CONTROL,
                       width=1.5, label=evil)
    return wire.Scene(graph=wire.GraphRef("run<1>", "tag&", wire.GraphKind.OP), expanded=[g.name],
                      nodes=[g, a, b], edges=[e], width=100, height=80)


def test_svg_is_well_formed_and_escapes_all_text():
    scene = hostile_scene()
    svg = scene_to_svg(scene)
    root = ET.fromstring(svg.encode("utf-8"))  # raises on unescaped markup
    assert root.tag == SVG + "svg"
    assert not list(root.iter(SVG + "script"))
    names = {g.get("data-name") for g in root.iter(SVG + "g")}
    assert names == {n.name for n in scene.nodes}
    assert len(list(root.iter(SVG + "polyline"))) == 1
    texts = "".join(t.text or "" for t in root.iter(SVG + "text"))
    assert "<script>" in texts  # the label survives as text, not as markup


def test_dot_parses_and_keeps_names():
    scene = hostile_scene()
    a = pygraphviz.AGraph(string=scene_to_dot(scene))
    names = {str(n) for n in a.nodes()}
    assert names == {n.name for n in scene.nodes if not n.expanded}
    assert a.number_of_edges() == 1
    assert a.get_node("grp/b").attr["pos"].startswith("30,60")  # y flipped into Graphviz's frame
    assert set(EXPORTERS) == {"json", "svg", "dot"}


def test_export_of_a_real_scene(real_logs):
    from tb_graph_plugin.cli import load_graph_def
    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.hierarchy import build_hierarchy
    from tb_graph_plugin.layout.scene import LayoutCache, build_scene

    h = build_hierarchy(build_slim_graph(load_graph_def(str(real_logs.get("torch_cnn")))))
    expanded = [g.name for g in h.walk_groups() if g.id != h.root.id]
    scene = build_scene(h, wire.GraphRef("r", "t", wire.GraphKind.OP), expanded, cache=LayoutCache())
    root = ET.fromstring(scene_to_svg(scene).encode("utf-8"))
    assert len(list(root.iter(SVG + "polyline"))) == len(scene.edges)
    a = pygraphviz.AGraph(string=scene_to_dot(scene))
    assert a.number_of_edges() == len(scene.edges)
    assert {str(n) for n in a.nodes()} >= {n.name for n in scene.nodes if not n.expanded}


def svg_texts(svg: str) -> list[tuple[str, str, tuple]]:
    """``(text, owner, box)`` of every ``<text>``, the box measured anew from its text, font size and
    position with the export's font metrics (not read from ``data-box``)."""
    from tb_graph_plugin.layout.labels import text_width

    out = []
    for t in ET.fromstring(svg.encode("utf-8")).iter(SVG + "text"):
        px, x, base = float(t.get("font-size")), float(t.get("x")), float(t.get("y"))
        y1 = base + 0.22 * px
        out.append((t.text, t.get("data-owner"), (x, y1 - px, x + text_width(t.text, px), y1)))
    return out


@pytest.mark.parametrize("kind", ["tf2_keras_trace", "tf1_graph", "torch_cnn", "torch_transformer", "keras_resnet50_trace",
                                  "keras_inceptionv3_trace", "keras_mobilenetv2_trace", "keras_bert_encoder_trace"])
def test_svg_of_first_views_names_every_node_without_overlaps(real_logs, kind):
    """Every node named, no overlaps, in the SVG export: ``tf2_keras_trace`` drew stub labels on
    top of each other and on the
    ``adam`` box, op labels over their neighbours."""
    from tb_graph_plugin.cli import load_graph_def
    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.hierarchy import build_hierarchy
    from tb_graph_plugin.layout.labels import boxes_intersect
    from tb_graph_plugin.layout.scene import LayoutCache, build_scene
    from tb_graph_plugin.layout.scene.first_view import first_view_expanded

    h = build_hierarchy(build_slim_graph(load_graph_def(str(real_logs.get(kind)))))
    scene = build_scene(h, wire.GraphRef("r", "t", wire.GraphKind.OP), first_view_expanded(h), cache=LayoutCache())
    texts = svg_texts(scene_to_svg(scene))
    for i, (a, oa, ra) in enumerate(texts):
        for b, ob, rb in texts[i + 1:]:
            assert not boxes_intersect(ra, rb), (a, oa, b, ob)
    for text, owner, r in texts:
        for n in scene.nodes:
            if not n.expanded and n.name != owner:
                assert not boxes_intersect(r, (n.x - n.width / 2, n.y - n.height / 2, n.x + n.width / 2,
                                               n.y + n.height / 2)), (text, owner, n.name)
    owners = {o for _, o, _ in texts}
    named = [n for n in scene.nodes if n.kind in (wire.NodeKind.OP, wire.NodeKind.META, wire.NodeKind.SERIES)]
    missing = [n.name for n in named if n.name not in owners]
    assert missing == []


def test_regression_a_label_shrunk_to_its_room_is_not_cut():
    """Issue 23: ``0 · TransformerEncoderL…`` on a box whose room held the whole label at the
    shrunk size: the size is chosen so that the text fills the room exactly, and the width at
    that size came out a rounding ulp wider, so the label was cut (the canvas's TextFitter had the
    same bug)."""
    from tb_graph_plugin.layout.labels import _fit, text_width

    for text in ("TransformerEncoderLayer[0]", "BertEmbeddings[embeddings]", "create_bidirectional_mask()"):
        w = text_width(text, 10.0)
        for i in range(201):
            avail = w * (0.8 + 0.2 * i / 200)  # room for the whole label shrunk to 80%..100%
            assert _fit(text, avail, 10.0, 7.0)[0] == text, (text, avail)
