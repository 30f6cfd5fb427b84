"""Capture one training step (forward, loss, backward, optimizer update) as one program JSON.

Issue 41. The steps, in order:

1. ``torch.export.export(strict=False)`` of the model with the loss on top (``_WithLoss``): the
   forward and loss ops with their ``nn_module_stack`` and ``stack_trace`` (the targets the loss
   closes over are lifted constants);
2. ``make_fx(tracing_mode="fake")`` of a function that runs that graph in an ``fx.Interpreter``
   under ``fx.traceback.preserve_node_meta()`` (each traced op keeps its forward node's meta and
   autograd sequence number), then ``torch.autograd.grad`` of the loss (the backward ops, each
   with the sequence number of the forward op it differentiates: AOT autograd's own hooks,
   ``setup_stacktrace_preservation_hooks``), then the optimizer's own ``step()`` on a shadow
   optimizer of the same class and hyper-parameters over the traced parameters, grads and state
   (``foreach=False``; ``torch.compiler`` flagged as compiling so ``step`` stays a tensor, as
   under ``torch.compile``). Fake tensors: nothing real is read or written, so the model's
   parameters, gradients and buffers and the optimizer's state are left as they were;
3. the phases split at ``record_function`` markers; each op gets ``meta["custom"]``:
   ``tb_phase`` (``forward`` / ``loss`` / ``backward`` / ``optimizer``), for a backward op the
   forward op it comes from (``tb_forward``), for an optimizer op the parameter it updates
   (``tb_param``: the one parameter its inputs come from, by dataflow);
4. the graph serialized with torch's own ``GraphModuleSerializer`` (the export JSON schema) and
   a signature saying which placeholder is a parameter, buffer, constant, user input or
   optimizer state (``optimizer_state``: an extension of the schema read by
   ``ingest/exported_program.py``, which names every op).

Private torch APIs used (all stable across 2.4-2.13, each imported in one place here):
``torch._functorch._aot_autograd.logging_utils.setup_stacktrace_preservation_hooks``,
``torch.fx.traceback.preserve_node_meta`` (public module, not in the documented API),
``torch.compiler._is_compiling_flag``, ``torch._export.serde.serialize.GraphModuleSerializer``,
``torch.fx.Node._rename``.

Pre: ``loss_fn(model(*args, **kwargs))`` returns a scalar tensor; ``optimizer`` is a
``torch.optim.Optimizer`` over parameters of ``model`` (or None). Post: the program JSON
(``{"graph_module": ...}``), or ``CaptureError`` naming the step that failed.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import warnings
from typing import Any, Optional

import torch

from tb_graph_plugin.torch.capture import CaptureError, _bind_positional, _use_cache_off

__all__ = ["training_step_json"]

_WRAPPED = "model"
_MARK = "tb_graph_plugin."
_PASS_THROUGH = {"aten.detach.default", "aten.alias.default", "aten.lift_fresh_copy.default"}


class _WithLoss(torch.nn.Module):
    """``loss_fn(model(*args, **kwargs))`` as one module (its own ops are the loss's)."""

    def __init__(self, model, loss_fn, kwargs: dict):
        super().__init__()
        self.model = model
        self._loss_fn = loss_fn
        self._kwargs = kwargs

    def forward(self, *args):
        loss = self._loss_fn(self.model(*args, **self._kwargs))
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            raise TypeError(f"loss_fn must return a scalar tensor, got {type(loss).__name__}"
                            + (f" of shape {tuple(loss.shape)}" if isinstance(loss, torch.Tensor) else ""))
        return (loss,)


def _with_loss(model, loss_fn, kwargs: dict, names: list) -> _WithLoss:
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]

    class WithLoss(_WithLoss):
        def forward(self, *args):
            return _WithLoss.forward(self, *args)

    WithLoss.forward.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] + params)
    return WithLoss(model, loss_fn, kwargs)


@contextlib.contextmanager
def _compiling():
    """``torch.compiler.is_compiling()`` true: the optimizer keeps ``step`` a tensor (no ``.item()``)."""
    old = torch.compiler._is_compiling_flag
    torch.compiler._is_compiling_flag = True
    try:
        yield
    finally:
        torch.compiler._is_compiling_flag = old


def _export(model, args, kwargs, loss_fn):
    pos, kw, names = _bind_positional(model, args, kwargs)
    wrapper = _with_loss(model, loss_fn, kw, names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.export.export(wrapper, pos, {}, strict=False), pos


def _state_inputs(model, optimizer) -> tuple[list, list, list]:
    """(parameter paths that take a gradient, [(path, state key)], state tensors) in parameter order."""
    if optimizer is None:
        return [], [], []
    path_of = {id(p): n for n, p in model.named_parameters()}
    paths, keys, tensors = [], [], []
    for group in optimizer.param_groups:
        for p in group["params"]:
            if id(p) not in path_of:
                raise CaptureError("tb_graph_plugin.torch.add_graph: the optimizer holds a parameter that "
                                   "is not the model's (pass the optimizer built on model.parameters())")
            paths.append(path_of[id(p)])
            for k, v in optimizer.state.get(p, {}).items():
                if isinstance(v, torch.Tensor):
                    keys.append((path_of[id(p)], k))
                    tensors.append(v)
    return paths, keys, tensors


def _trace(program, user_inputs: tuple, optimizer, opt_paths: list, state_keys: list, state_tensors: list,
           trainable: set):
    """(the fx graph of the whole step (module docstring, step 2), the input specs, the paths of
    the parameters that take a gradient: the optimizer's, else the model's, that require one)."""
    from torch.fx.experimental.proxy_tensor import make_fx
    import torch.fx.traceback as fx_traceback
    from torch._functorch._aot_autograd.logging_utils import setup_stacktrace_preservation_hooks

    sig = program.graph_signature
    specs = sig.input_specs
    state, consts = program.state_dict, program.constants
    flat: list = []
    user = iter(user_inputs)
    for s in specs:
        kind = s.kind.name
        if kind == "PARAMETER":
            flat.append(state[s.target])
        elif kind == "BUFFER":
            flat.append(state[s.target] if s.target in state else consts[s.target])
        elif kind == "CONSTANT_TENSOR":
            flat.append(consts[s.target])
        elif kind == "USER_INPUT":
            flat.append(next(user))
        else:
            raise CaptureError(f"tb_graph_plugin.torch.add_graph: an input of kind {kind} cannot be traced "
                               "into a training step")
    param_index = {s.target[len(_WRAPPED) + 1:]: i for i, s in enumerate(specs)
                   if s.kind.name == "PARAMETER" and s.target.startswith(_WRAPPED + ".")}
    loss_index = [i for i, s in enumerate(sig.output_specs) if s.kind.name in ("USER_OUTPUT", "LOSS_OUTPUT")][0]
    # the parameters that take a gradient: the optimizer's, else the model's trainable ones
    grad_paths = [p for p in (opt_paths or list(param_index)) if p in param_index and p in trainable]
    gm = program.graph_module
    group_options = [{k: v for k, v in g.items() if k != "params"} for g in optimizer.param_groups] if optimizer else []

    def step(flat_inputs, states):
        flat_inputs = list(flat_inputs)
        params = [flat_inputs[param_index[p]] for p in grad_paths]
        for p in params:
            p.requires_grad_(True)
        with torch.autograd.profiler.record_function(_MARK + "forward"), fx_traceback.preserve_node_meta():
            outs = torch.fx.Interpreter(gm).run(*flat_inputs)
        loss = outs[loss_index]
        with torch.autograd.profiler.record_function(_MARK + "backward"):
            setup_stacktrace_preservation_hooks([loss.grad_fn])
            with fx_traceback.preserve_node_meta():
                grads = torch.autograd.grad(loss, params, allow_unused=True)
        if optimizer is None:
            return [loss] + list(grads)
        with torch.autograd.profiler.record_function(_MARK + "optimizer"), torch.no_grad():
            by_path = {path: flat_inputs[param_index[path]] for path in opt_paths}  # frozen ones too: no grad
            groups = [dict(options, params=[], **({"foreach": False} if "foreach" in options else {}))
                      for options in group_options]
            for gi, group in enumerate(optimizer.param_groups):
                groups[gi]["params"] = [by_path[path] for path in opt_paths_by_group[gi]]
            for options in groups:
                if "fused" in options:
                    options["fused"] = None
            shadow = type(optimizer)(groups)
            it = iter(states)
            for path, key in state_keys:
                shadow.state[by_path[path]][key] = next(it)
            for p, g in zip(params, grads):
                p.grad = g
            with _compiling(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                shadow.step()
        return [loss] + list(grads) + params + list(states)

    opt_paths_by_group, k = [], 0
    for group in (optimizer.param_groups if optimizer is not None else []):
        opt_paths_by_group.append(opt_paths[k:k + len(group["params"])])
        k += len(group["params"])
    graph_module = make_fx(step, tracing_mode="fake")(flat, list(state_tensors))
    return graph_module, specs, grad_paths


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
            if label.startswith(_MARK):
                current = label[len(_MARK):]
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
        out[key] = ("" if path == _WRAPPED else path[len(_WRAPPED) + 1:] if path.startswith(_WRAPPED + ".") else path, cls)
    return out


def _annotate(gm, specs, grad_paths: list, state_keys: list) -> None:
    """Sets ``meta["custom"]`` on every op (module docstring, step 3); removes the markers and
    the pass-through ops (``detach``, ``alias``: their readers read their input)."""
    phase_of = _phases(gm)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    n_flat = len(specs)
    param_of_input: dict = {}
    path_by_index = {}
    for i, s in enumerate(specs):
        if s.kind.name == "PARAMETER" and s.target.startswith(_WRAPPED + "."):
            path_by_index[i] = s.target[len(_WRAPPED) + 1:]
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


def training_step_json(model, args: tuple, kwargs: dict, loss_fn, optimizer=None) -> dict:
    """The program JSON of one training step (module docstring)."""
    kwargs = dict(kwargs)
    cache = (_use_cache_off(model, kwargs) if getattr(getattr(model, "config", None), "use_cache", None)
             and "use_cache" not in kwargs else contextlib.nullcontext())
    with cache:
        try:
            program, pos = _export(model, args, kwargs, loss_fn)
        except Exception as e:  # noqa: BLE001 - reported with its step
            raise CaptureError("tb_graph_plugin.torch.add_graph could not export the model with its loss "
                               f"(torch.export.export, strict=False): {type(e).__name__}: {str(e)[:400]}") from e
    opt_paths, state_keys, state_tensors = _state_inputs(model, optimizer)
    try:
        trainable = {n for n, p in model.named_parameters() if p.requires_grad}
        gm, specs, grad_paths = _trace(program, pos, optimizer, opt_paths, state_keys, state_tensors, trainable)
    except CaptureError:
        raise
    except Exception as e:  # noqa: BLE001
        raise CaptureError("tb_graph_plugin.torch.add_graph could not trace the training step (forward, "
                           f"backward{', optimizer' if optimizer is not None else ''}): "
                           f"{type(e).__name__}: {str(e)[:400]}") from e
    _annotate(gm, specs, grad_paths, state_keys)
    return _serialize(gm, specs, state_keys, program)


def _serialize(gm, specs, state_keys: list, program) -> dict:
    from torch._export.serde.serialize import GraphModuleSerializer, _to_json_bytes

    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    input_specs = []
    for node, spec in zip(placeholders, specs):
        name = spec.arg.name if hasattr(spec.arg, "name") else node.name
        node._rename(name)
        target = spec.target or ""
        if target.startswith(_WRAPPED + "."):
            target = target[len(_WRAPPED) + 1:]
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
