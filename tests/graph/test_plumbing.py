"""PyTorch tuple plumbing joins its producers' scope (``graph/plumbing.py``): a Hugging Face T5
inside a user's wrapper, written by ``add_graph``, showed its ``prim::TupleConstruct`` /
``prim::TupleUnpack`` nodes (no scope after tracing) as a grid of numbered boxes at the wrapper's
level; its first view now opens on the model's encoder and decoder, like BART's."""

from __future__ import annotations

from tb_graph_plugin.cli import load_graph_def
from tb_graph_plugin.graph import SlimGraphOptions, build_slim_graph
from tb_graph_plugin.graph.plumbing import PLUMBING_OPS
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.layout.scene.first_view import first_view_expanded


def test_regression_tuple_plumbing_leaves_the_wrapper_level(real_logs):
    graph_def = load_graph_def(str(real_logs.get("hf_t5_wrapped")))
    before = build_slim_graph(graph_def, SlimGraphOptions(place_plumbing=False))
    at_top = [i for i, op in enumerate(before.ops) if op in PLUMBING_OPS and before.names[i].count("/") == 1]
    assert len(at_top) > 20  # what the writer does: the wrapper scope holds them

    slim = build_slim_graph(graph_def)
    assert slim.original_names == before.original_names and slim.ops == before.ops
    for i in at_top:
        name = slim.names[i]
        assert name.startswith("Seq2Seq/T5Model[model]/T5Stack[") and name.endswith("/" + before.names[i].split("/")[-1])
        assert slim.index[name] == i and slim.index[before.names[i]] == i  # both names find it
    others = [i for i, op in enumerate(slim.ops) if op not in PLUMBING_OPS]
    assert all(slim.names[i] == before.names[i] for i in others)

    h = build_hierarchy(slim)
    opened = first_view_expanded(h)
    assert opened[:2] == ["Seq2Seq", "Seq2Seq/T5Model[model]"]
    assert all(g.startswith("Seq2Seq/T5Model[model]/T5Stack[") for g in opened[2:]), opened  # blocks shown (issue 40)
    model = h.group(h.id_of("Seq2Seq/T5Model[model]"))
    assert sorted(h.label(c) for c in model.children) == ["T5Stack[decoder]", "T5Stack[encoder]"]
    wrapper = h.group(h.id_of("Seq2Seq"))
    assert [h.label(c) for c in wrapper.children] == ["T5Model[model]"]
