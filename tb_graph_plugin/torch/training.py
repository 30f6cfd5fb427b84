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
3. (``training_program.annotate``) the phases split at ``record_function`` markers; each op gets ``meta["custom"]``:
   ``tb_phase`` (``forward`` / ``loss`` / ``backward`` / ``optimizer``), for a backward op the
   forward op it comes from (``tb_forward``), for an optimizer op the parameter it updates
   (``tb_param``: the one parameter its inputs come from, by dataflow);
4. (``training_program.serialize``) the graph serialized with torch's own
   ``GraphModuleSerializer`` (the export JSON schema) and
   a signature saying which placeholder is a parameter, buffer, constant, user input or
   optimizer state (``optimizer_state``: an extension of the schema read by
   ``ingest/exported_program.py``, which names every op).

Private torch APIs used (checked on torch 2.13 only):
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
import warnings

import torch

from tb_graph_plugin.torch.capture import CaptureError, _bind_positional, _use_cache_off
from tb_graph_plugin.torch.training_program import MARK, WRAPPED, annotate, serialize

__all__ = ["training_step_json"]



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
    param_index = {s.target[len(WRAPPED) + 1:]: i for i, s in enumerate(specs)
                   if s.kind.name == "PARAMETER" and s.target.startswith(WRAPPED + ".")}
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
        with torch.autograd.profiler.record_function(MARK + "forward"), fx_traceback.preserve_node_meta(), \
                torch.enable_grad():  # a training step, also when called under torch.no_grad()
            outs = torch.fx.Interpreter(gm).run(*flat_inputs)
        loss = outs[loss_index]
        with torch.autograd.profiler.record_function(MARK + "backward"), torch.enable_grad():
            setup_stacktrace_preservation_hooks([loss.grad_fn])
            with fx_traceback.preserve_node_meta():
                grads = torch.autograd.grad(loss, params, allow_unused=True)
        if optimizer is None:
            return [loss] + list(grads)
        with torch.autograd.profiler.record_function(MARK + "optimizer"), torch.no_grad():
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
    annotate(gm, specs, grad_paths, state_keys)
    return serialize(gm, specs, state_keys, program)


