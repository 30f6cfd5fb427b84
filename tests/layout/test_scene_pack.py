"""Component packing and wrapped series stacks (views within 1:10..10:1; ``adam/[3888-4859]`` drew ~970
independent update chains in one row, 32,700 x 87 px; ``adam/AssignAddVariableOp_[0-427]``
stacked 1,500 children 81 x 9,442 px). Post-conditions of ``scene/pack.py`` and
``scene/series.py::stack_columns``, and every view of the real logs within 1:10..10:1."""

from __future__ import annotations

import pytest

from bench.bench_aspect import aspect, graph_views
from tb_graph_plugin import wire
from tb_graph_plugin.cli import load_graph_def
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.layout import LayoutEdge, LayoutGraph, LayoutNode
from tb_graph_plugin.layout.scene import SceneOptions, build_scene
from tb_graph_plugin.layout.scene.pack import components, shelf_offsets

from .invariants import TOL
from .test_scene import KINDS, REF, check_scene
from .test_scene_hub_bridges import N, _hierarchy, _letters


def _box(n):
    return n.x - n.width / 2, n.y - n.height / 2, n.x + n.width / 2, n.y + n.height / 2


def test_components_ignore_the_skipped_bridge_nodes():
    g = LayoutGraph([LayoutNode(i, 1, 1) for i in ("a", "b", "c", "b0")],
                    [LayoutEdge("a", "b"), LayoutEdge("b0", "a"), LayoutEdge("b0", "c")])
    assert components(g, frozenset({"b0"})) == [[0, 1], [2]]
    assert components(g, frozenset()) == [[0, 1, 2, 3]]


def test_shelves_are_disjoint_and_near_the_target_aspect():
    sizes = [(30.0 + (i % 7) * 11, 20.0 + (i % 5) * 9) for i in range(200)]
    corners, width, height = shelf_offsets(sizes, 20.0, 1.5)
    boxes = [(x, y, x + w, y + h) for (x, y), (w, h) in zip(corners, sizes)]
    for i, a in enumerate(boxes):
        assert a[2] <= width + TOL and a[3] <= height + TOL
        for b in boxes[i + 1:]:
            assert a[2] + 20.0 <= b[0] + TOL or b[2] + 20.0 <= a[0] + TOL or a[3] + 20.0 <= b[1] + TOL or b[3] + 20.0 <= a[1] + TOL
    assert 0.75 <= width / height <= 3.0


@pytest.mark.parametrize("degree", [40, N])  # 40: x and total are hub bridges (stubs already); N: packing makes them
def test_parallel_chains_between_the_same_bridges_are_packed_into_a_grid(degree):
    """60 independent ops in ``upd``, all fed by ``x`` and summed by ``total`` (outside)."""
    h = _hierarchy()
    o = SceneOptions(max_bridge_degree=degree)
    scene = build_scene(h, REF, ["upd"], options=o)
    check_scene(h, scene, o)
    upd = next(n for n in scene.nodes if n.name == "upd")
    assert aspect(upd.width, upd.height) <= 3.0, (upd.width, upd.height)
    inside = [n for n in scene.nodes if n.parent == "upd"]
    assert not any(n.kind == wire.NodeKind.BRIDGE for n in inside)
    # each chain carries its own stubs naming both outside ends
    kind = {n.name: n.kind for n in scene.nodes}
    for i in range(N):
        op = f"upd/part_{_letters(i)}"
        assert any(e.target == op and kind[e.source] == wire.NodeKind.STUB for e in scene.edges), op
        assert any(e.source == op and kind[e.target] == wire.NodeKind.STUB for e in scene.edges), op
    stubs = {n.of for n in inside if n.kind == wire.NodeKind.STUB}
    assert stubs == {"x", "total"}
    # equal components in name order: row by row, left to right
    ops = sorted((n for n in inside if n.kind == wire.NodeKind.OP), key=lambda n: (round(n.y), n.x))
    assert [n.name for n in ops] == [f"upd/part_{_letters(i)}" for i in range(N)]
    # stable: the same scene again, from a fresh cache
    from tb_graph_plugin.layout.scene import LayoutCache

    again = build_scene(h, REF, ["upd"], options=o, cache=LayoutCache())
    assert [(n.name, n.x, n.y) for n in again.nodes] == [(n.name, n.x, n.y) for n in scene.nodes]


def test_packing_off_keeps_one_row():
    h = _hierarchy()
    o = SceneOptions(pack=False)
    from tb_graph_plugin.layout.scene import LayoutCache

    upd = next(n for n in build_scene(h, REF, ["upd"], options=o, cache=LayoutCache()).nodes if n.name == "upd")
    assert aspect(upd.width, upd.height) > 10  # the 81 x 9,442 px stack this test is about


def _series_hierarchy(n: int = 120):
    """A real TF graph: ``n`` parallel ops ``upd/mul_<i>`` (an op series ``mul_[0-n]``)."""
    import tensorflow as tf
    from tensorboard.compat.proto import graph_pb2

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(4,), name="x")
        with tf.name_scope("upd"):
            parts = [tf.math.multiply(x, float(i), name=f"mul_{i}") for i in range(n)]
        tf.math.add_n(parts, name="total")
    gd = graph_pb2.GraphDef.FromString(g.as_graph_def().SerializeToString())
    return build_hierarchy(build_slim_graph(gd))


def test_a_long_series_stack_wraps_into_columns():
    h = _series_hierarchy()
    series = [s for s in h.series_nodes() if len(s.children) >= 100]
    assert series, [s.name for s in h.series_nodes()]
    s = series[0]
    names = [h.name_of(a) for a in h.ancestors(s.id) if a != h.root.id][::-1] + [s.name]
    o = SceneOptions()
    scene = build_scene(h, REF, names, options=o)
    check_scene(h, scene, o)  # in index order, column by column
    box = next(n for n in scene.nodes if n.name == s.name)
    assert aspect(box.width, box.height) <= 10, (box.width, box.height)
    members = [next(n for n in scene.nodes if n.name == h.name_of(c)) for c in s.children]
    assert len({round(m.x) for m in members}) >= 2  # wrapped
    # no line from the side border across the columns: each member's outside edges end at its own stubs
    assert not [n for n in scene.nodes if n.parent == s.name and n.kind == wire.NodeKind.BRIDGE]
    kind = {n.name: n.kind for n in scene.nodes}
    for m in members:
        assert any(e.target == m.name and kind[e.source] == wire.NodeKind.STUB for e in scene.edges), m.name
        assert any(e.source == m.name and kind[e.target] == wire.NodeKind.STUB for e in scene.edges), m.name


@pytest.mark.parametrize("kind", KINDS)
def test_every_view_of_the_real_logs_within_1_to_10(real_logs, kind):
    h = build_hierarchy(build_slim_graph(load_graph_def(str(real_logs.get(kind)))))
    bad = [(name, round(w), round(hh)) for name, w, hh, _ in graph_views(h, depth=3) if aspect(w, hh) > 10]
    assert bad == []


def _chain_hierarchy(n: int = 40):
    """A real TF graph: a chain of ``n`` scopes ``block_<letters>`` (one op each) in ``model``."""
    import tensorflow as tf
    from tensorboard.compat.proto import graph_pb2

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(4,), name="x")
        with tf.name_scope("model"):
            for i in range(n):
                with tf.name_scope(f"block_{_letters(i)}"):
                    x = tf.math.sin(x, name="sin")
        tf.identity(x, name="out")
    gd = graph_pb2.GraphDef.FromString(g.as_graph_def().SerializeToString())
    return build_hierarchy(build_slim_graph(gd))


def test_a_tall_chain_folds_into_bands_joined_by_stubs():
    """Regression (aspect within 1:10..10:1): InceptionV3's model group, a chain of 27 modules,
    was 110 x 1,326 px."""
    h = _chain_hierarchy()
    o = SceneOptions()
    scene = build_scene(h, REF, ["model"], options=o)
    check_scene(h, scene, o)
    model = next(n for n in scene.nodes if n.name == "model")
    assert aspect(model.width, model.height) <= 3.0, (model.width, model.height)
    blocks = [n for n in scene.nodes if n.parent == "model" and n.kind == wire.NodeKind.META]
    assert len(blocks) == 40 and len({round(b.x) for b in blocks}) >= 2
    # every block still reaches the next: directly, or through a stub pair naming each other
    kind = {n.name: n.kind for n in scene.nodes}
    of = {n.name: n.of for n in scene.nodes}
    for i in range(39):
        a, b = f"model/block_{_letters(i)}", f"model/block_{_letters(i + 1)}"
        direct = any(e.source == a and e.target == b for e in scene.edges)
        cut = (any(e.source == a and kind[e.target] == wire.NodeKind.STUB and of[e.target] == b for e in scene.edges)
               and any(e.target == b and kind[e.source] == wire.NodeKind.STUB and of[e.source] == a for e in scene.edges))
        assert direct or cut, (a, b)
    # flow order: band 0 (where the flow starts) on the left
    first, last = blocks[0], blocks[-1]
    by_name = {n.name: n for n in blocks}
    assert by_name["model/block_aa"].x < by_name[f"model/block_{_letters(39)}"].x


def test_many_bridges_wrap_into_rows_below_the_header():
    """Regression (aspect within 1:10..10:1): the gradient tape of a 128-layer transformer had
    ~1,600 outputs on one
    border row: 8,183 x 194 px."""
    from tb_graph_plugin.layout.scene.border import bridge_rows

    o = SceneOptions()
    assert bridge_rows(10, 200, 100, 10, o) == 1
    rows = bridge_rows(1600, 200, 100, 10, o)
    assert rows > 1 and 1600 / rows * 5 + 20 <= max(200, o.bridge_band_aspect * 100) + 5
