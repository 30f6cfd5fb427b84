"""GraphDef -> SlimGraph post-conditions on tiny hand-built GraphDefs (proto API)."""

from __future__ import annotations

from tensorboard.compat.proto import graph_pb2, types_pb2

from tb_graph_plugin.graph import SlimGraphOptions, build_slim_graph
from tb_graph_plugin.wire import EdgeKindCode, EmbeddingRole


def _graph(*nodes):
    g = graph_pb2.GraphDef()
    for name, op, inputs in nodes:
        g.node.add(name=name, op=op, input=inputs)
    return g


def _edges(slim):
    return sorted(
        (slim.original_names[s], slim.original_names[d], k, o)
        for s, d, k, o in zip(slim.edge_src, slim.edge_dst, slim.edge_kind, slim.edge_output)
    )


def test_control_and_output_suffixes_are_normalized():
    g = _graph(("a", "Split", []), ("b", "NoOp", []), ("c", "Add", ["a:1", "a", "^b"]))
    slim = build_slim_graph(g)
    assert _edges(slim) == [("a", "c", EdgeKindCode.DATA, 0), ("a", "c", EdgeKindCode.DATA, 1),
                            ("b", "c", EdgeKindCode.CONTROL, -1)]


def test_reference_edge_is_input_zero_of_assign():
    g = _graph(("v", "VariableV2", []), ("x", "Placeholder", []), ("as", "Assign", ["v", "x"]))
    kinds = {(s, d): k for s, d, k, _ in _edges(build_slim_graph(g))}
    assert kinds == {("v", "as"): EdgeKindCode.REFERENCE, ("x", "as"): EdgeKindCode.DATA}


def test_output_shapes_give_edge_sizes_devices_and_xla():
    g = _graph(("a", "Placeholder", []), ("b", "Relu", ["a"]))
    a = g.node[0]
    shape = a.attr["_output_shapes"].list.shape.add()
    for d in (-1, 4, 8):
        shape.dim.add(size=d)
    a.device = "/device:CPU:0"
    a.attr["_XlaCluster"].s = b"cluster_0"
    slim = build_slim_graph(g)
    assert slim.output_shapes[0] == [(-1, 4, 8)]
    assert slim.edge_size.tolist() == [32]  # unknown dim counts 1
    assert slim.devices[0] == "/device:CPU:0" and slim.xla_clusters[0] == "cluster_0"
    assert slim.has_shape_info
    assert slim.edge(0).shape == (-1, 4, 8)


def test_const_and_summary_are_embeddings_beside_their_op():
    g = _graph(("w", "Const", []), ("x", "Placeholder", []), ("m", "MatMul", ["x", "w"]),
               ("s", "ScalarSummary", ["m"]), ("unused", "Const", []))
    slim = build_slim_graph(g)
    i = slim.index
    assert slim.embedding[i["w"]] == EmbeddingRole.IN_EMBEDDING and slim.owner[i["w"]] == i["m"]
    assert slim.embedding[i["s"]] == EmbeddingRole.OUT_EMBEDDING and slim.owner[i["s"]] == i["m"]
    assert slim.embedding[i["unused"]] == EmbeddingRole.MAIN  # nothing to sit beside
    assert slim.in_embeddings[i["m"]] == [i["w"]] and slim.out_embeddings[i["m"]] == [i["s"]]
    assert _edges(slim) == [("x", "m", EdgeKindCode.DATA, 0)]
    assert len(slim.embedding_edges) == 2


def test_torch_noise_is_embedded_and_its_data_inputs_go_to_the_consumer():
    g = _graph(("self", "prim::GetAttr", []), ("w", "prim::GetAttr", ["self"]),
               ("x", "IO Node", []), ("n", "aten::size", ["x"]),
               ("lst", "prim::ListConstruct", ["n"]), ("v", "aten::view", ["x", "lst"]),
               ("lin", "aten::linear", ["v", "w"]))
    slim = build_slim_graph(g)
    i = slim.index
    assert slim.owner[i["lst"]] == i["v"] and slim.owner[i["w"]] == i["lin"]
    assert slim.owner[i["self"]] == i["lin"]  # chain GetAttr -> GetAttr -> linear
    assert ("n", "v", EdgeKindCode.DATA, 0) in _edges(slim)  # data input kept, re-targeted
    assert all(slim.embedding[s] == EmbeddingRole.MAIN and slim.embedding[d] == EmbeddingRole.MAIN
               for s, d in zip(slim.edge_src, slim.edge_dst))
    off = build_slim_graph(g, SlimGraphOptions(embed_torch_noise=False))
    assert all(r == EmbeddingRole.MAIN for r in off.embedding)


def test_resource_arg_and_its_read_are_embeddings():
    g = _graph(("x", "_Arg", []), ("h", "_Arg", []), ("r", "ReadVariableOp", ["h"]),
               ("m", "MatMul", ["x", "r"]), ("upd", "AssignVariableOp", ["h", "m"]))
    g.node[0].attr["T"].type = types_pb2.DT_FLOAT
    g.node[1].attr["T"].type = types_pb2.DT_RESOURCE
    slim = build_slim_graph(g)
    i = slim.index
    assert slim.embedding[i["x"]] == EmbeddingRole.MAIN
    assert slim.embedding[i["h"]] == EmbeddingRole.IN_EMBEDDING and slim.embedding[i["r"]] == EmbeddingRole.IN_EMBEDDING
    assert slim.owner[i["r"]] == i["m"]
    assert i["h"] in slim.in_embeddings[i["upd"]]  # listed beside every consumer
    assert _edges(slim) == [("m", "upd", EdgeKindCode.DATA, 0), ("x", "m", EdgeKindCode.DATA, 0)]


def test_resource_handles_are_found_in_a_workers_encodings_however_the_attr_is_written():
    """A worker reads its nodes' encodings: a handle's attr entry as serializers write it is found
    without a parse; one written value-first (legal protobuf) or a placeholder of another dtype is
    parsed, and gives the same roles as the parsed GraphDef."""
    from tb_graph_plugin.ingest.graph_encoding import split_graph_def

    g = _graph(("x", "Placeholder", []), ("h", "_Arg", []), ("p", "Placeholder", []), ("r", "ReadVariableOp", ["h"]),
               ("q", "ReadVariableOp", ["p"]), ("m", "MatMul", ["x", "r"]), ("n", "Add", ["m", "q"]))
    g.node[0].attr["dtype"].type = types_pb2.DT_FLOAT
    g.node[1].attr["T"].type = types_pb2.DT_RESOURCE
    g.node[2].attr["dtype"].type = types_pb2.DT_RESOURCE
    blob = g.SerializeToString()
    canonical = b"\x2a\x07\x0a\x01T\x12\x02\x30\x14"
    assert blob.count(canonical) == 1
    value_first = blob.replace(canonical, b"\x2a\x07\x12\x02\x30\x14\x0a\x01T")
    assert graph_pb2.GraphDef.FromString(value_first) == g
    want = [EmbeddingRole.MAIN, EmbeddingRole.IN_EMBEDDING, EmbeddingRole.IN_EMBEDDING, EmbeddingRole.IN_EMBEDDING,
            EmbeddingRole.IN_EMBEDDING, EmbeddingRole.MAIN, EmbeddingRole.MAIN]
    for data in (blob, value_first):
        assert build_slim_graph(split_graph_def(data, "test")).embedding.tolist() == want
    assert build_slim_graph(g).embedding.tolist() == want


def test_name_that_is_also_a_namespace_is_renamed():
    g = _graph(("A", "Add", []), ("A/b", "Relu", ["A"]), ("C", "Relu", ["C/k"]),
               ("C/k", "Const", []))
    slim = build_slim_graph(g)
    assert slim.names[0] == "A/(A)" and slim.index["A"] == 0 and slim.index["A/(A)"] == 0
    assert slim.names[2] == "C"  # only main ops make namespaces (C/k is an embedding)


def test_dangling_inputs_are_kept_and_cycles_allowed():
    g = _graph(("a", "Merge", ["b", "ghost:1"]), ("b", "NextIteration", ["a"]))
    slim = build_slim_graph(g)
    assert [(d.node, d.input) for d in slim.dangling] == [(0, "ghost:1")]
    assert _edges(slim) == [("a", "b", EdgeKindCode.DATA, 0), ("b", "a", EdgeKindCode.DATA, 0)]


def test_function_library_nodes():
    g = graph_pb2.GraphDef()
    f = g.library.function.add()
    f.signature.name = "f"
    f.signature.input_arg.add(name="x", type=types_pb2.DT_FLOAT)
    f.signature.output_arg.add(name="y", type=types_pb2.DT_FLOAT)
    f.node_def.add(name="sq", op="Square", input=["x"])
    f.ret["y"] = "sq:y:0"
    slim = build_slim_graph(g)
    i = slim.index
    x, sq, y = i["__function_library__f/x"], i["__function_library__f/sq"], i["__function_library__f/y"]
    assert slim.ops[x] == "input_arg" and slim.function_input_index[x] == 0
    assert slim.ops[y] == "output_arg" and slim.function_output_index[y] == 0
    assert slim.functions["f"].node_ids == [x, sq, y]
    assert sorted(zip(slim.edge_src, slim.edge_dst)) == sorted([(x, sq), (sq, y)])


def test_inputs_resolve_the_same_through_the_marker_lookups_and_input_by_input():
    """Regression (issue 21, the inputs handed to the edge phase with each op's marker): ops
    without inputs between others, reference ops whose input 0 is dangling, a control input or
    ``x:N``, resolve the same in the fast path (markers found by the lookups), read from the
    parsed GraphDef or from its encoding, and input by input (a name holding ``:``)."""
    from tb_graph_plugin.ingest.graph_encoding import split_graph_def

    nodes = [("v", "VariableV2", []), ("w", "VariableV2", []), ("x", "Placeholder", []),
             ("as0", "Assign", []), ("as1", "Assign", ["ghost", "x"]), ("as2", "Assign", ["^x", "v"]),
             ("as3", "Assign", ["w:0", "x"]), ("c", "Add", ["x:1", "^v", "x", "gone:2"]),
             ("as4", "Assign", ["v", "x"]), ("z", "NoOp", [])]
    R, D, C = EdgeKindCode.REFERENCE, EdgeKindCode.DATA, EdgeKindCode.CONTROL
    want = [("v", "as2", D, 0), ("v", "as4", R, 0), ("v", "c", C, -1), ("w", "as3", R, 0), ("x", "as1", D, 0),
            ("x", "as2", C, -1), ("x", "as3", D, 0), ("x", "as4", D, 0), ("x", "c", D, 0), ("x", "c", D, 1)]
    for extra in ([], [("odd:name", "NoOp", [])]):  # a name holding ":": input by input
        g = _graph(*nodes, *extra)
        for slim in (build_slim_graph(g), build_slim_graph(split_graph_def(g.SerializeToString(), "g"))):
            assert _edges(slim) == want
            assert [(slim.names[d.node], d.input) for d in slim.dangling] == [("as1", "ghost"), ("c", "gone:2")]
