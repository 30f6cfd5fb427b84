"""An op's label is its op type where a PyTorch name was generated (``graph/labels.py``).

Regression (issue 20, issue 23 item 4): PyTorch ``add_graph`` names ops by JIT value names, so
ops were labelled ``816``, ``input.5``; a torch.export front end names them ``add_3``.
"""

from __future__ import annotations

import pytest

from tb_graph_plugin.graph.labels import op_label, short_op_type


@pytest.mark.parametrize("name, op, label", [
    ("GPT2Model/Block[h]/816", "aten::add", "add"),  # a JIT value number
    ("m/input.5", "aten::linear", "linear"),  # <identifier>.<digits>
    ("m/x.1", "prim::Constant", "Constant"),
    ("GPT2Model/h/0/attn/add_3", "aten::add", "add"),  # torch.export: <short op>_<n>
    ("m/add", "aten::add", "add"),
    ("m/ADD_12", "aten::add", "add"),  # ignoring case
    ("/layer1/conv/Conv_12", "onnx::Conv", "Conv"),
    ("m/conv", "onnx::Conv", "Conv"),
    ("m/blocks/add_3", "aten::add.Tensor", "add"),  # overload dropped
    ("m/816/(816)", "aten::mul", "mul"),  # an op that is also a scope (graph/names.py)
    ("m/q_idx", "aten::index", "q_idx"),  # the author's names stay
    ("m/attention_mask", "aten::expand", "attention_mask"),
    ("m/add_x", "aten::add", "add_x"),
    ("m/addmm_2", "aten::add", "addmm_2"),
    ("m/weight", "prim::GetAttr", "weight"),
    ("dense/MatMul", "MatMul", "MatMul"),  # TensorFlow: never changed
    ("dense/816", "Identity", "816"),
    ("dense/add_3", "AddV2", "add_3"),
    ("m/816", "aten::", "816"),  # no short type to show
])
def test_op_label(name, op, label):
    assert op_label(name, op) == label


def test_short_op_type():
    assert [short_op_type(t) for t in ("aten::add", "prim::TupleConstruct", "onnx::Conv", "aten::add.Tensor", "Add")] \
        == ["add", "TupleConstruct", "Conv", "add", ""]
