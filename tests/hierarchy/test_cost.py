"""Cost per op and per group (``graph.cost``, ``hierarchy.cost``) against what the frameworks say.

Real models (``tests/pytorch/cost_models.py``): Hugging Face BERT, GPT-2 and LLaMA from small
configs captured with ``tb_graph_plugin.torch.add_graph``; every module call's ``params`` is
``sum(p.numel())`` of that module, the model's FLOPs within 2 % of ``FlopCounterMode``'s total on
the same input, a tied weight counted once; the BERT's ``.onnx`` has the same parameters; a Keras
model's conceptual graph (its ``to_json``) gives ``model.count_params()``.
"""

from __future__ import annotations

import json
import re

import pytest
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.graph.cost import cached_op_costs, op_costs
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.hierarchy.cost import cost_values, node_cost
from tb_graph_plugin.ingest.keras_model import keras_json_to_graph_def
from tb_graph_plugin.ingest.local import load_graph_def_from_path

HF_MODELS = ["bert", "gpt2", "llama"]
_CALL = re.compile(r"^[\w.]+\[([^\]@]+)(@\d+)?\]$")


def _hierarchy(path):
    return build_hierarchy(build_slim_graph(load_graph_def_from_path(str(path))))


def _truth(cost_models):
    return json.loads((cost_models / "truth.json").read_text())


def module_path(group_name: str):
    """``BertModel/BertEncoder[encoder]/layer/BertLayer[0]`` -> ``encoder.layer.0``; None for a group
    that is no module's first call (``create_causal_mask()``, ``ReLU[relu@1]``, ``input``)."""
    parts = group_name.split("/")
    if parts[0] in ("input", "output"):
        return None
    path = []
    for part in parts[1:]:
        m = _CALL.match(part)
        if part.endswith("()") or (m and m.group(2)):
            return None
        path.append(m.group(1) if m else part)
    return ".".join(path)


@pytest.mark.slow
@pytest.mark.parametrize("model", HF_MODELS)
def test_each_module_call_has_its_modules_parameters(cost_models, model):
    truth = _truth(cost_models)[model]
    h = _hierarchy(cost_models / model)
    checked = 0
    for g in h.walk_groups():
        path = module_path(g.name) if g.parent >= 0 else None
        if path is None or path not in truth["modules"]:
            continue
        assert node_cost(h, g.id).params == truth["modules"][path], g.name
        checked += 1
    assert checked >= 20  # every block, attention, MLP, norm and linear, and the model itself
    root = node_cost(h, h.root.name)
    assert root.params == truth["params"]
    assert root.param_bytes == 4 * truth["params"]  # float32


@pytest.mark.slow
@pytest.mark.parametrize("model", HF_MODELS + ["gpt2_lm_tied"])
def test_model_flops_within_two_percent_of_torch_flop_counter(cost_models, model):
    truth = _truth(cost_models)[model]
    h = _hierarchy(cost_models / model)
    total = node_cost(h, h.root.name)
    assert abs(total.flops - truth["flops"]) <= 0.02 * truth["flops"], (total.flops, truth["flops"])
    assert total.flops >= truth["flops"]  # torch counts the matmuls only; the element-wise ops add
    assert total.output_bytes > 0


@pytest.mark.slow
def test_a_tied_weight_is_counted_once_in_its_first_reader(cost_models):
    truth = _truth(cost_models)["gpt2_lm_tied"]
    h = _hierarchy(cost_models / "gpt2_lm_tied")
    assert node_cost(h, h.root.name).params == truth["params"]  # wte once, though lm_head reads it too
    wte = next(g for g in h.walk_groups() if g.name.endswith("Embedding[wte]"))
    head = next(g for g in h.walk_groups() if g.name.endswith("Linear[lm_head]"))
    assert node_cost(h, wte.id).params == truth["modules"]["transformer.wte"]
    assert node_cost(h, head.id).params == 0
    assert node_cost(h, head.id).flops > 0


@pytest.mark.slow
def test_the_onnx_export_of_bert_has_the_same_parameters(cost_models):
    truth = _truth(cost_models)["bert"]
    h = _hierarchy(cost_models / "bert.onnx")
    root = node_cost(h, h.root.name)
    assert root.params == truth["params"]  # module initializers and the exporter's folded weight.T
    assert root.unknown_ops == 0
    assert abs(root.flops - truth["flops"]) <= 0.02 * truth["flops"]
    for g in h.walk_groups():
        if g.name.endswith("/BertLayer[0]"):
            assert node_cost(h, g.id).params == truth["modules"]["encoder.layer.0"]
            break
    else:
        pytest.fail("no BertLayer[0] group in the ONNX graph")


@pytest.mark.slow
@pytest.mark.parametrize("model", ["keras_cnn", "keras_bert"])
def test_a_keras_conceptual_graph_gives_count_params(cost_models, model):
    truth = json.loads((cost_models / "keras_truth.json").read_text())[model]
    graph_def = keras_json_to_graph_def((cost_models / f"{model}.json").read_bytes(), model)
    h = build_hierarchy(build_slim_graph(graph_def))
    c = node_cost(h, h.root.name)
    assert c.params == truth
    assert c.unknown_ops == h.root.cardinality  # no shapes past each layer's input: FLOPs unknown, said so
    assert all(t.startswith("keras:") for t in c.unknown_op_types)


def test_the_keras_callback_conceptual_graph_gives_count_params(real_logs):
    graph_def = load_graph_def_from_path(str(real_logs["keras_callback"]), tag="keras")
    h = build_hierarchy(build_slim_graph(graph_def))
    assert node_cost(h, h.root.name).params == 2362  # logwriters._small_keras_model().count_params()


# -- tiny hand-built graphs: each rule's post-condition --------------------------------------------


def _node(g, name, op, shape, inputs=(), dtype=1, **attrs):
    n = g.node.add(name=name, op=op, input=list(inputs))
    n.attr["T" if op not in ("Placeholder", "Const", "VariableV2") else "dtype"].type = dtype
    if shape is not None:
        s = n.attr["_output_shapes"].list.shape.add()
        for d in shape:
            s.dim.add(size=d)
    for k, v in attrs.items():
        if isinstance(v, bool):
            n.attr[k].b = v
        elif isinstance(v, str):
            n.attr[k].s = v.encode()
        else:
            n.attr[k].i = v
    return n


def _costs(g):
    slim = build_slim_graph(g)
    c = op_costs(slim)
    return {name: (int(c.params[i]), int(c.flops[i]), int(c.output_bytes[i]), bool(c.unknown[i]))
            for i, name in enumerate(slim.names)}


def test_tf_rules_count_matmul_conv_depthwise_and_elementwise():
    g = graph_pb2.GraphDef()
    _node(g, "x", "Placeholder", (2, 8, 8, 3))
    _node(g, "w", "VariableV2", (3, 3, 3, 16))
    _node(g, "conv", "Conv2D", (2, 8, 8, 16), ["x", "w"])
    _node(g, "dw_w", "Const", (3, 3, 16, 2))
    _node(g, "dw", "DepthwiseConv2dNative", (2, 8, 8, 32), ["conv", "dw_w"])
    _node(g, "relu", "Relu", (2, 8, 8, 32), ["dw"])
    _node(g, "flat", "Reshape", (2, 2048), ["relu"])
    _node(g, "fw", "Const", (10, 2048))
    _node(g, "fc", "MatMul", (2, 10), ["flat", "fw"], transpose_b=True)
    _node(g, "sum", "Sum", (2,), ["fc"])
    _node(g, "mystery", "FancyOp", (2,), ["sum"])
    c = _costs(g)
    assert c["w"] == (3 * 3 * 3 * 16, 0, 0, False)
    assert c["conv"][1] == 2 * (2 * 8 * 8 * 16) * (3 * 3 * 3)
    assert c["dw"][1] == 2 * (2 * 8 * 8 * 32) * 9
    assert c["dw_w"][0] == 3 * 3 * 16 * 2  # a Const read as a weight is a parameter
    assert c["relu"] == (0, 2 * 8 * 8 * 32, 4 * 2 * 8 * 8 * 32, False)
    assert c["flat"][1] == 0
    assert c["fc"][1] == 2 * 2 * 10 * 2048  # K from x, not the transposed weight
    assert c["sum"][1] == 20
    assert c["mystery"][3] is True


def test_unknown_shapes_make_an_op_unknown_never_zero():
    g = graph_pb2.GraphDef()
    _node(g, "x", "Placeholder", None)
    _node(g, "y", "Relu", None, ["x"])
    _node(g, "z", "Relu", (-1, 4), ["y"])
    c = _costs(g)
    assert c["y"][3] and c["z"][3]
    h = build_hierarchy(build_slim_graph(g))
    total = node_cost(h, h.root.name)
    assert total.unknown_ops == 3 and total.unknown_op_types == {"Relu": 2, "Placeholder": 1}


def test_torch_rules_transposed_and_grouped_conv_attention_einsum():
    g = graph_pb2.GraphDef()
    _node(g, "x", "IO Node", (1, 8, 5, 5))
    _node(g, "w", "torch::parameter", (8, 2, 3, 3))  # groups=4: C_in / groups = 2
    _node(g, "conv", "aten::conv2d", (1, 8, 5, 5), ["x", "w"], groups=4)
    _node(g, "wt", "torch::parameter", (8, 4, 2, 2))  # transposed: [C_in, C_out / groups, k, k]
    _node(g, "up", "aten::convolution", (1, 4, 10, 10), ["conv", "wt"], transposed=True)
    _node(g, "q", "IO Node", (2, 4, 16, 8))
    _node(g, "k", "IO Node", (2, 4, 32, 8))
    _node(g, "v", "IO Node", (2, 4, 32, 6))
    _node(g, "att", "aten::scaled_dot_product_attention", (2, 4, 16, 6), ["q", "k", "v"])
    _node(g, "e", "aten::einsum", (2, 4, 16, 32), ["q", "k"], equation="bhqd,bhkd->bhqk")
    _node(g, "sm", "aten::_softmax.default", (2, 4, 16, 32), ["e"])
    c = _costs(g)
    assert c["conv"][1] == 2 * (8 * 5 * 5) * (2 * 3 * 3)
    assert c["up"][1] == 2 * (8 * 5 * 5) * (4 * 2 * 2)  # torch: from the input's size
    assert c["att"][1] == 2 * 2 * 4 * 16 * 32 * (8 + 6)
    assert c["e"][1] == 2 * 2 * 4 * 16 * 32 * 8
    assert c["sm"][1] == 5 * 2 * 4 * 16 * 32  # overload suffix dropped, a norm-class op


def test_cost_values_sum_to_the_group_costs(cost_models):
    h = _hierarchy(cost_models / "bert")
    ids, values = cost_values(h, "flops")
    assert sum(values) == node_cost(h, h.root.name).flops
    assert all(h.slim.owner[i] < 0 for i in ids)  # main ops only: embeddings fold into their owner
    assert cached_op_costs(h.slim) is cached_op_costs(h.slim)


def test_a_tf1_graph_with_shapes_counts_its_variables_and_matmuls(tf_bert_like):
    """The BERT-like TF graph (``tests/graph/tf_bert_like.py``, ``add_shapes=True``): its variables'
    elements as TensorFlow counts them; every attention layer's FLOPs; only initializer and
    variable-bookkeeping ops unknown, each listed."""
    truth = json.loads(tf_bert_like.with_name("bert_like.pb.json").read_text())
    h = build_hierarchy(build_slim_graph(load_graph_def_from_path(str(tf_bert_like))))
    total = node_cost(h, h.root.name)
    assert total.params == truth["params"]
    attention = node_cost(h, "layer_0/attention")
    seq, width, heads = 16, 64, 4
    matmuls = 4 * 2 * (2 * seq) * width * width + 2 * 2 * (2 * heads * seq * seq * (width // heads))
    costs = cached_op_costs(h.slim)
    ops = list(h.leaf_ops("layer_0/attention"))
    assert sum(int(costs.flops[i]) for i in ops if h.slim.ops[i] in ("MatMul", "BatchMatMulV2")) == matmuls
    assert attention.flops > matmuls  # and the element-wise ops (bias, scale, mask, softmax, initializers)
    assert total.unknown_ops == sum(total.unknown_op_types.values()) < h.root.cardinality // 4


MATMUL_CLASS = ("conv", "linear", "gemm", "matmul")


@pytest.mark.slow
@pytest.mark.parametrize("path", ["convnet", "convnet.onnx"])
def test_every_kind_of_convolution_counts_as_torch_counts_it(cost_models, path):
    """Plain, grouped, depthwise, transposed (and grouped), 1-d convolutions and the linear head: the
    FLOPs of those ops are exactly ``FlopCounterMode``'s total (it counts nothing else), in the
    ``add_graph`` capture and in the ``.onnx`` export alike."""
    truth = _truth(cost_models)["convnet"]
    slim = build_slim_graph(load_graph_def_from_path(str(cost_models / path)))
    costs = op_costs(slim)
    counted = [i for i, op in enumerate(slim.ops) if any(k in op.lower() for k in MATMUL_CLASS)]
    assert len(counted) == 7
    assert sum(int(costs.flops[i]) for i in counted) == truth["flops"]
    assert not costs.unknown.any()
    if path == "convnet":
        assert int(costs.params.sum()) == truth["params"]
