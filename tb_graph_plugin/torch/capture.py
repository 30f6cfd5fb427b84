"""Capture a model's graph: torch.export first, then what a user would retry, then one error.

Order (each step only when the ones before failed):

1. a Hugging Face model whose ``config.use_cache`` is on (and no ``use_cache`` passed): 2 and 3
   with it off (with it on, a decoder's outputs hold cache objects torch.export cannot return;
   that is found only after a whole trace, so it is not tried), and a warning saying so when
   the model is a decoder (``_has_cache``: an encoder-only model returns no cache);
2. ``torch.export.export(model, args, kwargs, strict=False)``;
3. the same on a wrapper returning the output's tensors flat (outputs pytree cannot flatten:
   custom classes); the wrapper level is removed from the names and the outputs keep their
   field names (``scores``);
4. a JIT trace of the flat wrapper (torch's own ``SummaryWriter.add_graph`` graph builder).

Post: a ``Capture`` with an ExportedProgram (steps 1-3) or a GraphDef (step 4), and ``notes``
on what was retried; or ``CaptureError`` naming every cause and what the user can change.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import io
import json
import warnings
from typing import Any, Optional

import torch

__all__ = ["Capture", "CaptureError", "capture_model", "program_json"]

_WRAPPED = "model"  # the wrapper's attribute holding the user's model


class CaptureError(RuntimeError):
    """Every way of capturing the model failed; the message lists each cause."""


@dataclasses.dataclass
class Capture:
    method: str
    program: Any = None  # torch.export.ExportedProgram (steps 1-3)
    graph_def: Any = None  # GraphDef (step 4)
    wrapped: bool = False  # captured through _FlatOutputs
    fields: Optional[list] = None  # output field names of the flat wrapper
    notes: list = dataclasses.field(default_factory=list)


class _FlatOutputs(torch.nn.Module):
    """Calls the model and returns the tensors of its output, flat, recording their fields."""

    def __init__(self, model, kwargs: dict):
        super().__init__()
        self.model = model
        self._kwargs = kwargs

    fields: list = []  # per subclass (``_flat_outputs``): export may run a copy of the module

    def forward(self, *args):
        out = self.model(*args, **self._kwargs)
        leaves = _tensor_leaves(out, "")
        type(self).fields[:] = [name for name, _ in leaves]
        return tuple(t for _, t in leaves)


def _flat_outputs(model, kwargs: dict, names: list) -> _FlatOutputs:
    """A ``_FlatOutputs`` whose ``forward`` declares the model's argument names (torch.export
    names the graph's inputs after them)."""
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]

    class FlatOutputs(_FlatOutputs):
        fields: list = []

        def forward(self, *args):
            return _FlatOutputs.forward(self, *args)

    FlatOutputs.forward.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] + params)
    return FlatOutputs(model, kwargs)


def _tensor_leaves(value, prefix: str) -> list:
    """(field path, tensor) of every tensor in an output, in order (dicts, dataclasses, tuples)."""
    if isinstance(value, torch.Tensor):
        return [(prefix or "output", value)]
    items = None
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, (list, tuple)):
        items = list(enumerate(value))
    elif hasattr(value, "to_tuple") and hasattr(value, "keys"):  # Hugging Face ModelOutput
        items = [(k, value[k]) for k in value.keys()]
    elif hasattr(value, "__dict__") and not isinstance(value, torch.nn.Module):
        items = list(vars(value).items())  # a cache object: its tensors
    out = []
    for key, item in items or ():
        out.extend(_tensor_leaves(item, f"{prefix}.{key}" if prefix else str(key)))
    return out


def _cause(e: BaseException) -> str:
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {text[:300]}"


def _export(module, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.export.export(module, args, kwargs or None, strict=False)


@contextlib.contextmanager
def _use_cache_off(model, kwargs: dict):
    """The config's ``use_cache`` off, and ``use_cache=False`` passed when forward takes it."""
    config = getattr(model, "config", None)
    old = getattr(config, "use_cache", None)
    config.use_cache = False
    saved = dict(kwargs)
    try:
        if "use_cache" in inspect.signature(model.forward).parameters:
            kwargs["use_cache"] = False
    except (TypeError, ValueError):
        pass
    try:
        yield
    finally:
        config.use_cache = old
        kwargs.clear()
        kwargs.update(saved)


def _has_cache(model) -> bool:
    """True for a Hugging Face model whose outputs hold a cache when ``use_cache`` is on (a
    decoder: it generates); an encoder-only model (RoBERTa) has the flag in its config but returns
    no cache, so turning it off changed nothing worth a warning."""
    config = model.config
    try:
        generates = bool(model.can_generate()) if hasattr(model, "can_generate") else False
    except Exception:  # noqa: BLE001 - a model's own method; no answer is no
        generates = False
    return generates or bool(getattr(config, "is_decoder", False)) or bool(getattr(config, "is_encoder_decoder", False))


def _bind_positional(model, args: tuple, kwargs: dict) -> tuple[tuple, dict, list]:
    """Keyword tensors that follow the positional ones in ``forward``'s signature become
    positional; the rest stay keywords. Also the names of the positional ones."""
    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        return args, kwargs, [f"input_{i}" for i in range(len(args))]
    args, kwargs = list(args), dict(kwargs)
    for p in params[len(args):]:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or p.name not in kwargs:
            break
        if not isinstance(kwargs[p.name], torch.Tensor):
            break
        args.append(kwargs.pop(p.name))
    names = [p.name for p in params[:len(args)] if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names += [f"input_{i}" for i in range(len(names), len(args))]
    return tuple(args), kwargs, names


def capture_model(model, args: tuple, kwargs: dict) -> Capture:
    kwargs = dict(kwargs)
    causes: list[str] = []
    notes: list[str] = []

    def try_export(flat: bool, suffix: str = ""):
        method = ("torch.export, outputs returned flat" if flat else "torch.export") + suffix
        try:
            if not flat:
                return Capture(method, program=_export(model, args, kwargs), notes=notes)
            pos, kw, names = _bind_positional(model, args, kwargs)
            wrapper = _flat_outputs(model, kw, names)
            program = _export(wrapper, pos, {})
            return Capture(method, program=program, wrapped=True, fields=list(wrapper.fields), notes=notes)
        except Exception as e:  # noqa: BLE001 - every cause is reported
            causes.append(f"{method}: {_cause(e)}")
        return None

    result = None
    if getattr(getattr(model, "config", None), "use_cache", None) and "use_cache" not in kwargs:
        # A Hugging Face model with its cache on returns cache objects torch.export cannot
        # return, found only after a whole trace: capture with it off at once (and say so).
        with _use_cache_off(model, kwargs):
            result = try_export(False, ", use_cache=False") or try_export(True, ", use_cache=False")
        if result is not None and _has_cache(model):
            note = ("tb_graph_plugin.torch.add_graph: captured with the Hugging Face config's "
                    "use_cache=False (with the cache on, the outputs hold cache objects torch.export "
                    "cannot return)")
            notes.append(note)
            warnings.warn(note, stacklevel=3)
    if result is None:
        result = try_export(False) or try_export(True)
    if result is None:
        try:
            from torch.utils.tensorboard._pytorch_graph import graph as jit_graph

            pos, kw, names = _bind_positional(model, args, kwargs)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                graph_def, _ = jit_graph(_flat_outputs(model, kw, names), pos, use_strict_trace=False)
            note = ("tb_graph_plugin.torch.add_graph: torch.export failed, so the graph is a JIT "
                    "trace (names are JIT value names; no per-call scopes). Causes: " + "; ".join(causes))
            notes.append(note)
            warnings.warn(note, stacklevel=3)
            result = Capture("jit trace, outputs returned flat", graph_def=graph_def, notes=notes)
        except Exception as e:  # noqa: BLE001
            causes.append(f"JIT trace, outputs returned flat: {_cause(e)}")
    if result is None:
        raise CaptureError(
            "tb_graph_plugin.torch.add_graph could not capture the model. Tried:\n  - "
            + "\n  - ".join(causes)
            + "\nWhat you can change: pass inputs the model accepts as called in training "
              "(args=(tensor, ...), kwargs={...}); make forward return tensors, tuples or dicts "
              "of tensors; for a Hugging Face model pass use_cache=False; export errors name the "
              "line of your model that torch.export cannot trace.")
    return result


def program_json(result: Capture) -> dict:
    """The captured ExportedProgram as torch's serialized JSON (no weights), wrapper removed."""
    program = result.program
    try:
        from torch._export.serde.serialize import GraphModuleSerializer, _to_json_bytes

        # The graph module only: ExportedProgramSerializer adds weights, validation and a
        # canonical-form self-check (a deep copy: 2.1 of 3.0 s on a 24-layer LLaMA).
        graph_module = GraphModuleSerializer(program.graph_signature, program.module_call_graph).serialize(
            program.graph_module)
        data = {"graph_module": json.loads(_to_json_bytes(graph_module))}
    except (ImportError, TypeError, AttributeError):  # another torch: its public archive writer
        from tb_graph_plugin.ingest import pt2

        buffer = io.BytesIO()
        torch.export.save(program, buffer)
        data = pt2.read_program(buffer.getvalue(), "the exported program")
    if result.wrapped:
        _remove_wrapper(data, result.fields or [])
    return data


def _remove_wrapper(data: dict, fields: list) -> None:
    """Names as if the model had been captured itself: its level is the root, outputs named."""
    from tb_graph_plugin.ingest.exported_program import parse_module_stack

    prefix = _WRAPPED + "."
    gm = data["graph_module"]
    for node in gm["graph"]["nodes"]:
        meta = node.get("metadata") or {}
        if not meta.get("nn_module_stack"):
            continue
        entries = []
        for key, path, cls in parse_module_stack(meta["nn_module_stack"]):
            if path == "":
                continue
            entries.append((key, "" if path == _WRAPPED else path[len(prefix):] if path.startswith(prefix) else path, cls))
        meta["nn_module_stack"] = ";".join(f"{k},{p},{c}" for k, p, c in entries)
    for spec in gm["signature"].get("input_specs") or []:
        for body in spec.values():
            for key in ("parameter_name", "buffer_name", "tensor_constant_name"):
                if isinstance(body, dict) and str(body.get(key, "")).startswith(prefix):
                    body[key] = body[key][len(prefix):]
    leaf = {"type": None, "context": None, "children_spec": []}
    spec = [1, {"type": "builtins.dict", "context": json.dumps(fields), "children_spec": [leaf] * len(fields)}]
    for entry in gm.get("module_call_graph") or []:
        if entry.get("fqn") == "" and entry.get("signature"):
            entry["signature"]["out_spec"] = json.dumps(spec)
