"""The first view fits the window (issue 23 item 2): ``layout/scene/fit.py`` gives the groups the
first view opens a room, ``fold.fit_bands`` folds a taller flow into bands, ``series`` wraps a
taller stack into columns; ``first_view`` opens through a group that is all its parent holds and
a stack of blocks past ``max_depth``. Graphs written with the real TensorFlow API (name scopes)."""

from __future__ import annotations

import dataclasses

from tb_graph_plugin import wire
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.layout.scene import LayoutCache, SceneOptions, build_scene
from tb_graph_plugin.layout.scene.first_view import first_view_expanded, first_view_levels
from tests.layout.test_scene import check_scene

REF = wire.GraphRef(run="r", tag="t", kind=wire.GraphKind.OP)


def _hierarchy(build):
    import tensorflow as tf
    from tensorboard.compat.proto import graph_pb2

    g = tf.Graph()
    with g.as_default():
        build(tf)
    return build_hierarchy(build_slim_graph(graph_pb2.GraphDef.FromString(g.as_graph_def().SerializeToString())))


def _chain(tf, length: int = 60):
    """``net``: a chain of ``length`` ops (a tall flow), fed by a placeholder."""
    x = tf.compat.v1.placeholder(tf.float32, shape=(4,), name="x")
    with tf.name_scope("net"):
        y = x
        for i in range(length):
            y = tf.math.negative(y, name=f"step_{chr(97 + i // 26)}{chr(97 + i % 26)}x")
    tf.identity(y, name="out")


def _vit_like(tf, layers: int = 12):
    """``vit/encoder/layer/layer_<i>``: a wrapper that holds one group, which holds one series."""
    x = tf.compat.v1.placeholder(tf.float32, shape=(4, 4), name="pixels")
    with tf.name_scope("vit"):
        with tf.name_scope("encoder"):
            with tf.name_scope("layer"):
                y = x
                for i in range(layers):
                    with tf.name_scope(f"layer_{i}"):
                        y = tf.nn.relu(tf.matmul(y, tf.ones((4, 4)), name="dense"), name="act") + y
    tf.identity(y, name="out")


def _main_extent(scene: wire.Scene) -> tuple[float, float]:
    main = [n for n in scene.nodes if not n.extracted and n.parent is None]
    return (max(n.x + n.width / 2 for n in main) - min(n.x - n.width / 2 for n in main),
            max(n.y + n.height / 2 for n in main) - min(n.y - n.height / 2 for n in main))


def test_a_tall_chain_the_first_view_opens_folds_to_fit_the_window():
    h = _hierarchy(_chain)
    opened = first_view_expanded(h)
    assert opened == ["net"]
    o = SceneOptions(fold_aspect=float("inf"))  # the first view's fold alone (the aspect fold: test_scene_pack.py)
    scene = build_scene(h, REF, opened, o, cache=LayoutCache())
    check_scene(h, scene, o)
    w, ht = _main_extent(scene)
    assert w <= o.fold_window[0] and ht <= o.fold_window[1], (w, ht)
    unfolded = build_scene(h, REF, opened, dataclasses.replace(o, fold_window=(float("inf"), float("inf"))),
                           cache=LayoutCache())
    assert _main_extent(unfolded)[1] > o.fold_window[1]  # one column: 60 ops do not fit
    assert not [n for n in scene.nodes if n.kind == wire.NodeKind.STUB]  # the links between bands are edges
    band_of = _bands(scene)
    bands = len(set(band_of.values()))
    assert bands >= 2
    # a chain is cut on its one edge between bands, drawn as an edge through the gap (issue 40)
    across = [e for e in scene.edges if e.source in band_of and e.target in band_of
              and band_of[e.source] != band_of[e.target]]
    assert len(across) == bands - 1, across
    assert all(band_of[e.target] == band_of[e.source] + 1 and len(e.points) >= 4 for e in across)


def _bands(scene: wire.Scene) -> dict[str, int]:
    """The band of each op of a folded group: ops whose x ranges overlap share one, left to right."""
    ops = sorted((n for n in scene.nodes if n.kind == wire.NodeKind.OP), key=lambda n: n.x - n.width / 2)
    band_of, band, right = {}, -1, float("-inf")
    for n in ops:
        if n.x - n.width / 2 > right + 5.0:
            band += 1
        right = max(right, n.x + n.width / 2)
        band_of[n.name] = band
    return band_of


def test_a_group_is_drawn_the_same_in_every_view():
    """The fold depends on the Hierarchy (which groups the first view opens), not on the view:
    ``net`` is laid out alike with the first view's cache and a fresh one, opened first or not."""
    h = _hierarchy(_chain)
    o = SceneOptions(fold_aspect=float("inf"))
    first = build_scene(h, REF, ["net"], o, cache=LayoutCache())
    cache = LayoutCache()
    build_scene(h, REF, [], o, cache=cache)  # the top level first, then net
    later = build_scene(h, REF, ["net"], o, cache=cache)
    assert len(set(_bands(first).values())) >= 2  # folded
    pos = lambda s: sorted((n.name, round(n.x, 3), round(n.y, 3)) for n in s.nodes)  # noqa: E731
    assert pos(first) == pos(later)


def test_a_wrapper_holding_one_group_and_a_block_stack_open_past_max_depth():
    """A ViT's encoder holds its layer list, which holds the series of layers: the first view
    opens through to the blocks (they showed as one closed stack)."""
    h = _hierarchy(_vit_like)
    opened = first_view_expanded(h)
    assert opened[:3] == ["vit", "vit/encoder", "vit/encoder/layer"]
    assert opened[-1] == "vit/encoder/layer/layer_[0-11]", opened
    assert first_view_expanded(h, extra_depth=0) == opened[:3]  # without the rule: the stack closed
    levels = first_view_levels(h)
    assert levels[h.root.id] == -1 and [levels[h.id_of(g)] for g in opened] == list(range(len(opened)))


def test_a_stack_the_first_view_opens_wraps_into_columns_to_fit():
    h = _hierarchy(lambda tf: _vit_like(tf, layers=12))
    opened = first_view_expanded(h)
    assert opened[-1] == "vit/encoder/layer/layer_[0-11]"
    o = SceneOptions()
    scene = build_scene(h, REF, opened, o, cache=LayoutCache())
    check_scene(h, scene)
    members = [n for n in scene.nodes if n.parent == opened[-1]]
    assert len({round(n.x) for n in members if n.kind == wire.NodeKind.META}) >= 2  # columns
    w, ht = _main_extent(scene)
    assert w <= o.fold_window[0] and ht <= o.fold_window[1], (w, ht)


def test_a_long_stack_opens_as_one_labelled_series_box():
    """Past 12 members a series stays closed in the first view (issue 40: an 80-layer model
    opened as a 9-column grid of 80 boxes, not one label readable); one click opens it."""
    h = _hierarchy(lambda tf: _vit_like(tf, layers=24))
    opened = first_view_expanded(h)
    assert opened == ["vit", "vit/encoder", "vit/encoder/layer"]
    scene = build_scene(h, REF, opened, SceneOptions(), cache=LayoutCache())
    series = [n for n in scene.nodes if n.kind == wire.NodeKind.SERIES]
    assert [(n.name, n.label, n.expanded) for n in series] == [("vit/encoder/layer/layer_[0-23]", "layer_[0-23]", False)]
    assert not [n for n in scene.nodes if n.parent == series[0].name]
    assert first_view_expanded(h, max_series=24)[-1] == series[0].name  # the bound is what closes it


def test_no_room_no_first_view_fold():
    h = _hierarchy(_chain)
    scene = build_scene(h, REF, ["net"], SceneOptions(fold_aspect=float("inf"), fold_window=(float("inf"), float("inf"))),
                        cache=LayoutCache())
    assert not [n for n in scene.nodes if n.kind == wire.NodeKind.STUB and "/__stub__/w" in n.name]
