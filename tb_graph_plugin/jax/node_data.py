"""Per-module node data from a parameter-shaped pytree: gradient norms, update sizes, weights.

A JAX training step has its per-parameter numbers as pytrees shaped like the parameters
(``grads`` from ``jax.value_and_grad``, optax ``updates``, the ``params`` themselves). Each
parameter of a graph ``tb_graph_plugin.jax.add_graph`` wrote is the op named by its pytree path
(``params/block_0/Dense_0/kernel``) with ``_module``, the scope of the forward ops that read it
(``Transformer/block_0/Dense_0``, NNX ``NTransformer/blocks/NBlock[0]/Linear[up]``). Here each
leaf is reduced to a number and the numbers of one module are combined into its group's value:
the module group is coloured, and its ``backward/`` twin too (where the gradient is computed).

Reductions: ``norm`` (L2; a module's value is the L2 norm of its leaves together), ``max_abs``,
``mean_abs`` (over all the module's elements), ``nonfinite`` (count of NaN / Inf elements).

Post: ``{group name: value}``; leaves whose path names no parameter of the graph are returned in
``unmatched`` by ``module_values`` (``tree_node_data`` warns with them), never dropped silently.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from tb_graph_plugin.ingest.jax_program import PARAMETER_OP
from tb_graph_plugin.jax.capture import _leaves, _nnx
from tb_graph_plugin.summary import node_data

__all__ = ["module_values", "tree_node_data", "REDUCTIONS"]

REDUCTIONS = ("norm", "max_abs", "mean_abs", "nonfinite")


def _param_path(keys: tuple, is_param: bool) -> str:
    keys = tuple(str(k) for k in keys)
    return "/".join(keys if keys[:1] == ("params",) else ("params",) + keys)


def module_values(graph_def, tree, reduce: str = "norm") -> tuple[dict[str, float], list[str]]:
    """(``{module group: value}``, paths that name no parameter) of ``tree`` on ``graph_def``."""
    if reduce not in REDUCTIONS:
        raise ValueError(f"reduce must be one of {', '.join(REDUCTIONS)}, not {reduce!r}")
    modules = {n.attr["_parameter"].s.decode(): n.attr["_module"].s.decode()
               for n in graph_def.node if n.op == PARAMETER_OP and n.attr["_module"].s}
    scopes = {"/".join(n.name.split("/")[:k]) for n in graph_def.node for k in range(1, n.name.count("/") + 1)}
    parts: dict[str, list] = {}
    unmatched = []
    for keys, leaf, is_param in _leaves(tree, _nnx()):
        if not hasattr(leaf, "shape") or type(leaf).__name__ == "ShapeDtypeStruct":
            continue
        path = _param_path(keys, is_param)
        module = modules.get(path)
        if module is None:
            unmatched.append(path)
            continue
        x = np.asarray(leaf, dtype=np.float64).ravel()
        parts.setdefault(module, []).append(x)
    values: dict[str, float] = {}
    for module, arrays in parts.items():
        x = np.concatenate(arrays) if arrays else np.zeros(0)
        if reduce == "nonfinite":
            v = float(np.count_nonzero(~np.isfinite(x)))
        elif not np.all(np.isfinite(x)):
            v = math.nan
        elif reduce == "norm":
            v = float(np.sqrt(np.sum(x * x)))
        elif reduce == "max_abs":
            v = float(np.max(np.abs(x))) if x.size else 0.0
        else:
            v = float(np.mean(np.abs(x))) if x.size else 0.0
        values[module] = v
        if f"backward/{module}" in scopes:
            values[f"backward/{module}"] = v
    return values, unmatched


def tree_node_data(log: Any, tag: str, graph_def, tree, step: int = 0, reduce: str = "norm") -> dict[str, float]:
    """Write ``module_values(graph_def, tree, reduce)`` as node data ``tag`` at ``step``; return it."""
    values, unmatched = module_values(graph_def, tree, reduce)
    if unmatched:
        warnings.warn(f"tb_graph_plugin.jax.node_data: {len(unmatched)} leaves name no parameter of the graph "
                      f"(first: {', '.join(unmatched[:5])})", stacklevel=2)
    node_data(log, tag, values, step)
    return values
