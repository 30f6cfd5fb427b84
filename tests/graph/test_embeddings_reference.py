"""``graph.embeddings`` (numpy) gives exactly what the plain per-edge loop gives, on random graphs.

Random GraphDefs mix main ops, in-embeddings (``Const``, PyTorch ``prim::*``, resource
``_Arg`` + ``ReadVariableOp``) and out-embeddings (``*Summary``), with chains and cycles of
embeddings, control and ``:N`` inputs, dangling inputs and a few ``_output_shapes``; both
implementations run on the same raw edges and every output field is compared, order
included (``tests/graph/reference_embeddings.py`` is the loop the numpy code replaced).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tensorboard.compat.proto import graph_pb2, types_pb2

from tb_graph_plugin.graph import edges, embeddings, names, nodes
from tb_graph_plugin.graph.model import SlimGraph, SlimGraphOptions
from tb_graph_plugin.wire import EmbeddingRole
from tests.graph import reference_embeddings

OPS = ["Relu", "MatMul", "NoOp", "Const", "prim::GetAttr", "prim::ListConstruct",
       "ScalarSummary", "HistogramSummary", "_Arg", "ReadVariableOp", "AssignVariableOp", "VarHandleOp"]


@st.composite
def graph_defs(draw):
    n = draw(st.integers(1, 30))
    g = graph_pb2.GraphDef()
    for i in range(n):
        op = draw(st.sampled_from(OPS))
        node = g.node.add(name=f"n{i}", op=op)
        for _ in range(draw(st.integers(0, 3))):
            j = draw(st.integers(0, n))  # n is a dangling name
            form = draw(st.sampled_from(["", "", "^", ":1"]))
            node.input.append(f"^n{j}" if form == "^" else f"n{j}{form}")
        if op == "_Arg":
            node.attr["T"].type = draw(st.sampled_from([types_pb2.DT_RESOURCE, types_pb2.DT_FLOAT]))
        if draw(st.booleans()):
            for _ in range(2):
                shape = node.attr["_output_shapes"].list.shape.add()
                for d in draw(st.lists(st.integers(-1, 5), max_size=3)):
                    shape.dim.add(size=d)
    return g


def _raw(g):
    slim = SlimGraph()
    inputs = nodes.read_nodes(g, slim)
    names.index_names(slim)
    return slim, edges.read_edges(slim, inputs)


FIELDS = ("embedding", "owner", "edge_src", "edge_dst", "edge_kind", "edge_output", "edge_size",
          "embedding_edges")


@settings(max_examples=300, deadline=None)
@given(graph_defs(), st.booleans())
def test_numpy_placement_equals_the_reference_loop(g, variable_reads):
    options = SlimGraphOptions(embed_variable_reads=variable_reads)
    ours, raw = _raw(g)
    embeddings.place_embeddings(ours, options, *raw)
    ref, raw = _raw(g)
    reference_embeddings.place_embeddings(ref, options, *raw)
    for field in FIELDS:
        assert list(getattr(ours, field)) == list(getattr(ref, field)), field
    assert list(ours.in_embeddings.items()) == list(ref.in_embeddings.items())
    assert list(ours.out_embeddings.items()) == list(ref.out_embeddings.items())
    # the post-condition the module states
    assert all(ours.embedding[o] == EmbeddingRole.MAIN for i, o in enumerate(ours.owner) if ours.embedding[i] != EmbeddingRole.MAIN)


def test_resource_handle_without_any_read_is_an_in_embedding():
    # regression: the numpy roles marked handles only when a ReadVariableOp existed
    g = graph_pb2.GraphDef()
    g.node.add(name="h", op="_Arg").attr["T"].type = types_pb2.DT_RESOURCE
    g.node.add(name="x", op="Placeholder")
    g.node.add(name="upd", op="AssignVariableOp", input=["h", "x"])
    slim, raw = _raw(g)
    embeddings.place_embeddings(slim, SlimGraphOptions(), *raw)
    assert slim.embedding == [EmbeddingRole.IN_EMBEDDING, EmbeddingRole.MAIN, EmbeddingRole.MAIN] and slim.owner[0] == 2
