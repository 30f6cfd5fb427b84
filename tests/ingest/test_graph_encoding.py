"""A worker's GraphDef, split into its nodes' encodings and read in C (ingest.graph_encoding),
makes the same SlimGraph as the parsed GraphDef, keeps the same NodeDefs (graph.node_defs), and
says what is wrong with damaged bytes."""

from __future__ import annotations

import pytest
from tensorboard import errors
from tensorboard.compat.proto import graph_pb2, node_def_pb2

from tb_graph_plugin.api import tasks
from tb_graph_plugin.cli import load_graph_def
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.graph.node_defs import MalformedNodeDef
from tb_graph_plugin.hierarchy import build_hierarchy, node_details
from tb_graph_plugin.ingest.graph_encoding import MARKER, split_graph_def


def _columns(slim) -> list:
    return [c.tolist() if hasattr(c, "tolist") else c for c in _fields(slim)]


def _fields(slim) -> list:
    return [slim.names, slim.original_names, slim.ops, slim.devices, slim.xla_clusters, slim.output_shapes,
            slim.embedding, slim.owner, slim.edge_src, slim.edge_dst, slim.edge_kind, slim.edge_output,
            slim.edge_size, list(slim.embedding_edges), [(d.node, d.input) for d in slim.dangling],
            slim.duplicate_names, slim.in_embeddings, slim.out_embeddings, slim.index, slim.has_shape_info,
            {k: (f.node_ids, f.input_arg_ids, f.output_arg_ids) for k, f in slim.functions.items()},
            [None if nd is None else nd.SerializeToString(deterministic=True) for nd in slim.node_defs]]


def _same_slim_graph(blob: bytes, expect_columns: bool = True) -> None:
    parsed = build_slim_graph(graph_pb2.GraphDef.FromString(blob))
    encoded = split_graph_def(blob, "the test graph")
    assert (encoded.columns is not None) == expect_columns
    slim = build_slim_graph(encoded)
    assert _columns(slim) == _columns(parsed)
    assert [slim.node_defs.present(i) for i in range(slim.n_nodes)] == [
        parsed.node_defs.present(i) for i in range(parsed.n_nodes)]


@pytest.mark.parametrize("kind", ["tf1_graph", "tf2_keras_trace", "torch_cnn", "hf_llama_export", "keras_callback"])
def test_real_graphs_make_the_same_slim_graph_from_their_encoding(real_logs, kind):
    """TF1 (shapes on every node, a device), a Keras training step (library functions, resource
    handles), PyTorch's JIT and our torch.export graph, a Keras conceptual graph."""
    _same_slim_graph(load_graph_def(str(real_logs[kind])).SerializeToString())


def test_shapes_devices_and_library_functions_are_read():
    import tensorflow as tf

    @tf.function
    def block(x):
        return tf.nn.relu(tf.matmul(x, tf.ones([4, 4])) + 1.0)

    graph = tf.Graph()
    with graph.as_default(), tf.device("/cpu:0"):
        x = tf.compat.v1.placeholder(tf.float32, [2, 4], name="x")
        tf.identity(block(block(x)), name="y")
    graph_def = graph.as_graph_def(add_shapes=True)
    assert graph_def.library.function and any(n.device for n in graph_def.node)
    blob = graph_def.SerializeToString()
    _same_slim_graph(blob)
    slim = build_slim_graph(split_graph_def(blob, "g"))
    assert slim.has_shape_info and slim.functions and "/device:CPU:0" in slim.devices


def test_a_value_equal_to_the_marker_reads_node_by_node():
    for field in ("name", "input", "device", "op"):
        g = graph_pb2.GraphDef()
        g.node.add(name="a", op="Const")
        node = g.node.add(name="b", op="Identity", input=["a"])
        if field == "input":
            node.input.append(MARKER)
        else:
            setattr(node, field, MARKER)
        _same_slim_graph(g.SerializeToString(), expect_columns=False)


def test_a_field_written_twice_keeps_its_last_value_and_empty_fields_are_empty():
    """What protobuf does with a non-repeated field written twice, and with a name, op or
    device written empty (hand-made bytes: no writer does this)."""
    a = node_def_pb2.NodeDef(name="first", op="Relu", device="/gpu:0").SerializeToString()
    twice = a + node_def_pb2.NodeDef(name="second", device="/cpu:0").SerializeToString()
    empty = b"\x0a\x00\x12\x00\x22\x00"  # name "", op "", device ""
    blob = b"".join(b"\x0a" + bytes([len(n)]) + n for n in (a, twice, empty))
    _same_slim_graph(blob)
    assert build_slim_graph(split_graph_def(blob, "g")).names == ["first", "second", ""]


@pytest.mark.parametrize("damage, says", [
    (lambda b: b[:-3], "malformed GraphDef in the upload"),
    (lambda b: b"\x0a\x05\x0a\x03\xff\xfe\xfd", "malformed GraphDef in the upload"),  # a name not UTF-8
    (lambda b: b"\x0b" + b, "malformed GraphDef in the upload"),
])
def test_damaged_bytes_are_a_clear_error(damage, says):
    g = graph_pb2.GraphDef()
    g.node.add(name="a", op="Const")
    with pytest.raises(errors.InvalidArgumentError, match=says):
        split_graph_def(damage(g.SerializeToString()), "the upload")


def _damaged_attr_graph() -> bytes:
    """Node ``b`` whose attr ``T`` holds bytes that are not an AttrValue: splitting the GraphDef
    does not look inside attrs, so this is found when ``b``'s NodeDef is first parsed."""
    good = node_def_pb2.NodeDef(name="a", op="Const").SerializeToString()
    entry = b"\x0a\x01T" + b"\x12\x02\xff\xff"  # key "T", value: a truncated varint tag
    bad = node_def_pb2.NodeDef(name="b", op="Relu", input=["a"]).SerializeToString() + b"\x2a" + bytes(
        [len(entry)]) + entry
    return b"".join(b"\x0a" + bytes([len(n)]) + n for n in (good, bad))


def test_damage_inside_an_attr_is_a_clear_error_in_the_info_pane():
    blob = _damaged_attr_graph()
    slim = build_slim_graph(split_graph_def(blob, "g"))
    assert slim.names == ["a", "b"] and slim.node_defs[0].name == "a"
    with pytest.raises(MalformedNodeDef, match="NodeDef of op 1 is malformed"):
        slim.node_defs[1]
    state = tasks.GraphState({"graph": blob}, lambda stage, fraction: None)
    assert tasks.TASKS["node"](state, {"name": "a"}, lambda stage, fraction: None)
    with pytest.raises(errors.InvalidArgumentError, match="malformed GraphDef in this graph: the NodeDef of op 1"):
        tasks.TASKS["node"](state, {"name": "b"}, lambda stage, fraction: None)


def test_damage_inside_an_attr_the_build_reads_fails_the_build_clearly():
    """A node whose encoding holds ``_output_shapes`` is parsed while the SlimGraph is built."""
    entry = b"\x0a\x0e_output_shapes" + b"\x12\x02\xff\xff"
    bad = node_def_pb2.NodeDef(name="b", op="Relu").SerializeToString() + b"\x2a" + bytes([len(entry)]) + entry
    with pytest.raises(errors.InvalidArgumentError, match="malformed GraphDef in graph: the NodeDef of op 0"):
        tasks.GraphState({"graph": b"\x0a" + bytes([len(bad)]) + bad, "what": "graph"}, lambda s, f: None)


@pytest.mark.parametrize("as_view", [False, True])
def test_the_info_pane_shows_the_same_attrs_from_the_encoding(real_logs, as_view):
    blob = load_graph_def(str(real_logs["tf1_graph"])).SerializeToString()
    parsed = build_hierarchy(build_slim_graph(graph_pb2.GraphDef.FromString(blob)))
    encoded = build_hierarchy(build_slim_graph(split_graph_def(memoryview(blob) if as_view else blob, "g")))
    ops = list(range(0, parsed.n_ops, 3))
    attrs = [node_details(parsed, i).attrs for i in ops]
    assert any(attrs) and [node_details(encoded, i).attrs for i in ops] == attrs
    assert isinstance(encoded.slim.node_defs[0], node_def_pb2.NodeDef)


def test_columns_read_in_chunks_are_the_same(real_logs, monkeypatch):
    """Nodes are read ``_CHUNK`` at a time: chunk boundaries change nothing (TF1: every node has
    ``_output_shapes``, so the attr nodes' ids must be counted across chunks)."""
    from tb_graph_plugin.ingest import graph_encoding

    blob = load_graph_def(str(real_logs["tf1_graph"])).SerializeToString()
    whole = split_graph_def(blob, "g").columns
    monkeypatch.setattr(graph_encoding, "_CHUNK", 3)
    chunked = split_graph_def(blob, "g").columns
    assert whole.attr_nodes and len(whole.names) > 3
    assert chunked == whole
    _same_slim_graph(blob)
