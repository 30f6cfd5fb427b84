"""Every architectural block is one group, on models nobody tuned the rules for (real
building blocks, as the framework authored them). The expected blocks come from the authoring
framework, not from our rules:
``expected_blocks.json`` (written beside the events by ``tests/logwriters.py``) maps each
block to the trace scopes of its Keras layers (recorded while TensorFlow traced them) and a
kind (its layer classes); Inception modules are read from the Keras functional graph."""

from __future__ import annotations

import json
import re
from collections import defaultdict

import pytest

from tb_graph_plugin import wire
from tb_graph_plugin.cli import load_graph_def
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.hierarchy.dataflow import graph_from_metaedges, is_acyclic, series_shape
from tb_graph_plugin.layout.scene import LayoutCache, build_scene
from tb_graph_plugin.layout.scene.first_view import first_view_expanded
from tests.hierarchy.invariants import check_invariants, lowest_common_group

KERAS_ARCHS = ["keras_resnet50_trace", "keras_inceptionv3_trace", "keras_mobilenetv2_trace",
               "keras_bert_encoder_trace", "keras_xception_trace", "keras_efficientnetb0_trace",
               "keras_mobilenetv3small_trace"]
ACYCLIC_ARCHS = KERAS_ARCHS + ["torch_transformer", "hf_gpt2"]

_CACHE: dict = {}


def _built(real_logs, kind):
    if kind not in _CACHE:
        root = real_logs.get(kind)
        h = build_hierarchy(build_slim_graph(load_graph_def(str(root))))
        blocks = None
        found = list(root.rglob("expected_blocks.json"))
        if found:
            blocks = json.loads(found[0].read_text())
        _CACHE[kind] = (h, blocks)
    return _CACHE[kind]


@pytest.mark.parametrize("kind", KERAS_ARCHS)
def test_every_block_is_one_group_holding_its_ops_and_no_other_blocks(real_logs, kind):
    h, expected = _built(real_logs, kind)
    check_invariants(h)
    layer_scopes = expected["layer_scopes"]
    scope_of = {}
    for i, name in enumerate(h.slim.names):
        if h.slim.embedding[i] != wire.EmbeddingRole.MAIN:
            continue
        for scope in layer_scopes:  # a layer's ops are named <scope>/...
            if name.startswith(scope + "/"):
                scope_of[i] = scope
                break
    block_of_scope = {s: b for b, spec in expected["blocks"].items() for s in spec["scopes"]}
    assert len(expected["blocks"]) >= 4
    for block, spec in expected["blocks"].items():
        ops = [i for i, s in scope_of.items() if s in spec["scopes"]]
        assert ops, block
        gid = lowest_common_group(h, ops)
        group = h.group(gid)
        assert group.label == block, f"{block}: its ops meet in {group.name!r}"
        foreign = {block_of_scope.get(scope_of.get(op)) for op in h.leaf_ops(gid)} - {None, block}
        assert not foreign, f"{block} holds ops of {sorted(foreign)}"


@pytest.mark.parametrize("kind", KERAS_ARCHS)
def test_blocks_of_one_kind_share_a_template_or_a_series(real_logs, kind):
    h, expected = _built(real_logs, kind)
    by_kind = defaultdict(list)
    for block, spec in expected["blocks"].items():
        by_kind[tuple(spec["kind"])].append(block)
    repeated = [blocks for blocks in by_kind.values() if len(blocks) >= 2]
    assert repeated
    for blocks in repeated:
        gids = [h.id_of(g.id) for g in h.groups if g.label in blocks and g.inferred]
        assert len(gids) == len(blocks), blocks
        templates = {h.template_of(g) for g in gids}
        series = {h.series_of(g) for g in gids}
        assert (len(templates) == 1 and None not in templates) or (len(series) == 1 and None not in series), \
            (blocks, templates, series)


def test_named_architectures_read_as_their_authors_draw_them(real_logs):
    bert, _ = _built(real_logs, "keras_bert_encoder_trace")
    (layers,) = [s for s in bert.series_nodes() if s.series_kind == "block"]
    assert layers.label == "layer_[0-11]"  # the layers, a chain: not the roles across layers
    mobile, _ = _built(real_logs, "keras_mobilenetv2_trace")
    assert not [s for s in mobile.series_nodes() if s.series_kind == "block"]  # no block_[1-16]_expand
    inception, _ = _built(real_logs, "keras_inceptionv3_trace")
    labels = {inception.label(c) for c in inception.children("inception_v3_1")}
    assert {"mixed0", "mixed1", "mixed2", "mixed3", "mixed8", "mixed9", "mixed10"} <= labels
    assert "mixed[4-7]" in labels  # four identical modules in a chain
    assert all(inception.group(g).inferred == "dataflow" for g in inception.group_index
               if inception.label(g) == "mixed3")
    assert len(labels) < 40  # was 300 flat layers and series across modules
    xception, _ = _built(real_logs, "keras_xception_trace")
    flow = [xception.label(c) for c in xception.children("xception_1")]
    assert flow[:4] == ["block1", "block2", "block3", "block4"] and "block[5-12]" in flow  # middle flow
    efficientnet, _ = _built(real_logs, "keras_efficientnetb0_trace")
    stage = efficientnet.group(efficientnet.parent(efficientnet.id_of(
        next(g.name for g in efficientnet.groups if g.label == "block2b"))))
    assert stage.label == "block2" and [efficientnet.label(c) for c in stage.children] == ["block2a", "block2b"]


@pytest.mark.parametrize("kind", ACYCLIC_ARCHS)
def test_acyclic_models_get_acyclic_metagraphs_chain_series_and_no_reversed_edge(real_logs, kind):
    h, _ = _built(real_logs, kind)
    slim = h.slim
    succ = [set() for _ in range(slim.n_nodes)]
    for s, d in zip(slim.edge_src, slim.edge_dst):
        succ[s].add(d)
    assert is_acyclic(succ)  # the op graph itself
    for g in h.groups:
        metagraph = graph_from_metaedges(h, g.id)
        assert is_acyclic(metagraph), f"{g.name}: a grouping invented a cycle"
        if g.is_series:
            pos = {c: k for k, c in enumerate(g.children)}
            parent = h.group(g.parent)
            inside = graph_from_metaedges(h, g.id)
            assert series_shape(inside, list(range(len(g.children)))) is not None, g.name
            assert pos  # members in index order
            assert parent.id in h.ancestors(g.children[0])
    ref = wire.GraphRef(run="r", tag="t", kind=wire.GraphKind.OP)
    every_group = [g.name for g in h.walk_groups() if g.parent >= 0]
    scene = build_scene(h, ref, every_group, cache=LayoutCache())
    assert len(scene.nodes) > 100
    assert not [(e.source, e.target) for e in scene.edges if e.reversed]
    first = build_scene(h, ref, first_view_expanded(h), cache=LayoutCache())
    assert not [(e.source, e.target) for e in first.edges if e.reversed]


@pytest.mark.parametrize("kind", ["keras_mobilenetv2_trace", "keras_mobilenetv3small_trace"])
def test_regression_keras_block_zero_is_one_group(real_logs, kind):
    """Keras names the first inverted residual block apart: MobileNetV3 ``expanded_conv_<layer>``
    beside ``expanded_conv_<k>_<layer>``, MobileNetV2 ``expanded_conv_<layer>`` beside
    ``block_<k>_<layer>`` (their sources). Block 0 was a row of loose layers; it is one group
    holding every ``expanded_conv_<layer>`` layer and no layer of another block (default-named
    glue inside it, e.g. MobileNetV3's ``re_lu``, may join it)."""
    h, _ = _built(real_logs, kind)
    zero = [g for g in h.groups if g.label == "expanded_conv"]
    assert len(zero) == 1, [g.name for g in zero]
    group = zero[0]
    assert group.inferred == "name"
    parent = h.group(group.parent)
    labels = [h.label(c) for c in group.children if h.is_group(c)]
    assert sum(1 for x in labels if re.fullmatch(r"expanded_conv_[a-zA-Z].*", x)) >= 5, labels
    assert not any(re.match(r"(block_\d|expanded_conv_\d)", x) for x in labels), labels
    loose = [h.label(c) for c in parent.children if h.is_group(c) and re.fullmatch(r"expanded_conv_[a-zA-Z].*", h.label(c))]
    assert loose == []
