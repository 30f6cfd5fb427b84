"""NodeDefs: the NodeDef of each op, the same whether kept parsed or serialized (graph.node_defs)."""

from __future__ import annotations

import pytest
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy, node_details


@pytest.fixture(scope="module")
def graph_def():
    """A TF1 graph calling a ``tf.function``: TensorFlow writes the function into the GraphDef's
    library, whose nodes the SlimGraph appends after the graph's own."""
    import tensorflow as tf

    @tf.function
    def block(x):
        return tf.nn.relu(tf.matmul(x, tf.ones([4, 4])) + 1.0)

    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [2, 4], name="x")
        tf.identity(block(block(x)), name="y")
    return graph.as_graph_def()


def _everything(slim) -> list:
    return [None if nd is None else nd.SerializeToString(deterministic=True) for nd in slim.node_defs]


@pytest.mark.parametrize("as_view", [False, True])
def test_serialized_node_defs_parse_back_to_the_same_protos(graph_def, as_view):
    blob = graph_def.SerializeToString()
    slim = build_slim_graph(graph_pb2.GraphDef.FromString(blob))
    assert slim.functions, "the log should hold library functions"
    parsed = _everything(slim)
    by_index = [None if slim.node_defs[i] is None else slim.node_defs[i].SerializeToString(deterministic=True)
                for i in range(len(slim.node_defs))]
    assert len(parsed) == slim.n_nodes == len(by_index) and parsed == by_index
    present = [slim.node_defs.present(i) for i in range(slim.n_nodes)]
    slim.node_defs.keep_serialized(memoryview(blob) if as_view else blob)
    assert slim.node_defs.index() is not None
    assert [slim.node_defs.present(i) for i in range(slim.n_nodes)] == present
    assert [None if slim.node_defs[i] is None else slim.node_defs[i].SerializeToString(deterministic=True)
            for i in range(slim.n_nodes)] == parsed
    assert _everything(slim) == parsed  # a whole pass (one parse of the encoding)
    assert slim.node_defs[-1] is None or slim.node_defs[-1].SerializeToString(deterministic=True) == parsed[-1]


def test_the_info_pane_shows_the_same_attrs_from_the_encoding(graph_def):
    blob = graph_def.SerializeToString()
    h = build_hierarchy(build_slim_graph(graph_pb2.GraphDef.FromString(blob)))
    ops = [i for i in range(h.n_ops) if h.slim.node_defs.present(i)][::7]
    before = [node_details(h, i).attrs for i in ops]
    assert any(before)
    h.slim.node_defs.keep_serialized()  # serialized from the parsed GraphDef
    assert [node_details(h, i).attrs for i in ops] == before


def test_an_encoding_the_scan_cannot_walk_is_kept_parsed_instead(graph_def):
    """An unknown field of wire type "group" (3) parses in protobuf (kept as unknown) but not in
    our scan: the NodeDefs parse the whole encoding again and keep it parsed, with no error."""
    blob = graph_def.SerializeToString() + b"\x7b\x7c"  # field 15, start group, end group
    slim = build_slim_graph(graph_pb2.GraphDef.FromString(blob))
    want = [nd.name for nd in graph_def.node]
    slim.node_defs.keep_serialized(blob)
    assert slim.node_defs.index() is None
    assert [slim.node_defs[i].name for i in range(len(want))] == want
