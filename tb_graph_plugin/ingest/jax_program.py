"""A JAX program (ops read from a jaxpr or from StableHLO text) -> GraphDef, without jax.

Two readers end here: ``tb_graph_plugin.jax`` reads a traced jaxpr (``jax.make_jaxpr``) in the
user's process; ``ingest/stablehlo.py`` reads the text ``jax.jit(f).lower(...).as_text(
debug_info=True)`` writes, on the server, which needs no jax. Both give a ``JaxProgram``: its
inputs (pytree paths, parameters apart), its ops in program order with their scope segments
(name stacks and the sub-programs they sit in), and its outputs.

Naming (``ingest/jax_scopes.py``), as for PyTorch graphs (``ingest/exported_program.py``):

* ops under their module path (Flax linen ``Model/block_0/Dense_0``; Flax NNX calls recorded
  while tracing, ``Model/blocks/Block[0]/Linear[lin]``; ``jax.named_scope`` levels kept); the
  body of ``scan`` is a scope ``scan ×N`` (drawn once), ``while`` ``while/cond`` and
  ``while/body``, ``cond`` ``cond/branch_K``, nested ``jit`` ``jit(name)``, ``jax.checkpoint`` (remat) ``checkpoint``,
  ``custom_jvp(name)`` / ``custom_vjp(name)``; the gradient's transpose under ``backward/``,
  an optimizer's update under ``optimizer/<parameter path>``;
* an op is named after its primitive (``dot_general``, ``add_3``), op type ``jax::<primitive>``
  (``stablehlo::<op>`` from StableHLO text), labelled by the primitive (``graph/labels.py``);
* parameters are ops ``jax::parameter`` named by pytree path (``params/block_0/Dense_0/kernel``),
  drawn beside their first consumer; other inputs ``input/<arg>/<path>`` and outputs
  ``output/<path>`` are ``IO Node`` ops, as PyTorch's.

Attrs: ``_output_shapes`` (one per output, -1 for an unknown size), ``T`` (ops) / ``dtype``
(inputs), the primitive's scalar params by name (``dimension_numbers``, ``length``), ``_source``
(``file:line in function`` of the user frame) and ``_source_line``, ``_parameter`` (an input's
pytree path), ``_module`` on a parameter (the scope of the forward ops that read it).

Pre: a ``JaxProgram`` whose op inputs are program inputs or earlier ops' outputs (others are
dropped: literals). Post: a GraphDef whose inputs all name nodes in it.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Optional

from tensorboard.compat.proto import graph_pb2, tensor_shape_pb2

from tb_graph_plugin.ingest import jax_scopes
from tb_graph_plugin.ingest.attr_values import set_attr

__all__ = ["JaxInput", "JaxOp", "JaxProgram", "program_to_graph_def", "PARAMETER_OP", "DTYPES"]

PARAMETER_OP = "jax::parameter"
_SUB_PROGRAM = re.compile(r"^(?:jit|custom_jvp|custom_vjp)\(.*\)$|^(?:remat|call|checkpoint)$")
IO_OP = "IO Node"

# numpy / StableHLO element type names -> TensorFlow DataType (types.proto)
DTYPES = {
    "float32": 1, "f32": 1, "float64": 2, "f64": 2, "int32": 3, "i32": 3, "si32": 3, "uint8": 4, "ui8": 4,
    "int16": 5, "i16": 5, "int8": 6, "i8": 6, "complex64": 8, "int64": 9, "i64": 9, "bool": 10, "i1": 10,
    "bfloat16": 14, "bf16": 14, "uint16": 17, "ui16": 17, "complex128": 18, "float16": 19, "f16": 19,
    "uint32": 22, "ui32": 22, "uint64": 23, "ui64": 23,
}


@dataclasses.dataclass
class JaxInput:
    path: tuple  # pytree path: ("params", "block_0", "Dense_0", "kernel"), ("x",)
    value: str  # the value id the ops read
    role: str = "input"  # "param" or "input"
    shape: Optional[tuple] = None  # dims (None: unknown rank; -1: unknown size)
    dtype: Optional[str] = None


@dataclasses.dataclass
class JaxOp:
    op: str  # the primitive: "dot_general"
    scope: list  # [(kind, text)]: kind "stack" (a name stack) or "group" (a sub-program)
    inputs: list  # value ids read, in order
    outputs: list  # value ids written, in order
    shapes: list = dataclasses.field(default_factory=list)  # per output (dims or None, dtype or None)
    params: dict = dataclasses.field(default_factory=dict)  # scalar params by name
    source: Optional[str] = None  # "model.py:12 in __call__"
    code: Optional[str] = None  # the source line's text


@dataclasses.dataclass
class JaxProgram:
    inputs: list  # [JaxInput]
    ops: list  # [JaxOp]
    outputs: list  # [(value id, pytree path tuple)]
    namespace: str = "jax"  # op type namespace: "jax" (a jaxpr) or "stablehlo"


def program_to_graph_def(program: JaxProgram) -> graph_pb2.GraphDef:
    """GraphDef of a ``JaxProgram`` (see the module docstring)."""
    in_names, op_names, out_names = jax_scopes.name_program(program)
    out = graph_pb2.GraphDef()
    producer: dict[str, str] = {}
    read = {v for op in program.ops for v in op.inputs} | {v for v, _ in program.outputs}
    for inp, name in zip(program.inputs, in_names):
        if inp.role == "param" and inp.value not in read:
            continue
        node = out.node.add(name=name, op=PARAMETER_OP if inp.role == "param" else IO_OP)
        _shape_attrs(node, [(inp.shape, inp.dtype)], "dtype")
        node.attr["_parameter" if inp.role == "param" else "_input"].s = "/".join(map(str, inp.path)).encode()
        producer[inp.value] = name
    for op, name in zip(program.ops, op_names):
        for k, v in enumerate(op.outputs):
            producer.setdefault(v, name + (f":{k}" if k else ""))
    for op, name in zip(program.ops, op_names):
        node = out.node.add(name=name, op=f"{program.namespace}::{op.op}")
        seen = set()
        for v in op.inputs:
            src = producer.get(v)
            if src is not None and src != name and not src.startswith(name + ":") and (src, v) not in seen:
                seen.add((src, v))
                node.input.append(src)
        _shape_attrs(node, op.shapes, "T")
        for key, value in op.params.items():
            if key not in node.attr and not key.startswith("_"):
                set_attr(node.attr[key], value, lists=False)
        if op.source:
            node.attr["_source"].s = op.source.encode()
        if op.code:
            node.attr["_source_line"].s = op.code[:512].encode()
    for (v, _), name in zip(program.outputs, out_names):
        node = out.node.add(name=name, op=IO_OP)
        if v in producer:
            node.input.append(producer[v])
    _parameter_modules(out)
    return out


def _parameter_modules(graph: graph_pb2.GraphDef) -> None:
    """``_module`` on each parameter: the innermost scope holding every forward op that reads it
    (not ``backward/``, ``optimizer/``), the module group per-parameter data is drawn on
    (``tb_graph_plugin.jax.node_data``)."""
    params = {n.name: n for n in graph.node if n.op == PARAMETER_OP}
    readers: dict[str, list] = {}
    for n in graph.node:
        if n.name.startswith((jax_scopes.BACKWARD + "/", jax_scopes.OPTIMIZER + "/")) or n.op == IO_OP:
            continue
        for i in n.input:
            if i in params:
                readers.setdefault(i, []).append(n.name.split("/")[:-1])
    for name, scopes in readers.items():
        common = scopes[0]
        for s in scopes[1:]:
            k = 0
            while k < min(len(common), len(s)) and common[k] == s[k]:
                k += 1
            common = common[:k]
        while common and _SUB_PROGRAM.match(common[-1]):
            common = common[:-1]  # the module, not a function it calls (``Embed_0/jit(_take)``)
        if common:
            params[name].attr["_module"].s = "/".join(common).encode()


def _shape_proto(dims) -> tensor_shape_pb2.TensorShapeProto:
    if dims is None:
        return tensor_shape_pb2.TensorShapeProto(unknown_rank=True)
    shape = tensor_shape_pb2.TensorShapeProto()
    for d in dims:
        shape.dim.add(size=d if isinstance(d, int) else -1)
    return shape


def _shape_attrs(node, shapes: list, dtype_attr: str) -> None:
    if shapes and any(dims is not None for dims, _ in shapes):
        node.attr["_output_shapes"].list.shape.extend(_shape_proto(dims) for dims, _ in shapes)
    dtype = next((d for _, d in shapes if d), None)
    if dtype in DTYPES:
        node.attr[dtype_attr].type = DTYPES[dtype]
    elif dtype:
        node.attr["_dtype"].s = str(dtype).encode()
