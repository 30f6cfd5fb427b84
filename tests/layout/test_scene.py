"""The compound scene over real graphs: no overlaps, children inside their expanded parent,
edges end on borders, series members stacked in order, only changed groups re-laid out."""

from __future__ import annotations

import dataclasses
import itertools
import json
import random

import pytest

from tb_graph_plugin import wire
from tb_graph_plugin.cli import load_graph_def
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.layout import Engine, LayoutOptions, RankDir
from tb_graph_plugin.layout.scene import LayoutCache, SceneOptions, build_scene

from .invariants import TOL, boxes_overlap, on_border

REF = wire.GraphRef("run", "tag", wire.GraphKind.OP)
KINDS = ["tf2_keras_trace", "torch_transformer", "keras_resnet50_trace", "tf1_graph", "torch_cnn"]


@pytest.fixture(scope="module")
def hierarchies(real_logs):
    cache = {}

    def get(kind):
        if kind not in cache:
            cache[kind] = build_hierarchy(build_slim_graph(load_graph_def(str(real_logs.get(kind)))))
        return cache[kind]

    return get


def all_groups(h):
    return [g.name for g in h.walk_groups() if g.id != h.root.id]


def check_scene(h, scene: wire.Scene, options: SceneOptions = SceneOptions()) -> None:
    by_name = {}
    for n in scene.nodes:
        assert n.name not in by_name, f"duplicate scene node {n.name}"
        by_name[n.name] = n
    box = {n.name: (n.x, n.y, n.width, n.height) for n in scene.nodes}
    # every node inside the scene, children inside their expanded parent
    for n in scene.nodes:
        assert -TOL <= n.x - n.width / 2 and n.x + n.width / 2 <= scene.width + TOL
        assert -TOL <= n.y - n.height / 2 and n.y + n.height / 2 <= scene.height + TOL
        if n.parent is not None:
            p = by_name[n.parent]
            assert p.expanded
            assert p.x - p.width / 2 - TOL <= n.x - n.width / 2 and n.x + n.width / 2 <= p.x + p.width / 2 + TOL, n.name
            assert p.y - p.height / 2 - TOL <= n.y - n.height / 2 and n.y + n.height / 2 <= p.y + p.height / 2 + TOL, n.name
    # no two boxes with the same parent overlap (nested boxes are covered by the rule above)
    siblings = {}
    for n in scene.nodes:
        siblings.setdefault(n.parent, []).append(n.name)
    for names in siblings.values():
        for a, b in itertools.combinations(names, 2):
            assert not boxes_overlap(box[a], box[b]), (a, b, box[a], box[b])
    # every edge starts and ends on its nodes' borders
    for e in scene.edges:
        assert len(e.points) >= 2
        assert on_border(e.points[0], *box[e.source]), (e.source, e.target, e.points[0], box[e.source])
        assert on_border(e.points[-1], *box[e.target]), (e.source, e.target, e.points[-1], box[e.target])
        assert options.edge_width[0] <= e.width <= options.edge_width[1]
    # series members stacked in index order along the rank axis (BT: member 0 at the bottom),
    # column by column from the left when a tall stack wraps (series.py)
    if options.layout.rankdir is not RankDir.BT:
        return
    for s in h.series_nodes():
        if s.name not in by_name or not by_name[s.name].expanded:
            continue
        members = [by_name[h.name_of(c)] for c in s.children]
        for lower, upper in zip(members, members[1:]):
            same_column = min(upper.x + upper.width / 2, lower.x + lower.width / 2) > max(upper.x - upper.width / 2, lower.x - lower.width / 2)
            if same_column:
                assert upper.y + upper.height / 2 <= lower.y - lower.height / 2 + TOL, (lower.name, upper.name)
            else:  # the next column starts right of this one
                assert upper.x - upper.width / 2 >= lower.x + lower.width / 2 - TOL, (lower.name, upper.name)


@pytest.mark.parametrize("kind", KINDS)
def test_scene_invariants_collapsed_and_fully_expanded(hierarchies, kind):
    h = hierarchies(kind)
    top = build_scene(h, REF, [], cache=LayoutCache())
    check_scene(h, top)
    assert {n.name for n in top.nodes if n.parent is None and n.kind != wire.NodeKind.IN_EMBEDDING} >= {h.name_of(c) for c in h.root.children}
    full = build_scene(h, REF, all_groups(h), cache=LayoutCache())
    check_scene(h, full)
    ops_shown = {n.name for n in full.nodes if n.kind == wire.NodeKind.OP}
    assert len(ops_shown) == h.root.cardinality  # every main op visible once
    wire.to_json(full)  # serialisable (no NaN)


@pytest.mark.parametrize("kind", ["tf2_keras_trace", "keras_resnet50_trace"])
def test_scene_invariants_random_expansions(hierarchies, kind):
    h = hierarchies(kind)
    groups = all_groups(h)
    rnd = random.Random(4)
    cache = LayoutCache()
    for _ in range(4):
        expanded = rnd.sample(groups, k=min(len(groups), rnd.randint(1, 25)))
        check_scene(h, build_scene(h, REF, expanded, cache=cache))


def test_expanding_relays_out_only_the_group_and_its_ancestors(hierarchies):
    h = hierarchies("keras_resnet50_trace")
    cache = LayoutCache()
    expanded = ["resnet50_1", "resnet50_1/conv2"]
    first = build_scene(h, REF, expanded, cache=cache)
    target = next(h.name_of(c) for c in h.children("resnet50_1/conv3") if h.is_group(c))
    expanded2 = expanded + ["resnet50_1/conv3", target]
    build_scene(h, REF, expanded + ["resnet50_1/conv3"], cache=cache)
    second = build_scene(h, REF, expanded2, cache=cache)
    # target is new; its ancestors' keys changed; every other group is reused
    assert second.stats["groups_laid_out"] == 1 + len(h.ancestors(target))
    again = build_scene(h, REF, expanded, cache=cache)
    assert again.stats["groups_laid_out"] == 0
    assert [(n.name, n.x, n.y) for n in again.nodes] == [(n.name, n.x, n.y) for n in first.nodes]


def test_layout_cache_serves_one_hierarchy_and_reuses_structural_layouts(hierarchies):
    h = hierarchies("keras_resnet50_trace")
    cache = LayoutCache()
    build_scene(h, REF, all_groups(h), cache=cache)
    assert cache.memo.stats.hits > 0  # identical blocks laid out once
    assert cache.boundaries.stats.entries > 0
    with pytest.raises(ValueError, match="one Hierarchy"):
        build_scene(hierarchies("tf2_keras_trace"), REF, [], cache=cache)


def _hub_graph_hierarchy():
    """A real TF graph: a chain of 20 ops all reading a learning-rate hub, and a NoOp grouping them."""
    import tensorflow as tf
    from tensorboard.compat.proto import graph_pb2

    g = tf.Graph()
    with g.as_default(), tf.name_scope("train"):
        lr = tf.compat.v1.placeholder(tf.float32, shape=(), name="lr")
        x = tf.compat.v1.placeholder(tf.float32, shape=(4,), name="x")
        outs, y = [], x
        for i in range(20):  # a chain, every step reading the hub
            y = tf.multiply(y, lr, name=f"scale_{chr(97 + i)}x")
            outs.append(y)
        tf.group(*outs, name="update")
    gd = graph_pb2.GraphDef.FromString(g.as_graph_def().SerializeToString())
    return build_hierarchy(build_slim_graph(gd))


def test_auxiliary_nodes_extracted_to_side_columns():
    h = _hub_graph_hierarchy()
    opts = SceneOptions(float_fanout=0)  # the hub is a Placeholder: with floating on it would float
    scene = build_scene(h, REF, ["train"], opts, cache=LayoutCache())
    check_scene(h, scene)
    by_name = {n.name: n for n in scene.nodes}
    assert by_name["train/lr"].extracted  # out-degree hub -> left (input) column
    assert by_name["train/update"].extracted  # NoOp with 20 control inputs -> right column
    assert not by_name["train/x"].extracted
    flow = [n for n in scene.nodes if n.parent == "train" and not n.extracted and n.kind == wire.NodeKind.OP]
    assert len(flow) == 21
    assert all(by_name["train/lr"].x + by_name["train/lr"].width / 2 <= m.x - m.width / 2 for m in flow)
    assert all(by_name["train/update"].x - by_name["train/update"].width / 2 >= m.x + m.width / 2 for m in flow)
    # edges of the extracted nodes end on annotation stubs (tests/layout/test_scene_annex.py)
    assert all(by_name[e.target if e.source in ("train/lr", "train/update") else e.source].kind == wire.NodeKind.STUB
               for e in scene.edges if "train/lr" in (e.source, e.target) or "train/update" in (e.source, e.target))
    off = build_scene(h, REF, ["train"], SceneOptions(extract=False, float_fanout=0), cache=LayoutCache())
    assert not any(n.extracted for n in off.nodes)
    check_scene(h, off)
    assert len([e for e in off.edges if e.source == "train/lr"]) == 20


def test_embeddings_beside_their_op(hierarchies):
    h = hierarchies("keras_resnet50_trace")
    scene = build_scene(h, REF, all_groups(h), cache=LayoutCache())
    by_name = {n.name: n for n in scene.nodes}
    embs = [n for n in scene.nodes if n.kind in (wire.NodeKind.IN_EMBEDDING, wire.NodeKind.OUT_EMBEDDING)]
    assert len(embs) > 100
    for n in embs:
        owner = by_name[n.of]
        assert n.parent == owner.parent
        if n.kind == wire.NodeKind.IN_EMBEDDING:
            assert n.x + n.width / 2 <= owner.x - owner.width / 2 + TOL
        else:
            assert n.x - n.width / 2 >= owner.x + owner.width / 2 - TOL
        assert abs(n.y - owner.y) <= max(owner.height, 5 * (n.height + 2)) / 2 + TOL


def test_fast_engine_scene(hierarchies):
    h = hierarchies("torch_transformer")
    opts = SceneOptions(layout=LayoutOptions(engine=Engine.FAST))
    scene = build_scene(h, REF, all_groups(h), opts, cache=LayoutCache())
    check_scene(h, scene, opts)
    assert set(scene.stats["engines"]) <= {"fast", "stack"}


def test_unknown_group_is_an_error(hierarchies):
    h = hierarchies("torch_cnn")
    with pytest.raises(KeyError):
        build_scene(h, REF, ["no/such/group"], cache=LayoutCache())


def test_checker_catches_overlaps_and_loose_edges(hierarchies):
    h = hierarchies("torch_cnn")
    scene = build_scene(h, REF, [], cache=LayoutCache())
    a, b = [n for n in scene.nodes if n.parent is None][:2]
    b.x, b.y = a.x, a.y
    with pytest.raises(AssertionError):
        check_scene(h, scene)
    scene = build_scene(h, REF, [], cache=LayoutCache())
    scene.edges[0].points[0] = [scene.edges[0].points[0][0] + 3, scene.edges[0].points[0][1] + 3]
    with pytest.raises(AssertionError):
        check_scene(h, scene)


@pytest.mark.parametrize("rankdir", [RankDir.TB, RankDir.LR])
def test_other_rank_directions(hierarchies, rankdir):
    h = hierarchies("torch_transformer")
    opts = SceneOptions(layout=LayoutOptions(rankdir=rankdir))
    check_scene(h, build_scene(h, REF, all_groups(h), opts, cache=LayoutCache()), opts)


def _skip_graph_hierarchy(length: int = 30):
    """A real TF graph: a chain of ``length`` ops with one skip edge from its start to its end."""
    import tensorflow as tf
    from tensorboard.compat.proto import graph_pb2

    g = tf.Graph()
    with g.as_default(), tf.name_scope("net"):
        x = tf.compat.v1.placeholder(tf.float32, shape=(4,), name="x")
        first = y = tf.math.negative(x, name="head")
        for i in range(length):
            y = tf.math.negative(y, name=f"step_{chr(97 + i // 26)}{chr(97 + i % 26)}x")
        tf.add(y, first, name="tail")
    gd = graph_pb2.GraphDef.FromString(g.as_graph_def().SerializeToString())
    return build_hierarchy(build_slim_graph(gd))


def test_long_skip_edges_become_stubs():
    h = _skip_graph_hierarchy()
    o = SceneOptions(fold_aspect=float("inf"), fold_window=(float("inf"), float("inf")))  # the long-edge rule alone (folding a tall chain: test_scene_pack.py, test_first_view_fit.py)
    scene = build_scene(h, REF, ["net"], o, cache=LayoutCache())
    check_scene(h, scene)
    stubs = {n.name: n for n in scene.nodes if n.kind == wire.NodeKind.STUB}
    assert len(stubs) == 2
    assert {n.of for n in stubs.values()} == {"net/head", "net/tail"}
    assert not [e for e in scene.edges if (e.source, e.target) == ("net/head", "net/tail")]
    out_stub = next(n for n in stubs.values() if n.of == "net/tail")
    assert [e for e in scene.edges if (e.source, e.target) == ("net/head", out_stub.name)]
    assert out_stub.label.endswith("tail")
    uncut = build_scene(h, REF, ["net"], dataclasses.replace(o, stub_min_span=0), cache=LayoutCache())
    assert not [n for n in uncut.nodes if n.kind == wire.NodeKind.STUB]
    assert [e for e in uncut.edges if (e.source, e.target) == ("net/head", "net/tail")]
    short = build_scene(_skip_graph_hierarchy(10), REF, ["net"], o, cache=LayoutCache())
    assert not [n for n in short.nodes if n.kind == wire.NodeKind.STUB]


def test_scene_is_deterministic(hierarchies):
    h = hierarchies("torch_transformer")
    a = wire.to_json(build_scene(h, REF, all_groups(h), cache=LayoutCache()))
    b = wire.to_json(build_scene(h, REF, all_groups(h), cache=LayoutCache()))
    assert json.loads(a)["nodes"] == json.loads(b)["nodes"] and json.loads(a)["edges"] == json.loads(b)["edges"]
