"""A traced training step's fx graph -> the program JSON the export ingest reads (``training.py``, steps 3-4).

``annotate`` splits the graph into its phases at the ``record_function`` markers ``training``
put around them and writes, on each op, ``meta["custom"]``: ``tb_phase`` (``forward``, ``loss``,
``backward``, ``optimizer``), ``tb_forward`` (a backward op's forward op, by autograd's
sequence number, a summed gradient by the backward op that reads it) and ``tb_param`` (an
optimizer op's parameter, by dataflow); it removes the markers and the pass-through ops.
``serialize`` writes the graph with torch's ``GraphModuleSerializer`` and the signature
(parameters, buffers, constants, user inputs, and ``optimizer_state`` inputs: the extension
``ingest/exported_program.py`` reads), lifting the constants the trace made.

Private torch APIs: ``GraphModuleSerializer``, ``torch.fx.Node._rename``.
"""

from __future__ import annotations

import json

import torch

__all__ = ["annotate", "serialize", "MARK", "WRAPPED"]

WRAPPED = "model"  # the attribute of the loss wrapper holding the user's model
MARK = "tb_graph_plugin."  # the prefix of the phase markers (``record_function`` labels)
_PASS_THROUGH = {"aten.detach.default", "aten.alias.default", "aten.lift_fresh_copy.default"}


def _phases(gm) -> dict:
    """fx node -> phase (``forward``, ``backward``, ``optimizer``), from the ``record_function``
    markers ``step`` put around each phase."""
    phase_of = {}
    current = None
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        if "record_function" in str(node.target):
            label = str(node.args[0]) if "enter" in str(node.target) and node.args else ""
            if label.startswith(MARK):
                current = label[len(MARK):]
            continue
        phase_of[node] = current
    return phase_of


def _remove_markers(gm) -> None:
    """The profiler's ``record_function`` enter/exit ops (ours and the optimizer's) are not drawn."""
    nodes = [n for n in gm.graph.nodes if n.op == "call_function" and "record_function" in str(n.target)]
    for node in reversed(nodes):  # an exit reads its enter
        gm.graph.erase_node(node)


def _unwrapped_stack(stack: dict) -> dict:
    """``nn_module_stack`` without the ``_WithLoss`` level (its ``model.`` prefix removed)."""
    out = {}
    for key, (path, cls) in stack.items():
        if path == "":
            continue
        out[key] = ("" if path == WRAPPED else path[len(WRAPPED) + 1:] if path.startswith(WRAPPED + ".") else path, cls)
    return out


def annotate(gm, specs, grad_paths: list, state_keys: list) -> None:
    """Sets ``meta["custom"]`` on every op (module docstring, step 3); removes the markers and
    the pass-through ops (``detach``, ``alias``: their readers read their input)."""
    phase_of = _phases(gm)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    n_flat = len(specs)
    param_of_input: dict = {}
    path_by_index = {}
    for i, s in enumerate(specs):
        if s.kind.name == "PARAMETER" and s.target.startswith(WRAPPED + "."):
            path_by_index[i] = s.target[len(WRAPPED) + 1:]
    for i, node in enumerate(placeholders[:n_flat]):
        if i in path_by_index:
            param_of_input[node] = path_by_index[i]
    for (path, _key), node in zip(state_keys, placeholders[n_flat:]):
        param_of_input[node] = path
    # forward ops: the wrapper's own level removed; the loss is the wrapper's own ops
    first_by_seq: dict = {}
    for node in gm.graph.nodes:
        if phase_of.get(node) != "forward":
            continue
        stack = node.meta.get("nn_module_stack") or {}
        inner = _unwrapped_stack(stack)
        phase = "forward" if inner else "loss"
        node.meta["nn_module_stack"] = inner
        node.meta["custom"] = {"tb_phase": phase}
        if "seq_nr" in node.meta:
            first_by_seq.setdefault(node.meta["seq_nr"], node)
    output = next(n for n in gm.graph.nodes if n.op == "output")
    returned = output.args[0]
    grads_out = {g: path for g, path in zip(returned[1:1 + len(grad_paths)], grad_paths) if isinstance(g, torch.fx.Node)}
    for node in gm.graph.nodes:
        if phase_of.get(node) != "backward":
            continue
        fwd = first_by_seq.get(node.meta.get("seq_nr")) if node.meta.get("autograd_backward") else None
        custom = {"tb_phase": "backward"}
        if fwd is None and node.meta.get("seq_nr") is not None and not node.meta.get("autograd_backward"):
            fwd = first_by_seq.get(node.meta.get("seq_nr"))  # the seed gradient (ones_like of the loss)
        if fwd is not None:
            custom["tb_forward"] = fwd.name
            if fwd.meta.get("stack_trace"):
                node.meta["stack_trace"] = fwd.meta["stack_trace"]
        node.meta["nn_module_stack"] = {}
        node.meta["custom"] = custom
    for node in reversed(list(gm.graph.nodes)):
        # a gradient summed over a tensor's uses: in the scope of the backward op that reads the
        # sum (the tensor's producer's backward), as TF's ``AddN`` sits beside the op's gradient
        if phase_of.get(node) == "backward" and node.meta.get("is_gradient_acc"):
            reader = next((u for u in node.users if phase_of.get(u) == "backward"
                           and "tb_forward" in u.meta.get("custom", {})), None)
            if reader is not None:
                node.meta["custom"]["tb_forward"] = reader.meta["custom"]["tb_forward"]
                node.meta["stack_trace"] = reader.meta.get("stack_trace")
    # optimizer ops: the one parameter their inputs come from
    origin: dict = {}
    for node in gm.graph.nodes:
        if phase_of.get(node) != "optimizer":
            continue
        found = set()
        for inp in node.all_input_nodes:
            if inp in param_of_input:
                found.add(param_of_input[inp])
            elif phase_of.get(inp) == "optimizer":
                found |= origin.get(inp, set())
            elif phase_of.get(inp) == "backward" and inp in grads_out:
                found.add(grads_out[inp])
        origin[node] = found
    for node in reversed(list(gm.graph.nodes)):  # a constant takes the parameter of its users
        if phase_of.get(node) == "optimizer" and not origin.get(node):
            users = set().union(*[origin.get(u, set()) for u in node.users]) if node.users else set()
            if len(users) == 1:
                origin[node] = users
    for node in gm.graph.nodes:
        if phase_of.get(node) == "optimizer":
            custom = {"tb_phase": "optimizer"}
            if len(origin.get(node, ())) == 1:
                custom["tb_param"] = next(iter(origin[node]))
            node.meta["nn_module_stack"] = {}
            node.meta.pop("stack_trace", None)
            node.meta["custom"] = custom
    _remove_markers(gm)
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and str(node.target).startswith("aten.") and \
                _short(node.target) in _PASS_THROUGH and node.args and isinstance(node.args[0], torch.fx.Node):
            node.replace_all_uses_with(node.args[0])
            gm.graph.erase_node(node)


def _short(target) -> str:
    return str(target) if str(target).startswith("aten.") else f"aten.{target}"


def serialize(gm, specs, state_keys: list, program) -> dict:
    from torch._export.serde.serialize import GraphModuleSerializer, _to_json_bytes

    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    input_specs = []
    for node, spec in zip(placeholders, specs):
        name = spec.arg.name if hasattr(spec.arg, "name") else node.name
        node._rename(name)
        target = spec.target or ""
        if target.startswith(WRAPPED + "."):
            target = target[len(WRAPPED) + 1:]
        arg = {"name": node.name}
        kind = spec.kind.name
        if kind == "PARAMETER":
            input_specs.append({"parameter": {"arg": arg, "parameter_name": target}})
        elif kind == "BUFFER":
            input_specs.append({"buffer": {"arg": arg, "buffer_name": target, "persistent": bool(spec.persistent)}})
        elif kind == "CONSTANT_TENSOR":
            input_specs.append({"tensor_constant": {"arg": arg, "tensor_constant_name": target}})
        else:
            input_specs.append({"user_input": {"arg": {"as_tensor": arg}}})
    for node, (path, key) in zip(placeholders[len(specs):], state_keys):
        node._rename("state_" + (path + "_" + str(key)).replace(".", "_"))
        input_specs.append({"optimizer_state": {"arg": {"name": node.name}, "parameter_name": path,
                                                "state_name": str(key)}})
    _lift_constants(gm, input_specs)
    gm.recompile()
    graph = json.loads(_to_json_bytes(GraphModuleSerializer(None, []).serialize_graph(gm)))
    output = next(n for n in gm.graph.nodes if n.op == "output")
    loss = output.args[0][0]
    output_specs = [{"user_output": {"arg": {"as_tensor": {"name": loss.name}}}}]
    out_spec = [1, {"type": "builtins.dict", "context": json.dumps(["loss"]),
                    "children_spec": [{"type": None, "context": None, "children_spec": []}]}]
    return {"graph_module": {
        "graph": graph,
        "signature": {"input_specs": input_specs, "output_specs": output_specs},
        "module_call_graph": [{"fqn": "", "signature": {"out_spec": json.dumps(out_spec)}}],
    }}


def _lift_constants(gm, input_specs: list) -> None:
    """Tensors the trace made as constants (``get_attr``: a fresh optimizer's ``step =
    torch.tensor(0.0)``) become constant inputs, as torch.export lifts them; the serializer
    takes no ``get_attr``."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for node in [n for n in gm.graph.nodes if n.op == "get_attr"]:
        value = getattr(gm, str(node.target), None)
        if not isinstance(value, torch.Tensor):
            continue
        with gm.graph.inserting_after(placeholders[-1]):
            lifted = gm.graph.placeholder("c_" + str(node.target).lstrip("_"))
        lifted.meta = dict(node.meta)
        node.replace_all_uses_with(lifted)
        gm.graph.erase_node(node)
        placeholders.append(lifted)
        input_specs.append({"tensor_constant": {"arg": {"name": lifted.name}, "tensor_constant_name": str(node.target)}})
