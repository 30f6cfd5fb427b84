"""A serialized ``torch.export`` ExportedProgram (its JSON) -> GraphDef, torch-free.

The JSON is what ``torch.export.save`` writes as ``models/<name>.json`` in a ``.pt2`` archive
and what ``tb_graph_plugin.torch.add_graph`` serializes in process (torch's
``torch/_export/serde/schema.py``: ``ExportedProgram.graph_module.graph`` holds ``nodes``
``{target, inputs: [{name, arg}], outputs, metadata}`` and ``tensor_values``;
``graph_module.signature`` says which placeholders are parameters, buffers, constants and user
inputs). The facts this follows are measured in TENSORBOARD_GRAPH_INTERNALS.md section 6.

Naming (the same for ``.onnx`` files, ``ingest/onnx_model.py``), built in ``torch_scopes``:

* every module call is a scope ``Class[attr]`` (the root module is ``Class``), nested as the
  calls were (``nn_module_stack``); a module's second call inside the same parent call is
  ``Class[attr@1]``; a container that is never called itself (``ModuleList``) is a plain
  ``attr`` scope, so ``layers/LlamaDecoderLayer[0]``, ``[1]``... are siblings;
* ops a module computes inline through one function call on one source line of its
  ``forward`` (``causal_mask = create_causal_mask(...)``) are a scope ``create_causal_mask()``
  when two or more ops share it (hierarchy: an inferred group of kind ``source``);
* an op is named by its aten op (``conv2d``, ``add_3``), op type ``aten::add``; the leaf is
  never a generated value name;
* parameters, buffers and lifted constants are ops ``torch::parameter`` / ``torch::buffer`` /
  ``torch::constant`` in the scope of their module's first call, named by attribute
  (``Linear[q_proj]/weight``), drawn beside their consumer; user inputs ``input/<arg>`` and
  outputs ``output/<field>`` are ``IO Node`` ops, as torch's ``SummaryWriter.add_graph`` writes.

A training step (``tb_graph_plugin.torch.add_graph(..., loss_fn=...)``, ``torch/training.py``)
is the same JSON with each node's ``metadata.custom`` holding ``tb_phase`` (``forward``, ``loss``,
``backward``, ``optimizer``), ``tb_forward`` (a backward op's forward op) and ``tb_param`` (an
optimizer op's parameter), and input specs of kind ``optimizer_state`` (``parameter_name``,
``state_name``), op type ``torch::optimizer_state``: ``loss/``, ``backward/`` + the forward scope,
``optimizer/`` + the parameter path (``torch_scopes`` step 4). What ``torch.compile`` made of a
call (``tb_graph_plugin.torch.add_compiled_graph``, ``torch/compiled.py``) is the same JSON with
``custom`` ``tb_compiled_graph`` (attr ``_compiled_graph``), ``tb_kernel`` (attr ``_kernel``) and,
for a break, ``tb_graph_break`` with ``reason`` and ``source``: op type ``graph_break``
(``_compile_attrs``).

Attrs: ``_output_shapes`` (-1 for symbolic sizes), ``T`` / ``dtype``, the op's scalar arguments
by name, ``_target`` (``aten.add.Tensor``), ``_module_class``, ``_module_path``, ``_source``
(``file:line in function`` of the innermost ``forward`` frame) and ``_source_line``.
``aten._assert_*`` checks (no outputs) and parameters or buffers nothing reads are left out. Higher-order ops (``torch.cond``,
``wrap_with_set_grad_enabled``) stay one op each; their subgraphs are not drawn.

Pre: ``program`` is the decoded JSON. Post: a GraphDef whose inputs all name nodes in it;
malformed programs raise ``InvalidArgumentError`` naming ``what``.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Optional

from tensorboard import errors
from tensorboard.compat.proto import graph_pb2, tensor_shape_pb2

from tb_graph_plugin.ingest import torch_scopes
from tb_graph_plugin.ingest.attr_values import set_attr

__all__ = ["exported_program_to_graph_def", "TorchOp", "PARAMETER_OP_TYPES"]

OPTIMIZER_STATE_OP = "torch::optimizer_state"
PARAMETER_OP_TYPES = frozenset({"torch::parameter", "torch::buffer", "torch::constant", OPTIMIZER_STATE_OP})
IO_OP = "IO Node"

# torch/_export/serde/schema.py ScalarType -> TensorFlow DataType (types.proto) and a name
_DTYPES = {
    1: (4, "uint8"), 2: (6, "int8"), 3: (5, "int16"), 4: (3, "int32"), 5: (9, "int64"),
    6: (19, "float16"), 7: (1, "float32"), 8: (2, "float64"), 10: (8, "complex64"),
    11: (18, "complex128"), 12: (10, "bool"), 13: (14, "bfloat16"), 28: (17, "uint16"),
    34: (22, "uint32"), 35: (23, "uint64"),
}
_DROPPED_PREFIXES = ("aten._assert_", "aten.sym_constrain_range")


@dataclasses.dataclass
class TorchOp:
    """One call_function node, torch-free: what the naming and the GraphDef need."""

    name: str  # the fx node name (unique in the program)
    namespace: str  # "aten", "higher_order", "python"...
    op: str  # "conv2d"
    target: str  # "aten.conv2d.default"
    refs: list  # names of tensors / symbols read, in argument order
    scalars: dict  # argument name -> scalar value (ints, floats, strings, lists)
    outputs: list  # output names in order (None where an output is absent)
    module_stack: list  # [(key, path, class qualname)], outermost first
    frame: Optional[torch_scopes.Frame]  # the innermost recorded ``forward`` frame
    phase: str = ""  # a training step's ``forward`` / ``loss`` / ``backward`` / ``optimizer``; "" otherwise
    forward: str = ""  # a backward op: the fx name of the forward op it differentiates
    param: str = ""  # an optimizer op: the parameter path it updates
    custom: dict = dataclasses.field(default_factory=dict)  # the node's ``custom`` metadata


def exported_program_to_graph_def(program: Any, what: str) -> graph_pb2.GraphDef:
    """GraphDef of a decoded ExportedProgram JSON (see the module docstring)."""
    try:
        return _convert(program)
    except errors.PublicError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as e:
        raise errors.InvalidArgumentError(
            f"{what} is not a torch.export program this reader understands "
            f"({type(e).__name__}: {str(e)[:200]})") from None


def _convert(program: dict) -> graph_pb2.GraphDef:
    gm = program["graph_module"]
    graph, signature = gm["graph"], gm.get("signature") or {}
    tensors = graph.get("tensor_values") or {}
    ops = [op for op in (_read_op(n) for n in graph["nodes"]) if op is not None]
    roles = _placeholder_roles(signature)
    names = torch_scopes.name_ops(ops, roles, _output_names(gm, signature))
    out = graph_pb2.GraphDef()
    producer: dict[str, str] = {}
    read = {r for op in ops for r in op.refs} | {ref for ref, _ in names.outputs}
    for placeholder, (role, target) in roles.items():
        if role != IO_OP and placeholder not in read:
            continue  # a buffer nothing reads (BatchNorm's num_batches_tracked in eval mode)
        node = out.node.add(name=names.placeholders[placeholder], op=role)
        _tensor_attrs(node, tensors.get(placeholder), "dtype")
        if target:
            node.attr["_parameter" if role != IO_OP else "_input"].s = target.encode()
        producer[placeholder] = node.name
    for op in ops:
        for k, o in enumerate(op.outputs):
            if o is not None:
                producer.setdefault(o, names.ops[op.name] + (f":{k}" if k else ""))
    for op in ops:
        node = out.node.add(name=names.ops[op.name], op=f"{op.namespace}::{op.op}")
        node.input.extend(producer[r] for r in op.refs if r in producer)
        _op_attrs(node, op, tensors)
        _compile_attrs(node, op)
    for ref, out_name in names.outputs:
        node = out.node.add(name=out_name, op=IO_OP)
        if ref in producer:
            node.input.append(producer[ref])
            _tensor_attrs(node, tensors.get(ref), "dtype")
    return out


def _compile_attrs(node, op: TorchOp) -> None:
    """``tb_graph_plugin.torch.add_compiled_graph``'s facts: the Dynamo graph index of every op
    (``_compiled_graph``), the Inductor kernel it went into (``_kernel``), and a graph break as
    op type ``graph_break`` with its ``reason`` and ``source``."""
    custom = op.custom
    if isinstance(custom.get("tb_compiled_graph"), int):
        node.attr["_compiled_graph"].i = custom["tb_compiled_graph"]
    if custom.get("tb_kernel"):
        node.attr["_kernel"].s = str(custom["tb_kernel"]).encode()
    if custom.get("tb_graph_break"):
        node.op = "graph_break"
        node.attr["reason"].s = str(custom.get("reason") or "").encode()
        node.attr["source"].s = str(custom.get("source") or "").encode()


def _read_op(node: dict) -> Optional[TorchOp]:
    target = node["target"]
    if not isinstance(target, str):
        raise TypeError("node target is not a string")
    short = target[len("torch.ops."):] if target.startswith("torch.ops.") else target
    if short.startswith(_DROPPED_PREFIXES):
        return None
    parts = short.split(".")
    if target.startswith("torch.ops.") and len(parts) >= 2:
        namespace, op = parts[0], parts[1]
    else:  # operator.getitem, _operator.mul, builtins: symbolic-shape arithmetic
        namespace, op = "python", parts[-1]
    refs, scalars = [], {}
    for named in node.get("inputs") or []:
        arg = named["arg"]
        before = len(refs)
        _collect_refs(arg, refs)
        if len(refs) == before:
            value = _scalar(arg)
            if value is not None and named.get("name"):
                scalars[str(named["name"])] = value
    outputs: list = []
    for arg in node.get("outputs") or []:
        _collect_outputs(arg, outputs)
    meta = node.get("metadata") or {}
    custom = _custom(meta)
    return TorchOp(name=str(node.get("name") or (outputs[0] if outputs and outputs[0] else target)),
                   namespace=namespace, op=op, target=short, refs=refs, scalars=scalars,
                   outputs=outputs, module_stack=parse_module_stack(meta.get("nn_module_stack") or ""),
                   frame=torch_scopes.last_frame(str(meta.get("stack_trace") or "")),
                   phase=str(custom.get("tb_phase") or ""), forward=str(custom.get("tb_forward") or ""),
                   param=str(custom.get("tb_param") or ""), custom=custom)


def _custom(meta: dict) -> dict:
    """A node's ``custom`` metadata (a JSON object; ``tb_graph_plugin.torch.training`` writes
    ``tb_phase``, ``tb_forward`` and ``tb_param`` there), else empty."""
    try:
        custom = json.loads(meta.get("custom") or "{}")
    except (TypeError, ValueError):
        return {}
    return custom if isinstance(custom, dict) else {}


def parse_module_stack(text: str) -> list[tuple[str, str, str]]:
    """``"key,path,class;..."`` (torch's serialized ``nn_module_stack``) -> entries.

    >>> parse_module_stack("L__self__,,m.M;L__self__fc@1,fc,torch.nn.Linear")
    [('L__self__', '', 'm.M'), ('L__self__fc@1', 'fc', 'torch.nn.Linear')]
    """
    entries = []
    for item in text.split(";") if text else []:
        parts = item.split(",")
        if len(parts) < 3:
            continue
        entries.append((",".join(parts[:-2]), parts[-2], parts[-1]))
    return entries


def _collect_refs(arg: Any, refs: list) -> None:
    """Names a (possibly nested) serialized Argument reads: tensors and symbols."""
    if isinstance(arg, dict):
        for key, value in arg.items():
            if key == "as_tensor" and isinstance(value, dict):
                refs.append(str(value["name"]))
            elif key == "as_tensors" and isinstance(value, list):
                refs.extend(str(v["name"]) for v in value if isinstance(v, dict) and "name" in v)
            elif key == "as_name" and isinstance(value, str):
                refs.append(value)
            elif key != "as_graph":
                _collect_refs(value, refs)
    elif isinstance(arg, list):
        for value in arg:
            _collect_refs(value, refs)


def _collect_outputs(arg: Any, outputs: list) -> None:
    if not isinstance(arg, dict) or not arg:
        outputs.append(None)
        return
    key, value = next(iter(arg.items()))
    if key == "as_tensor":
        outputs.append(str(value["name"]))
    elif key == "as_tensors":
        outputs.extend(str(v["name"]) for v in value)
    elif key == "as_optional_tensors":
        for v in value:
            outputs.append(str(v["as_tensor"]["name"]) if isinstance(v, dict) and "as_tensor" in v else None)
    elif isinstance(value, dict) and isinstance(value.get("as_name"), str):
        outputs.append(value["as_name"])
    else:
        outputs.append(None)


def _scalar(arg: Any):
    """A plain argument value (int, float, bool, string, dtype, lists of them), else None."""
    if not isinstance(arg, dict) or len(arg) != 1:
        return None
    key, value = next(iter(arg.items()))
    if key in ("as_int", "as_float", "as_bool", "as_string", "as_ints", "as_floats", "as_bools", "as_strings"):
        return value
    if key == "as_scalar_type":
        return _DTYPES.get(value, (0, f"scalar_type_{value}"))[1]
    if key == "as_device" and isinstance(value, dict):
        return str(value.get("type", ""))
    if key == "as_sym_int" and isinstance(value, dict) and "as_int" in value:
        return value["as_int"]
    return None


def _placeholder_roles(signature: dict) -> dict[str, tuple[str, str]]:
    """placeholder name -> (op type, parameter path or input name), in signature order."""
    roles: dict[str, tuple[str, str]] = {}
    for spec in signature.get("input_specs") or []:
        kind, body = next(iter(spec.items()))
        if kind == "parameter":
            roles[body["arg"]["name"]] = ("torch::parameter", str(body["parameter_name"]))
        elif kind == "buffer":
            roles[body["arg"]["name"]] = ("torch::buffer", str(body["buffer_name"]))
        elif kind == "tensor_constant":
            roles[body["arg"]["name"]] = ("torch::constant", str(body["tensor_constant_name"]))
        elif kind == "optimizer_state":  # tb_graph_plugin.torch.training's extension
            roles[body["arg"]["name"]] = (OPTIMIZER_STATE_OP, f"{body['parameter_name']}:{body['state_name']}")
        elif kind == "user_input":
            refs: list = []
            _collect_refs(body["arg"], refs)
            for name in refs:
                roles[name] = (IO_OP, name)
    return roles


def _output_names(gm: dict, signature: dict) -> list[tuple[str, str]]:
    """(tensor name, output field path) of every user output, the fields read from out_spec."""
    refs: list = []
    for spec in signature.get("output_specs") or []:
        kind, body = next(iter(spec.items()))
        if kind in ("user_output", "loss_output"):
            arg = body.get("arg") if isinstance(body, dict) else None
            found: list = []
            _collect_refs(arg, found)
            refs.append(found[0] if found else None)
    fields = _out_spec_paths(gm)
    if fields is None or len(fields) != len(refs):
        fields = [str(i) for i in range(len(refs))] if len(refs) > 1 else ["output"]
    return [(r, f) for r, f in zip(refs, fields) if r is not None]


def _out_spec_paths(gm: dict) -> Optional[list[str]]:
    """Leaf paths of the root call's ``out_spec`` (``logits``, ``0``, ``b.1``), or None."""
    for entry in gm.get("module_call_graph") or []:
        if entry.get("fqn") == "" and entry.get("signature"):
            try:
                spec = json.loads(entry["signature"]["out_spec"])[1]
            except (ValueError, TypeError, KeyError, IndexError):
                return None
            paths: list[str] = []
            _walk_spec(spec, "", paths)
            return [p or "output" for p in paths]
    return None


def _walk_spec(spec: dict, prefix: str, paths: list) -> None:
    children = spec.get("children_spec") or []
    if not children:
        paths.append(prefix)
        return
    keys = None
    try:
        context = json.loads(spec.get("context") or "null")
        if isinstance(context, list) and len(context) == len(children):
            keys = [str(k) for k in context]
    except (ValueError, TypeError):
        pass
    for i, child in enumerate(children):
        key = keys[i] if keys else str(i)
        _walk_spec(child, f"{prefix}.{key}" if prefix else key, paths)


def _shape(meta: Optional[dict]) -> Optional[tensor_shape_pb2.TensorShapeProto]:
    if not isinstance(meta, dict) or "sizes" not in meta:
        return None
    shape = tensor_shape_pb2.TensorShapeProto()
    for size in meta["sizes"]:
        value = size.get("as_int") if isinstance(size, dict) else None
        shape.dim.add(size=value if isinstance(value, int) else -1)
    return shape


def _tensor_attrs(node, meta: Optional[dict], dtype_attr: str) -> None:
    shape = _shape(meta)
    if shape is not None:
        node.attr["_output_shapes"].list.shape.append(shape)
    dtype = _DTYPES.get(meta.get("dtype")) if isinstance(meta, dict) else None
    if dtype:
        node.attr[dtype_attr].type = dtype[0]


def _op_attrs(node, op: TorchOp, tensors: dict) -> None:
    shapes = [_shape(tensors.get(o)) if o else None for o in op.outputs]
    if any(s is not None for s in shapes):
        node.attr["_output_shapes"].list.shape.extend(s or tensor_shape_pb2.TensorShapeProto(unknown_rank=True) for s in shapes)
    first = next((o for o in op.outputs if o), None)
    dtype = _DTYPES.get((tensors.get(first) or {}).get("dtype")) if first else None
    if dtype:
        node.attr["T"].type = dtype[0]
    for key, value in op.scalars.items():
        if key not in node.attr and not key.startswith("_"):
            set_attr(node.attr[key], value, lists=True)
    node.attr["_target"].s = op.target.encode()
    if op.module_stack:
        _, path, cls = op.module_stack[-1]
        node.attr["_module_class"].s = cls.encode()
        node.attr["_module_path"].s = path.encode()
    frame = op.frame
    if frame:
        node.attr["_source"].s = f"{frame.short_file}:{frame.line} in {frame.function}".encode()
        if frame.code:
            node.attr["_source_line"].s = frame.code.encode()
