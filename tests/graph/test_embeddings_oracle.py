"""``graph.embeddings`` against an oracle written from the documented rule, and by hand.

The oracle (``tests/graph/embeddings_oracle.py``) reads the GraphDef's NodeDefs itself (its own
input parsing, name index and shape reading) and states the rule of [TB-GRAPH-DOC]
("GraphDef -> SlimGraph": Const in-embeddings, ``*Summary`` out-embeddings) plus the documented
extensions (PyTorch noise, TF2 resource handles and their reads); none of the production phases
(``nodes``, ``names``, ``edges``, ``embeddings``) runs in it. Random GraphDefs mix main ops,
in-embeddings, out-embeddings, chains and cycles of embeddings, control and ``:N`` inputs,
dangling inputs and ``_output_shapes``. The small real graphs of ``demo_logs`` are checked
against expectations derived by hand from their NodeDefs (written out below).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensorboard.compat.proto import graph_pb2, types_pb2

from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.graph.model import SlimGraphOptions
from tb_graph_plugin.wire import EmbeddingRole
from tests.graph import embeddings_oracle as oracle

OPS = ["Relu", "MatMul", "NoOp", "Const", "prim::GetAttr", "prim::ListConstruct",
       "ScalarSummary", "HistogramSummary", "_Arg", "ReadVariableOp", "AssignVariableOp", "VarHandleOp",
       "Assign"]
ROLE = {EmbeddingRole.MAIN: oracle.MAIN, EmbeddingRole.IN_EMBEDDING: oracle.IN, EmbeddingRole.OUT_EMBEDDING: oracle.OUT}


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


def _check_against_oracle(g, options):
    slim = build_slim_graph(g, options)
    want = oracle.expected(g, options)
    assert [ROLE[r] for r in slim.embedding] == want["roles"]
    assert [o if o >= 0 else None for o in slim.owner] == want["owner"]
    base = list(zip(slim.edge_src, slim.edge_dst, slim.edge_kind, slim.edge_output, slim.edge_size))
    assert base == want["base"]
    assert [tuple(e) for e in slim.embedding_edges] == want["embedding_edges"]
    assert slim.in_embeddings == want["in_embeddings"]
    assert slim.out_embeddings == want["out_embeddings"]


@settings(max_examples=300, deadline=None)
@given(graph_defs(), st.booleans(), st.booleans())
def test_placement_follows_the_documented_rule(g, variable_reads, torch_noise):
    _check_against_oracle(g, SlimGraphOptions(embed_variable_reads=variable_reads, embed_torch_noise=torch_noise))


def _graph(*nodes) -> graph_pb2.GraphDef:
    g = graph_pb2.GraphDef()
    for name, op, inputs in nodes:
        g.node.add(name=name, op=op, input=inputs)
    return g


def test_a_const_read_only_by_an_ownerless_const_joins_it_only_when_that_one_comes_first():
    # The walk in id order: `c` (no consumer) becomes main before `feeder` is resolved, so
    # `feeder` sits beside it; in the other order `feeder` is resolved first, finds nothing yet,
    # and both stay main with an edge between them.
    slim = build_slim_graph(_graph(("c", "Const", ["feeder"]), ("feeder", "Const", []), ("x", "Relu", [])))
    assert slim.embedding.tolist() == [EmbeddingRole.MAIN, EmbeddingRole.IN_EMBEDDING, EmbeddingRole.MAIN] and slim.owner[1] == 0 and slim.n_edges == 0
    slim = build_slim_graph(_graph(("feeder", "Const", []), ("c", "Const", ["feeder"]), ("x", "Relu", [])))
    assert slim.embedding.tolist() == [EmbeddingRole.MAIN, EmbeddingRole.MAIN, EmbeddingRole.MAIN] and list(zip(slim.edge_src, slim.edge_dst)) == [(0, 1)]


def test_resource_handle_without_any_read_is_an_in_embedding():
    # regression: the numpy roles marked handles only when a ReadVariableOp existed
    g = graph_pb2.GraphDef()
    g.node.add(name="h", op="_Arg").attr["T"].type = types_pb2.DT_RESOURCE
    g.node.add(name="x", op="Placeholder")
    g.node.add(name="upd", op="AssignVariableOp", input=["h", "x"])
    slim = build_slim_graph(g)
    assert slim.embedding.tolist() == [EmbeddingRole.IN_EMBEDDING, EmbeddingRole.MAIN, EmbeddingRole.MAIN] and slim.owner[0] == 2


# ------------------------------------------------------------------ small real graphs, by hand


def _by_name(slim):
    name = slim.original_names
    owners = {name[i]: name[o] for i, o in enumerate(slim.owner) if slim.embedding[i] != EmbeddingRole.MAIN}
    edges = [(name[s], name[d]) for s, d in zip(slim.edge_src, slim.edge_dst)]
    listed = {name[m]: [name[e] for e in es] for m, es in slim.in_embeddings.items()}
    return owners, edges, listed


def test_tf1_graph_by_hand(demo_graph_def):
    """``demo_logs/tf1_graph`` (TF1 ``FileWriter``, 9 NodeDefs), derived from its NodeDefs:
    ``eval/weights`` is a VarHandleOp (a handle) whose first consumer is the main op
    ``VarIsInitializedOp``; ``eval/ones`` (Const) feeds only ``Assign``; both ReadVariableOps
    read the handle, ``MatMul/ReadVariableOp`` feeds ``MatMul``, ``Read/ReadVariableOp`` feeds
    nothing, so it stays main. What is left of the main graph is two data edges."""
    slim = build_slim_graph(demo_graph_def("tf1_graph"))
    owners, edges, listed = _by_name(slim)
    assert owners == {
        "eval/ones": "eval/weights/Assign",
        "eval/weights": "eval/weights/IsInitialized/VarIsInitializedOp",
        "eval/MatMul/ReadVariableOp": "eval/MatMul",
    }
    assert edges == [("eval/features", "eval/MatMul"), ("eval/MatMul", "eval/probabilities")]
    assert listed == {  # every main op the handle feeds lists it, after the inputs before it
        "eval/weights/IsInitialized/VarIsInitializedOp": ["eval/weights"],
        "eval/weights/Assign": ["eval/weights", "eval/ones"],
        "eval/weights/Read/ReadVariableOp": ["eval/weights"],
        "eval/MatMul": ["eval/weights", "eval/MatMul/ReadVariableOp"],
    }


def test_torch_cnn_first_convolution_by_hand(demo_graph_def):
    """``demo_logs/torch_cnn`` (PyTorch ``add_graph``): the first convolution
    ``ResNetLike/Conv2d[conv1]/input.1`` reads ``input/x`` and ten noise ops of its scope: five
    ``prim::Constant`` (624-628), the ``prim::GetAttr`` ``weight/weight.41`` and four
    ``prim::ListConstruct`` (630-633) built from the constants 625 and 627. Constant 627 is first
    read by ListConstruct 630 (which comes before the convolution in the GraphDef), so it is
    listed first; 625 next (through 633); then the convolution's own inputs in input order."""
    slim = build_slim_graph(demo_graph_def("torch_cnn"))
    owners, edges, listed = _by_name(slim)
    conv = "ResNetLike/Conv2d[conv1]/input.1"
    p = "ResNetLike/Conv2d[conv1]/"
    noise = [p + x for x in ("627", "625", "weight/weight.41", "628", "630", "631", "632", "626", "633", "624")]
    assert listed[conv] == noise
    assert all(owners[x] == conv for x in noise)
    assert [s for s, d in edges if d == conv] == ["input/x"]
    assert ("ResNetLike/BatchNorm2d[bn1]/input.3", "ResNetLike/ReLU[relu]/input.5") in edges


@pytest.fixture(scope="module")
def demo_graph_def():
    import os

    from tb_graph_plugin.cli import load_graph_def

    root = os.path.join(os.path.dirname(__file__), "..", "..", "demo_logs")
    return lambda run: load_graph_def(os.path.join(root, run))
