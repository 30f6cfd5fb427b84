"""``.onnx`` files written by ``torch.onnx.export`` -> GraphDef (``ingest.onnx_model``), read
without torch or onnx, and through a real TensorBoard's ``/upload``.

Inputs (``onnx_files``, ``tests/onnx_files.py``): a hand-written ResNet-like CNN (blocks whose
``relu`` is called twice, a block ``mix`` called twice) and a Hugging Face BERT from a small
config, each exported by the default (torch.export-based) exporter and by the TorchScript one.
What the converter is checked against is torch's and onnx's own record (``truth.json``, written
in a subprocess): the module calls torch.export recorded per node (``nn_module_stack``, ``@k`` per
call), and the graph as the ``onnx`` package reads it.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

import pytest
from tensorboard import errors

from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.ingest import onnx_model, parse
from tests.hierarchy.invariants import check_invariants, lowest_common_group
from tests.tb_app import OURS, TbApp

FILES = ["cnn", "cnn_legacy", "bert", "bert_legacy"]
BLOCKS = {"cnn": "BasicBlock", "bert": "BertLayer"}


@pytest.fixture(scope="module")
def truth(onnx_files):
    return json.loads((onnx_files / "truth.json").read_text())


@pytest.fixture(scope="module")
def converted(onnx_files):
    """stem -> (GraphDef, Hierarchy, {ONNX node name: NodeDef})."""
    out = {}
    for stem in FILES:
        g = onnx_model.onnx_to_graph_def((onnx_files / f"{stem}.onnx").read_bytes(), f"file {stem}.onnx")
        h = build_hierarchy(build_slim_graph(g))
        by_onnx = {n.attr["_onnx_name"].s.decode(): n for n in g.node if n.op.startswith(("onnx::", "Const"))
                   and "_onnx_name" in n.attr}
        out[stem] = (g, h, by_onnx)
    return out


def _scope(name: str) -> str:
    return name.rsplit("/", 1)[0] if "/" in name else ""


def _local_calls(calls: dict) -> dict:
    """Node -> its stack with torch.export's call index ``k`` (counted per module over the whole
    program) renumbered inside the parent call (the shared naming convention), in node order."""
    seen: dict = {}  # (parent call chain, module path) -> [torch's k of each distinct call]
    out = {}
    for name, stack in calls.items():
        local, chain = [], ()
        for path, cls, k in stack:
            ks = seen.setdefault((chain, path), [])
            if k not in ks:
                ks.append(k)
            local.append((path, cls, ks.index(k)))
            chain = chain + ((path, k),)
        out[name] = local
    return out


def _call_scope(calls) -> str:
    """The scope the shared naming convention gives a stack of module calls (local indices)."""
    parts = []
    for path, cls, k in calls:
        short = cls.rsplit(".", 1)[-1]
        attr = path.rsplit(".", 1)[-1]
        parts.append(short if not path else f"{short}[{attr}@{k}]" if k else f"{short}[{attr}]")
    return "/".join(parts)


@pytest.mark.parametrize("model", ["cnn", "bert"])
def test_every_op_is_in_the_scope_of_the_module_call_torch_recorded(converted, truth, model):
    _, _, by_onnx = converted[model]
    calls = _local_calls(truth["calls"][model])
    assert set(calls) == set(truth["graphs"][model]["nodes"])
    wrong = {name: (by_onnx[name].name, _call_scope(stack)) for name, stack in calls.items()
             if _scope(by_onnx[name].name) != _call_scope(stack)}
    assert not wrong


@pytest.mark.parametrize("model", ["cnn", "bert"])
def test_every_block_call_is_one_group_holding_its_ops(converted, truth, model):
    g, h, by_onnx = converted[model]
    check_invariants(h)
    ops_of_call = defaultdict(set)  # (module path, call) -> op names
    for name, stack in _local_calls(truth["calls"][model]).items():
        for depth, (path, cls, k) in enumerate(stack):
            if cls.rsplit(".", 1)[-1] == BLOCKS[model]:
                ops_of_call[(_call_scope(stack[: depth + 1]), path, k)].add(by_onnx[name].name)
    expected_calls = {"cnn": 4, "bert": 2}[model]  # layer1.0, layer1.1, mix, mix@1 / layer.0, layer.1
    assert len(ops_of_call) == expected_calls
    op_of = {n.name: n.op for n in g.node}
    block_groups = [gr.name for gr in h.walk_groups() if gr.label.startswith(BLOCKS[model] + "[")]
    assert sorted(block_groups) == sorted(scope for scope, _, _ in ops_of_call)
    for (scope, path, k), ops in ops_of_call.items():
        group = lowest_common_group(h, [h.id_of(op) for op in ops])
        assert h.name_of(group) == scope
        inside = {h.name_of(op) for op in h.leaf_ops(group)}
        assert ops <= inside
        assert {op_of[n] for n in inside - ops} <= {"Parameter", "Const"}, (scope, inside - ops)
    if model == "cnn":  # the block called twice, and relu called twice in every block call
        assert {s for s, _, _ in ops_of_call} >= {"TinyResNet/BasicBlock[mix]", "TinyResNet/BasicBlock[mix@1]"}
        relu_calls = [gr.name for gr in h.walk_groups() if gr.label.startswith("ReLU[")]
        assert len(relu_calls) == 8 and all(h.group(r).cardinality == 1 for r in relu_calls)
        assert "TinyResNet/BasicBlock[mix@1]/ReLU[relu@1]" in relu_calls


@pytest.mark.parametrize("stem", FILES)
def test_op_names_are_op_types_never_onnx_generated_names(converted, truth, stem):
    g, _, _ = converted[stem]
    nodes = truth["graphs"][stem]["nodes"]
    ops = [n for n in g.node if n.op.startswith("onnx::")]
    assert len(ops) == sum(1 for op_type, domain, _, _ in nodes.values() if op_type != "Constant")
    for n in ops:
        leaf, op_type = n.name.rsplit("/", 1)[-1], n.op.split("::", 1)[1]
        assert re.fullmatch(rf"{re.escape(op_type)}(_\d+)?", leaf), n.name
        onnx_name = n.attr["_onnx_name"].s.decode()
        assert nodes[onnx_name][0] == op_type
        assert n.name != onnx_name and not leaf.startswith("node_")
    for n in g.node:
        if n.op == "Const":
            assert re.fullmatch(r"Const(_\d+)?", n.name.rsplit("/", 1)[-1]), n.name


@pytest.mark.parametrize("stem", FILES)
def test_edges_are_the_onnx_dataflow(converted, truth, stem):
    g, _, by_onnx = converted[stem]
    graph = truth["graphs"][stem]
    by_name = {n.name: n for n in g.node}
    value_of = {}  # converted node (and output) -> ONNX value name
    for onnx_name, (_, _, _, outputs) in graph["nodes"].items():
        for k, value in enumerate(outputs):
            value_of[by_onnx[onnx_name].name + (f":{k}" if k else "")] = value
    for n in g.node:
        if n.op == "Parameter" or (n.op == "Const" and n.attr["_onnx_name"].s.decode() in graph["initializers"]):
            value_of[n.name] = n.attr["_onnx_name"].s.decode()
        elif n.op == "IO Node" and n.name.startswith("input/"):
            value_of[n.name] = n.name[len("input/"):]
    for onnx_name, (_, _, inputs, _) in graph["nodes"].items():
        assert [value_of[i] for i in by_onnx[onnx_name].input] == [v for v in inputs if v], onnx_name
    outputs = sorted(n for n in by_name if n.startswith("output/"))
    assert outputs == sorted(f"output/{o}" for o in graph["outputs"])
    assert sorted(n for n in by_name if n.startswith("input/")) == sorted(f"input/{i}" for i in graph["inputs"])
    for name in outputs:
        assert [value_of[i] for i in by_name[name].input] == [name[len("output/"):]]
    assert all(by_name[n].op == "IO Node" for n in outputs)


@pytest.mark.parametrize("stem", FILES)
def test_shapes_dtypes_and_parameters(converted, stem):
    g, _, _ = converted[stem]
    for n in g.node:
        if n.op in ("Parameter", "Const", "IO Node") or not stem.endswith("_legacy"):
            shapes = n.attr["_output_shapes"].list.shape
            assert shapes and not shapes[0].unknown_rank, n.name
            assert all(d.size >= 0 for d in shapes[0].dim), n.name  # static shapes in these exports
        if n.op in ("Parameter", "IO Node"):
            assert n.attr["dtype"].type in (1, 9), n.name  # DT_FLOAT, DT_INT64 (input_ids)
    params = {n.name: n for n in g.node if n.op == "Parameter"}
    if stem == "cnn":
        conv = params["TinyResNet/Conv2d[conv1]/weight"]
        assert [d.size for d in conv.attr["_output_shapes"].list.shape[0].dim] == [8, 3, 3, 3]
        assert conv.attr["_module_class"].s == b"torch.nn.modules.conv.Conv2d"
        assert "TinyResNet/Linear[fc]/bias" in params
    if stem == "cnn_legacy":
        assert {"conv1/weight", "conv1/bias", "fc/weight", "fc/bias"} <= set(params)
    if stem == "bert":
        word = "Bert/BertModel[bert]/BertEmbeddings[embeddings]/Embedding[word_embeddings]/weight"
        assert [d.size for d in params[word].attr["_output_shapes"].list.shape[0].dim] == [100, 32]


def test_torch_export_attrs_module_class_source_and_onnx_attributes(converted):
    g, _, _ = converted["cnn"]
    by_name = {n.name: n for n in g.node}
    relu = by_name["TinyResNet/BasicBlock[mix@1]/ReLU[relu@1]/Relu"]
    assert relu.attr["_module_class"].s == b"torch.nn.modules.activation.ReLU"
    assert re.fullmatch(rb".*onnx_files\.py:\d+ in forward", relu.attr["_source"].s)
    assert relu.attr["T"].type == 1
    gemm = by_name["TinyResNet/Linear[fc]/Gemm"]
    assert gemm.attr["transB"].i == 1 and gemm.attr["alpha"].f == 1.0
    conv = by_name["TinyResNet/Conv2d[conv1]/Conv"]
    assert list(conv.attr["kernel_shape"].list.i) == [3, 3]


def test_legacy_exporter_names_become_module_scopes(converted, truth):
    g, h, by_onnx = converted["cnn_legacy"]
    check_invariants(h)
    order = list(truth["graphs"]["cnn_legacy"]["nodes"])  # the file's node order
    for onnx_name in order:
        if onnx_name.startswith("/") and not re.search(r"(mix|relu|conv\d)_\d+/", onnx_name):
            parts = onnx_name.split("/")[1:-1]
            assert _scope(by_onnx[onnx_name].name) == "/".join(p.rsplit(".", 1)[-1] for p in parts), onnx_name
    block = [by_onnx[n].name for n in order if n.startswith("/layer1/layer1.0/")]
    assert h.name_of(lowest_common_group(h, [h.id_of(op) for op in block])) == "layer1/0"
    # the exporter's relu_1 is relu's second call
    assert [n.name for n in g.node if n.op == "onnx::Relu" and n.name.startswith("layer1/0/")] == [
        "layer1/0/relu/Relu", "layer1/0/relu@1/Relu"]
    # the block called twice (the exporter wrote /mix/conv1/Conv ... then /mix/conv1_1/Conv, /mix_1/Add):
    # each call is one group holding the ops written between the root ops around it
    mul = order.index("/Mul")
    op_of = {n.name: n.op for n in g.node}
    for call, nodes in (("mix", order[:mul]), ("mix@1", order[mul + 1:])):
        ops = {by_onnx[n].name for n in nodes if n.startswith(("/mix/", "/mix_1/"))}
        group = lowest_common_group(h, [h.id_of(op) for op in ops])
        assert h.name_of(group) == call
        inside = {h.name_of(op) for op in h.leaf_ops(group)}
        # besides: weights, and the exporter's Identity copies of them (written first, unscoped)
        assert ops <= inside and {op_of[n] for n in inside - ops} <= {"Parameter", "Const", "onnx::Identity"}
    g, h, by_onnx = converted["bert_legacy"]
    layer = [by_onnx[n].name for n in truth["graphs"]["bert_legacy"]["nodes"]
             if n.startswith("/bert/encoder/layer.1/")]
    assert h.name_of(lowest_common_group(h, [h.id_of(op) for op in layer])) == "bert/encoder/1"
    # the exporter's Identity copies of shared weights sit with the parameter they are named after
    copies = {n: outputs[0] for n, (op, _, _, outputs) in truth["graphs"]["bert_legacy"]["nodes"].items()
              if op == "Identity" and not n.startswith("/")}
    assert copies
    for onnx_name, value in copies.items():  # bert.encoder.layer.1.output.LayerNorm.bias
        module = value.rsplit(".", 1)[0].replace("bert.encoder.layer.", "bert.encoder.")
        assert re.fullmatch(re.escape(module.replace(".", "/")) + r"/Identity(_\d+)?", by_onnx[onnx_name].name)


def test_attributes_are_summarised_never_their_data():
    """A hand-built model (no torch exporter, so node names are kept): lists, tensors, subgraphs."""
    from tb_graph_plugin.ingest import onnx_proto

    model = onnx_proto._model_class()(ir_version=9)
    g = model.graph
    g.input.add(name=b"x").type.tensor_type.elem_type = 1
    const = g.node.add(name=b"c", op_type=b"Constant", output=[b"k"])
    const.attribute.add(name=b"value", type=4).t.CopyFrom(type(const.attribute.add().t)(dims=[2, 3], data_type=7))
    del const.attribute[1]
    node = g.node.add(name=b"my/op", op_type=b"Custom", domain=b"com.example", input=[b"x", b"k", b""], output=[b"y"])
    node.attribute.add(name=b"big", type=7, ints=range(1000))
    node.attribute.add(name=b"few", type=7, ints=[1, 2])
    node.attribute.add(name=b"T", type=3, s=b"clash")
    node.attribute.add(name=b"w", type=4).t.dims.extend([4, 5])
    g.output.add(name=b"y")
    graph = onnx_model.onnx_to_graph_def(model.SerializeToString(), "hand-built")
    by_name = {n.name: n for n in graph.node}
    assert set(by_name) == {"input/x", "c", "my/op", "output/y"}
    assert by_name["c"].op == "Const" and by_name["c"].attr["dtype"].type == 9
    assert [d.size for d in by_name["c"].attr["_output_shapes"].list.shape[0].dim] == [2, 3]
    op = by_name["my/op"]
    assert op.op == "com.example::Custom" and list(op.input) == ["input/x", "c"]
    assert op.attr["big"].s == b"1000 ints: [0, 1, 2, 3, 4, 5, 6, 7, \xe2\x80\xa6]"
    assert list(op.attr["few"].list.i) == [1, 2]
    assert op.attr["onnx.T"].s == b"clash" and "T" not in op.attr  # the output's type is unknown
    assert op.attr["w"].s == b"tensor type0[4,5]"
    assert list(by_name["output/y"].input) == ["my/op"]


# ------------------------------------------------------------------------- bad bytes


def _error(blob, filename="x.onnx") -> str:
    with pytest.raises(errors.InvalidArgumentError) as info:
        parse.parse_graph_file(blob, f"uploaded file {filename!r}", filename)
    return str(info.value)


def _nested_graph_attribute(depth: int) -> bytes:
    """A ModelProto whose graph's node has a graph attribute holding a node with a graph
    attribute ... ``depth`` levels down (protobuf encoding by hand)."""
    def field(number: int, payload: bytes) -> bytes:
        return _varint(number << 3 | 2) + _varint(len(payload)) + payload

    graph = field(1, field(4, b"Relu"))  # GraphProto{node: NodeProto{op_type}}
    for _ in range(depth):
        graph = field(1, field(4, b"If") + field(5, field(1, b"then_branch") + field(6, graph)))  # node.attribute.g
    return b"\x08\x08" + field(7, graph)  # ir_version 8, graph


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def test_malformed_onnx_says_what_is_wrong(onnx_files):
    blob = (onnx_files / "cnn.onnx").read_bytes()
    assert _error(blob[: len(blob) // 2]).startswith(
        "Invalid argument: uploaded file 'x.onnx' is not an ONNX model: not a binary ModelProto (Error parsing message")
    assert _error(b"\xff" * 64).startswith("Invalid argument: uploaded file 'x.onnx' is not an ONNX model: not a binary")
    assert _error(b"node { name: 'a' }").startswith("Invalid argument: uploaded file 'x.onnx' is not an ONNX model")
    assert _error(b"\x08\x07") == (
        "Invalid argument: uploaded file 'x.onnx' is not an ONNX model: the ModelProto holds no graph")
    assert _error(b"\x08\x07\x3a\x00") == (
        "Invalid argument: uploaded file 'x.onnx' is an ONNX model whose graph holds no nodes")
    assert _error(b"\x08\x07\x3a\xff\xff\xff\xff\xff\xff\xff\xff\x7f").startswith(
        "Invalid argument: uploaded file 'x.onnx' is not an ONNX model: not a binary ModelProto")
    assert "not a binary ModelProto" in _error(_nested_graph_attribute(5000))
    shallow = onnx_model.onnx_to_graph_def(_nested_graph_attribute(3), "shallow")
    assert [n.op for n in shallow.node] == ["onnx::If"]
    assert shallow.node[0].attr["then_branch"].s == b"graph '': 1 nodes"


def test_recognised_by_content_without_its_name(onnx_files):
    blob = (onnx_files / "bert.onnx").read_bytes()
    assert onnx_model.looks_like_onnx(blob, "upload") and onnx_model.looks_like_onnx(blob, None)
    graph, source = parse.read_graph_file(blob, "uploaded file 'upload'", "upload")
    assert source.startswith("ONNX model (pytorch 2.")
    assert graph == onnx_model.onnx_to_graph_def(blob, "x")


def test_op_limit_refuses_before_converting(onnx_files):
    blob = (onnx_files / "cnn.onnx").read_bytes()
    with pytest.raises(parse.GraphTooLarge) as info:
        onnx_model.onnx_to_graph_def(blob, "uploaded file 'cnn.onnx'", max_ops=10)
    assert info.value.limit == 10 and info.value.ops > 10


# ------------------------------------------------------------ through a real TensorBoard


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    app = TbApp(tmp_path_factory.mktemp("empty_logdir"), workers=1)
    yield app
    app.ours.pool.close()


@pytest.mark.parametrize("stem", ["cnn", "bert"])
def test_upload_opens_the_graph(app, onnx_files, stem):
    blob = (onnx_files / f"{stem}.onnx").read_bytes()  # without its .onnx.data: weights are not read
    response = app.post(OURS + "/upload", blob, filename=f"{stem}.onnx")
    assert response.status_code == 200, response.get_data(as_text=True)
    answer = response.get_json()
    assert answer["source"].startswith("ONNX model (pytorch 2.") and answer["warnings"] == []
    ref = {k: v for k, v in answer["graph"].items() if v is not None}
    root = {"cnn": "TinyResNet", "bert": "Bert"}[stem]
    scene = app.json(OURS + "/scene", wait="60", **ref)
    names = {n["name"] for n in scene["nodes"]}
    assert {"input", "output"} <= {n.split("/")[0] for n in names} and any(n.startswith(root) for n in names)
    block = {"cnn": "BasicBlock[mix@1]", "bert": "BertLayer[1]"}[stem]
    hits = app.json(OURS + "/search", wait="30", q=re.escape(block) + "$", **ref)["hits"]
    assert [h["kind"] for h in hits] == ["meta"]
    relu = app.json(OURS + "/search", wait="30", q=".", op="onnx::Relu" if stem == "cnn" else "Gelu", **ref)
    assert relu["total"] == {"cnn": 8, "bert": 2}[stem]


def test_malformed_upload_is_400_with_a_message(app, onnx_files):
    blob = (onnx_files / "cnn.onnx").read_bytes()
    response = app.post(OURS + "/upload", blob[:-100], filename="cnn.onnx")
    assert response.status_code == 400
    assert response.get_json()["error"].startswith(
        "Invalid argument: uploaded file 'cnn.onnx' is not an ONNX model: not a binary ModelProto (")


def test_upload_over_the_op_limit_is_413(tmp_path_factory, onnx_files):
    small = TbApp(tmp_path_factory.mktemp("empty_logdir_small"), max_ops=20, workers=1)
    try:
        response = small.post(OURS + "/upload", (onnx_files / "cnn.onnx").read_bytes(), filename="cnn.onnx")
        assert response.status_code == 413
        assert "more than this server's limit of 20" in response.get_json()["error"]
    finally:
        small.ours.pool.close()
