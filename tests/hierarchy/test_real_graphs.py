"""Hierarchy invariants and must-shows over real graphs written by TF/Keras/PyTorch."""

from __future__ import annotations

import pytest

from tb_graph_plugin.cli import load_graph_def
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import HierarchyOptions, build_hierarchy
from tests.hierarchy.invariants import check_invariants

OP_GRAPH_KINDS = ["tf2_keras_trace", "tf2_multi_function_trace", "tf2_trace_profile",
                  "tf1_graph", "torch_cnn", "torch_transformer", "keras_resnet50_trace"]


def _hierarchy(real_logs, kind):
    return build_hierarchy(build_slim_graph(load_graph_def(str(real_logs.get(kind)))))


@pytest.mark.parametrize("kind", OP_GRAPH_KINDS)
def test_invariants_on_real_graphs(real_logs, kind):
    h = _hierarchy(real_logs, kind)
    assert h.root.cardinality > 0
    check_invariants(h)


def test_keras_resnet50_trace_stages_blocks_templates(real_logs):
    h = _hierarchy(real_logs, "keras_resnet50_trace")
    model = "resnet50_1"
    stages = [h.name_of(c) for c in h.children(model)]
    for k in range(1, 6):
        assert f"{model}/conv{k}" in stages
    blocks = {}
    for k, n_blocks in ((2, 3), (3, 4), (4, 6), (5, 3)):
        stage = h.id_of(f"{model}/conv{k}")
        for b in range(1, n_blocks + 1):
            block = h.id_of(f"{model}/conv{k}_block{b}")
            assert stage in h.ancestors(block)  # directly or through a block series
            blocks[(k, b)] = h.template_of(block)
    projection = {blocks[(k, 1)] for k in range(2, 6)}
    identity = {t for (k, b), t in blocks.items() if b > 1}
    assert len(projection) == 1 and len(identity) == 1 and projection != identity
    assert None not in projection | identity
    assert sum(1 for (k, b) in blocks if b > 1) == 12
    assert len(h.templates[identity.pop()]) >= 12
    # variable handles sit beside their consumers, not at the top level
    slim = h.slim
    top = set(h.root.children)
    handles = [i for i, op in enumerate(slim.ops) if op == "_Arg" and "resource" in slim.names[i]]
    assert len(handles) >= 300
    assert not top.intersection(handles)
    assert all(slim.embedding[i] != 0 for i in handles)
    assert len([c for c in top if not h.is_group(c)]) <= 5


def test_torch_transformer_layers_are_one_series(real_logs):
    h = _hierarchy(real_logs, "torch_transformer")
    layers = [s for s in h.series_nodes() if s.series_kind == "block"]
    assert len(layers) == 1
    (series,) = layers
    names = h.child_names(series.id)
    assert len(names) == 6 and all("TransformerEncoderLayer[" in n for n in names)
    assert len({h.template_of(n) for n in names}) == 1
    # PyTorch noise is beside its consumers
    assert not any(op.startswith("prim::") and h.slim.embedding[i] == 0
                   for i, op in enumerate(h.slim.ops) if op in ("prim::GetAttr", "prim::Constant"))


@pytest.mark.parametrize("kind", ["torch_transformer", "keras_resnet50_trace"])
def test_ungrouping_every_series_keeps_the_invariants(real_logs, kind):
    slim = build_slim_graph(load_graph_def(str(real_logs.get(kind))))
    grouped = build_hierarchy(slim)
    names = frozenset(s.name for s in grouped.series_nodes())
    assert names
    flat = build_hierarchy(slim, HierarchyOptions(ungrouped_series=names))
    check_invariants(flat)
    assert not names.intersection(s.name for s in flat.series_nodes())
    assert flat.root.cardinality == grouped.root.cardinality
    for s in grouped.series_nodes():  # members keep their names, now outside any series
        for m in s.children:
            name = grouped.name_of(m)
            series = flat.series_of(name)
            assert series is None or flat.name_of(series) not in names
