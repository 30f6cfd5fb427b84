"""What each op of a SlimGraph costs: parameters, FLOPs and output bytes, from what the graph records.

For op ``i``, :func:`op_costs` reads its op type, its output shapes (``slim.output_shapes``, from
``_output_shapes``), its inputs' shapes in argument order (the NodeDef's ``input`` list: the
shapes of the outputs they name) and its attrs (dtype ``T``/``dtype``/``DstT``/``out_type``,
transposes, an einsum equation, a torch ``transposed`` flag), and applies the rule of its op type
(``graph.cost_rules``: formulas per framework, and the conventions they follow):

- ``params``: the elements of a parameter op's output (``PARAMETER_OPS``: ``torch::parameter``,
  an ONNX module initializer ``Parameter``, a TF ``VariableV2``/``VarHandleOp``, shape attr
  ``shape`` first); ``param_bytes`` those times the dtype's size. A parameter is one op however
  many ops read it, so a shared parameter is counted once; also a float ``Const`` read as the weight
  of a matmul or a convolution (``WEIGHT_READERS``): beside its first reader (its owner,
  ``slim.owner``: the SlimGraph draws it there), so in that reader's group;
- ``flops``: the rule's count; ``output_bytes``: every output's elements times the dtype's size
  (a parameter's are its ``param_bytes``, not output bytes; a graph output ``IO Node`` reading a
  tensor adds none: its producer counted it);
- ``unknown``: the op's NodeDef is damaged, the op type has no rule, or the rule, the shapes or the dtype could not say its
  FLOPs or output bytes: those add 0 to the sums, and the op is counted and listed apart
  (``unknown_ops``), never silently 0. A Keras conceptual graph's layer (no op type; attr
  ``keras_class``) has its parameters counted from its config (``graph.cost_keras``) and is
  unknown for the rest: such a graph records no shapes past each layer's input.

Pre: a built SlimGraph. Post: every column has one entry per op; ``owned_*`` columns hold each
main op's own cost plus that of the embeddings it owns (an embedding's own row is 0 there), so a
group's cost is the sum of ``owned_*`` over its main ops (``hierarchy.cost``). Cost: one pass over
the ops (each NodeDef read once), done when first asked (:func:`cached_op_costs`), never while
building the SlimGraph: the first view does not wait for it.

>>> from tensorboard.compat.proto import graph_pb2
>>> from tb_graph_plugin.graph import build_slim_graph
>>> g = graph_pb2.GraphDef()
>>> x = g.node.add(name="x", op="Placeholder"); x.attr["dtype"].type = 1
>>> s = x.attr["_output_shapes"].list.shape.add(); _ = [s.dim.add(size=d) for d in (4, 8)]
>>> w = g.node.add(name="w", op="VariableV2"); w.attr["dtype"].type = 1
>>> s = w.attr["_output_shapes"].list.shape.add(); _ = [s.dim.add(size=d) for d in (8, 16)]
>>> m = g.node.add(name="m", op="MatMul", input=["x", "w"]); m.attr["T"].type = 1
>>> s = m.attr["_output_shapes"].list.shape.add(); _ = [s.dim.add(size=d) for d in (4, 16)]
>>> c = op_costs(build_slim_graph(g))
>>> int(c.params.sum()), int(c.flops.sum()), int(c.output_bytes.sum()), int(c.unknown.sum())
(128, 1024, 384, 0)
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Optional

import numpy as np

from tb_graph_plugin.graph.cost_keras import layer_params
from tb_graph_plugin.graph.cost_rules import PARAMETER_OPS, OpFacts, prod, rule_of
from tb_graph_plugin.graph.node_defs import MalformedNodeDef

__all__ = ["OpCosts", "op_costs", "cached_op_costs", "DTYPE_BYTES", "NO_OUTPUT_OPS"]

#: TensorFlow ``DataType`` (types.proto) -> bytes per element; ``_REF`` types are +100.
DTYPE_BYTES = {1: 4, 2: 8, 3: 4, 4: 1, 5: 2, 6: 1, 8: 8, 9: 8, 10: 1, 11: 1, 12: 1, 13: 4, 14: 2, 15: 2,
               16: 4, 17: 2, 18: 16, 19: 2, 22: 4, 23: 8, 24: 1, 25: 1, 26: 1, 27: 1, 28: 1, 29: 1}
_DTYPE_ATTRS = ("T", "dtype", "DstT", "out_type", "output_type", "Tout", "Tidx")
#: Ops that output nothing: 0 output bytes whatever their shapes say.
NO_OUTPUT_OPS = frozenset({"NoOp", "_Retval", "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
                           "SaveV2", "MergeV2Checkpoints", "ControlTrigger"})


#: Ops whose second input is a weight: a ``Const`` there is a parameter (a frozen TF graph's weights, an
#: ONNX exporter's folded ``weight.T`` initializers ``val_37``), counted in ``params``, not output bytes.
WEIGHT_READERS = frozenset({"MatMul", "_FusedMatMul", "Conv2D", "Conv3D", "_FusedConv2D", "DepthwiseConv2dNative",
                            "onnx::MatMul", "onnx::Gemm", "onnx::Conv", "onnx::ConvTranspose"})
_FLOAT_TYPES = frozenset({1, 2, 14, 19})  # float32, float64, bfloat16, float16


#: TF ops whose output is bool whatever their ``T`` (the input's type) says.
BOOL_OUTPUT_OPS = frozenset({"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual", "LogicalAnd",
                             "LogicalOr", "LogicalNot", "IsNan", "IsFinite", "IsInf", "VarIsInitializedOp",
                             "IsVariableInitialized"})


@dataclasses.dataclass
class OpCosts:
    """Per-op cost columns (index = op id), int64 (``unknown`` bool), and the ``owned_*`` sums."""

    params: np.ndarray
    param_bytes: np.ndarray
    flops: np.ndarray
    output_bytes: np.ndarray
    unknown: np.ndarray
    owned: dict = dataclasses.field(default_factory=dict)  # column name -> owned column

    FIELDS = ("params", "param_bytes", "flops", "output_bytes", "unknown")


def cached_op_costs(slim) -> OpCosts:
    """:func:`op_costs` of ``slim``, computed on the first call and kept on it (``slim.cost_memo``)."""
    memo = getattr(slim, "cost_memo", None)
    if memo is None:
        memo = slim.cost_memo = op_costs(slim)
    return memo


def _attr_value(value) -> Any:
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "list":
        lst = value.list
        return list(lst.i) or list(lst.f) or [s.decode("utf-8", "replace") for s in lst.s] or list(lst.type) or list(lst.b)
    if which == "s":
        return value.s.decode("utf-8", "replace")
    if which == "shape":
        return None if value.shape.unknown_rank else tuple(d.size for d in value.shape.dim)
    return getattr(value, which)


def _dtype_bytes(attr) -> Optional[int]:
    for key in _DTYPE_ATTRS:
        if key in attr:
            v = attr[key]
            t = v.type if v.WhichOneof("value") == "type" else (v.list.type[0] if len(v.list.type) else None)
            if t is not None:
                return DTYPE_BYTES.get(t % 100 if t > 100 else t)
    return None


def _keras_params(attr) -> Optional[int]:
    try:
        config = json.loads(attr["_keras_config"].s) if "_keras_config" in attr else {}
    except ValueError:
        return None
    return layer_params(attr["keras_class"].s.decode("utf-8", "replace"), config) if isinstance(config, dict) else None


def _known(shape) -> Optional[tuple]:
    if shape is None or any(d < 0 for d in shape):
        return None
    return tuple(shape)


def op_costs(slim) -> OpCosts:
    """The cost columns of every op of ``slim`` (see the module docstring)."""
    n = slim.n_nodes
    params = np.zeros(n, np.int64)
    param_bytes = np.zeros(n, np.int64)
    flops = np.zeros(n, np.int64)
    output_bytes = np.zeros(n, np.int64)
    unknown = np.zeros(n, bool)
    index, shapes, ops, defs = slim.index, slim.output_shapes, slim.ops, slim.node_defs
    empty: dict = {}
    weights: list[int] = []  # ops read as the weight (second input) of a WEIGHT_READERS op
    for i in range(n):
        op = ops[i]
        try:
            node_def = defs[i]
        except MalformedNodeDef:  # damage inside this node's attrs: its cost is unknown, the rest stands
            unknown[i] = True
            continue
        attr = node_def.attr if node_def is not None else empty
        outs = [_known(s) for s in (shapes[i] or ())]
        rule = rule_of(op)
        size = 1 if op in BOOL_OUTPUT_OPS else _dtype_bytes(attr) if attr else None
        if op in PARAMETER_OPS:
            shape = _attr_value(attr["shape"]) if "shape" in attr else (outs[0] if outs else None)
            shape = _known(shape)
            if shape is None or size is None:
                unknown[i] = True
            else:
                params[i] = prod(shape)
                param_bytes[i] = params[i] * size
            continue
        if rule is None:
            if not op and "keras_class" in attr:  # a Keras conceptual graph's layer: params only
                n_params = _keras_params(attr)
                if n_params is not None and size is not None:
                    params[i], param_bytes[i] = n_params, n_params * size
            unknown[i] = True
            continue
        ins, weight_src = [], []
        if node_def is not None:
            for ref in node_def.input:
                if ref.startswith("^"):
                    continue
                name, _, out = ref.partition(":")
                src = index.get(name)
                if src is not None and len(ins) == 1:
                    weight_src.append(src)
                ins.append(_known(slim.shape_of(src, int(out) if out.isdigit() else 0)) if src is not None else None)
        facts = OpFacts(op=op, outs=outs, ins=ins,
                        attr=lambda key, attr=attr: _attr_value(attr[key]) if key in attr else None)
        f = rule(facts)
        if op in NO_OUTPUT_OPS or (op == "IO Node" and ins):  # a graph output: its producer's tensor
            nbytes = 0
        elif shapes[i] is None or size is None or any(s is None for s in outs):
            nbytes = None
        else:
            nbytes = sum(prod(s) for s in outs) * size
        if f is None or nbytes is None:
            unknown[i] = True
            continue
        flops[i] = f
        output_bytes[i] = nbytes
        if op in WEIGHT_READERS and weight_src:
            weights.append(weight_src[0])
    for w in weights:  # a constant read as a matmul's or a convolution's weight: a parameter
        if ops[w] == "Const" and not unknown[w] and not params[w]:
            node_def = defs[w]  # read without damage above
            size = _dtype_bytes(node_def.attr) if node_def is not None else None
            if size is not None and node_def.attr["dtype"].type in _FLOAT_TYPES:
                param_bytes[w], output_bytes[w] = output_bytes[w], 0
                params[w] = param_bytes[w] // size
    costs = OpCosts(params, param_bytes, flops, output_bytes, unknown)
    holder = np.where(slim.owner >= 0, slim.owner, np.arange(n)) if n else np.zeros(0, np.int64)
    for name in OpCosts.FIELDS:
        col = getattr(costs, name).astype(np.int64)
        costs.owned[name] = _sum_into(holder, col, n)
    return costs


def _sum_into(holder: np.ndarray, col: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n, np.int64)
    np.add.at(out, holder, col)
    return out
