"""Per-module statistics of a PyTorch model, recorded with forward hooks and written as node data.

``NodeDataHooks(model)`` puts a forward pre-hook and a forward hook on every module. Each module
call records, over the floating-point tensors it returns:

* ``activation_mean_abs``: mean of ``|x|`` (the mean over the calls since the last ``log``);
* ``activation_max_abs``: max of ``|x|`` (NaN when the output holds a NaN);
* ``nonfinite_count``: how many elements are NaN or +-inf (summed over the calls);
* ``module_ms``: wall time of the call in milliseconds, its submodules included (summed).

``log(log, step)`` writes one node-data tag per statistic (``tb_graph_plugin.summary.node_data``)
and starts the next interval.

Names: each call is named as ``tb_graph_plugin.torch.add_graph`` names the scope of a module call
(``ingest/torch_scopes.py``, step 1), from the stack of calls the hooks see:
``LlamaForCausalLM/LlamaModel[model]/layers/LlamaDecoderLayer[3]/LlamaAttention[self_attn]``;
the root is the model's class, a module is ``Class[attr]``, containers that are not called
(``ModuleList``) are plain scopes, the second call of a module in the same parent call is
``Class[attr@1]``. The server matches these names to the groups of a graph written by either
``tb_graph_plugin.torch.add_graph`` (the same names) or torch's own ``SummaryWriter.add_graph``
(JIT scope names, ``TransformerEncoder/TransformerEncoderLayer[0]``: no containers, no call
numbers) by their module key (``hierarchy/node_values.py``).

Example::

    hooks = NodeDataHooks(model)
    for step, batch in enumerate(loader):
        loss = model(batch).sum(); loss.backward(); opt.step()
        hooks.log(writer_or_logdir, step)
    hooks.close()
"""

from __future__ import annotations

import math
import time
from typing import Any, Iterable, Optional

import torch

from tb_graph_plugin.ingest.torch_scopes import call_scope
from tb_graph_plugin.summary import node_data

__all__ = ["NodeDataHooks", "STATS"]

STATS = ("activation_mean_abs", "activation_max_abs", "nonfinite_count", "module_ms")


def _component(text: str) -> str:
    text = text.replace("/", "_").strip()
    return text or "_"


def _tensors(value: Any) -> Iterable[torch.Tensor]:
    """The floating-point tensors in a module's output (tuples, lists, dicts, model outputs)."""
    if isinstance(value, torch.Tensor):
        if value.is_floating_point() or value.is_complex():
            yield value
    elif isinstance(value, dict):  # includes transformers' ModelOutput
        for v in value.values():
            yield from _tensors(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)


def _tracing() -> bool:
    """True while torch traces the model (add_graph's export or JIT trace): record nothing then."""
    compiler = getattr(torch, "compiler", None)
    for check in ("is_exporting", "is_compiling"):
        f = getattr(compiler, check, None)
        if f is not None and f():
            return True
    return torch.jit.is_tracing()


class NodeDataHooks:
    """Records per-module statistics on every forward call of ``model`` (module docstring)."""

    def __init__(self, model: torch.nn.Module, stats: Iterable[str] = STATS):
        self.stats = tuple(stats)
        unknown = set(self.stats) - set(STATS)
        if unknown:
            raise ValueError(f"unknown statistics {sorted(unknown)}; known: {', '.join(STATS)}")
        self.model = model
        self.enabled = True
        self._paths = {id(m): path for path, m in model.named_modules()}
        self._root = _component(type(model).__name__)
        self._stack: list[tuple[str, str, float]] = []  # (path, scope, start) of the calls open
        self._calls: dict[tuple[str, str], int] = {}  # (parent scope, path) -> calls in this forward
        self._sums: dict[str, dict[str, float]] = {s: {} for s in STATS}
        self._counts: dict[str, int] = {}
        self._handles = []
        for m in model.modules():
            self._handles.append(m.register_forward_pre_hook(self._pre))
            self._handles.append(m.register_forward_hook(self._post, always_call=True))

    # -- naming ---------------------------------------------------------------------------

    def _scope(self, module: torch.nn.Module) -> tuple[str, str]:
        path = self._paths.get(id(module))
        if path is None:  # a module added after the hooks: named by its class under its caller
            path = f"<{type(module).__name__}>"
        if path == "":
            return path, self._root
        parent_path, scope = (self._stack[-1][0], self._stack[-1][1]) if self._stack else ("", self._root)
        j = self._calls.get((scope, path), 0)
        self._calls[(scope, path)] = j + 1
        return path, call_scope(scope, parent_path, path, type(module).__name__, j)

    # -- hooks ----------------------------------------------------------------------------

    def _pre(self, module, args):
        if not self.enabled or _tracing():
            return
        if module is self.model or not self._stack:
            self._stack.clear()  # a new forward (or one that raised before its hooks closed)
            self._calls.clear()
        path, scope = self._scope(module)
        self._stack.append((path, scope, time.perf_counter()))

    def _post(self, module, args, output):
        if not self.enabled or not self._stack or _tracing():
            return
        path, scope, start = self._stack.pop()
        ms = (time.perf_counter() - start) * 1e3
        total = numel = nonfinite = 0.0
        top = -math.inf
        with torch.no_grad():
            for t in _tensors(output):
                a = t.detach().abs().float()
                if not a.numel():
                    continue
                total += float(a.sum())
                numel += a.numel()
                m = float(a.max())  # NaN when a holds one
                top = math.nan if math.isnan(top) or math.isnan(m) else max(top, m)
                nonfinite += float((~torch.isfinite(a)).sum())
        self._add(scope, ms, total / numel if numel else None, top if numel else None, nonfinite if numel else None)

    def _add(self, name: str, ms: float, mean: Optional[float], top: Optional[float], nonfinite: Optional[float]):
        sums = self._sums
        sums["module_ms"][name] = sums["module_ms"].get(name, 0.0) + ms
        if mean is None:
            return
        self._counts[name] = self._counts.get(name, 0) + 1
        sums["activation_mean_abs"][name] = sums["activation_mean_abs"].get(name, 0.0) + mean
        old = sums["activation_max_abs"].get(name, -math.inf)
        sums["activation_max_abs"][name] = math.nan if math.isnan(old) or math.isnan(top) else max(old, top)
        sums["nonfinite_count"][name] = sums["nonfinite_count"].get(name, 0.0) + nonfinite

    # -- out ------------------------------------------------------------------------------

    def values(self) -> dict[str, dict[str, float]]:
        """statistic -> name -> value, over the calls since the last ``log`` / ``reset``."""
        out = {s: dict(self._sums[s]) for s in self.stats}
        if "activation_mean_abs" in out:
            out["activation_mean_abs"] = {n: v / self._counts[n] for n, v in out["activation_mean_abs"].items()}
        return out

    def reset(self) -> None:
        self._sums = {s: {} for s in STATS}
        self._counts.clear()

    def log(self, log: Any, step: int, prefix: str = "") -> dict[str, dict[str, float]]:
        """Write each statistic as node data ``prefix + statistic`` at ``step``; start anew.
        Returns what was written."""
        out = self.values()
        for stat, values in out.items():
            if values:
                node_data(log, prefix + stat, values, step)
        self.reset()
        return out

    def close(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()

    def __enter__(self) -> "NodeDataHooks":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
