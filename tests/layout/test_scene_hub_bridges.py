"""Hub bridges (``scene/annotate.py::annotate_hub_bridges``): an outside neighbour joined to more
than ``max_bridge_degree`` flow children is drawn as a stub beside each of them, not laid out as
one bridge node (regression: a split optimizer run ``adam/[742-1481]`` of the L9 training step
fed 592 of its 743 ops to the next run: dot drew 1,580 crossings, dagre 0)."""

from __future__ import annotations

from tb_graph_plugin import wire
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.layout.crossings import count_result_crossings
from tb_graph_plugin.layout import LayoutOptions, layout
from tb_graph_plugin.layout.scene import SceneOptions, build_scene
from tb_graph_plugin.layout.scene.group import bridge_layout_graph

from .test_scene import REF, check_scene

N = 60


def _letters(i: int) -> str:
    return chr(97 + i // 26) + chr(97 + i % 26)


def _hierarchy():
    """A real TF graph: 60 independent ops in ``upd``, all reading ``x`` and summed by ``total``."""
    import tensorflow as tf
    from tensorboard.compat.proto import graph_pb2

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(4,), name="x")
        with tf.name_scope("upd"):  # letter names: no numeric suffixes, so no op series forms
            parts = [tf.math.sin(x, name=f"part_{_letters(i)}") for i in range(N)]
        tf.math.add_n(parts, name="total")
    gd = graph_pb2.GraphDef.FromString(g.as_graph_def().SerializeToString())
    return build_hierarchy(build_slim_graph(gd))


def test_a_hub_neighbour_becomes_one_stub_per_child():
    h = _hierarchy()
    scene = build_scene(h, REF, ["upd"])
    check_scene(h, scene)
    by_name = {n.name: n for n in scene.nodes}
    bridges = [n for n in scene.nodes if n.kind == wire.NodeKind.BRIDGE and n.parent == "upd"]
    assert all(b.of != "total" for b in bridges)  # the hub is not a bridge node any more
    stubs = [n for n in scene.nodes if n.kind == wire.NodeKind.STUB and n.of == "total"]
    assert len(stubs) == N and all(s.label == "\u2192 total" and s.parent == "upd" for s in stubs)
    # each stub is joined to its own op by one short edge, inside the group
    fed = {e.source for e in scene.edges if e.target in {s.name for s in stubs}}
    assert fed == {f"upd/part_{_letters(i)}" for i in range(N)}
    # the input hub ``x`` (read by all 60) is drawn as stubs too
    assert len([n for n in scene.nodes if n.kind == wire.NodeKind.STUB and n.of == "x"]) == N
    for e in scene.edges:
        if e.target in by_name and by_name[e.target].kind == wire.NodeKind.STUB and by_name[e.target].of == "total":
            (x0, y0), (x1, y1) = e.points[0], e.points[-1]
            assert abs(x1 - x0) + abs(y1 - y0) < 40


def test_the_group_layout_has_no_hub_and_no_crossings():
    h = _hierarchy()
    gid = h.id_of("upd")
    with_hub = bridge_layout_graph(h, gid, SceneOptions(max_bridge_degree=0))
    without = bridge_layout_graph(h, gid)
    assert len(with_hub.nodes) == len(without.nodes) + 2  # the hub bridges from x and to total
    assert len(without.edges) < len(with_hub.edges)
    result = layout(without, LayoutOptions())
    assert count_result_crossings(result, "BT") == 0


def test_below_the_degree_the_bridge_stays():
    h = _hierarchy()
    o = SceneOptions(max_bridge_degree=N, pack=False)  # the hub rule alone (packing: test_scene_pack.py)
    scene = build_scene(h, REF, ["upd"], options=o)
    check_scene(h, scene, o)
    assert any(n.kind == wire.NodeKind.BRIDGE and n.of == "total" for n in scene.nodes)
    assert any(n.kind == wire.NodeKind.BRIDGE and n.of == "x" for n in scene.nodes)
    assert not any(n.kind == wire.NodeKind.STUB and n.of == "total" for n in scene.nodes)
