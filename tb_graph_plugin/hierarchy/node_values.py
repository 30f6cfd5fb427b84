"""Per-node data on a hierarchy: data names -> nodes, and a value for every node, groups aggregated.

1. ``resolve``: each name in the data is a node of the hierarchy (an op, a group, a SeriesNode)
   when it is one's name; else, when its last part is a module call (``Class[attr]``), the group
   whose **module key** is the same. A module key drops the plain scopes between module calls and
   the ``@k`` call numbers and the containers no forward runs (``ModuleList[layers]``):
   ``Llama/LlamaModel[model]/layers/LlamaDecoderLayer[0]`` and torch's own ``add_graph`` (JIT)
   name ``Llama/LlamaModel[model]/ModuleList[layers]/LlamaDecoderLayer[0]`` have the same key, so ``tb_graph_plugin.torch.node_data`` names (written as ``tb_graph_plugin.torch`` names
   module calls) find the groups of either writer's graph. Names that find no node are counted
   and returned, never dropped silently.
2. ``aggregate``: a node's value is its own when the data names it (several data names on one
   node are combined by ``agg``), else ``agg`` (``max``, ``mean`` or ``sum``) of the values of
   the outermost valued nodes inside it (for per-op data: every op in the group; for per-module
   data: the group's own value, or its submodules'). A NaN among them makes the result NaN (a
   NaN inside a collapsed group shows on the group).

Pre: ``h`` built. Post: ``NodeStats.value(i)`` is defined for every node id, NaN-propagating;
``covering(i)`` lists the data indices whose values made node ``i``'s value.
"""

from __future__ import annotations

import math
import re
from typing import Iterable, Optional

import numpy as np

__all__ = ["module_key", "module_keys", "resolve", "NodeStats", "aggregate", "covering", "combine", "AGGS"]

AGGS = ("max", "mean", "sum")
_CALL_NUMBER = re.compile(r"@\d+(?=\])")
# Containers no forward call runs: torch's JIT names them (``ModuleList[layers]``), hooks never see them.
_CONTAINERS = ("ModuleList[", "ModuleDict[", "ParameterList[", "ParameterDict[")


def module_key(name: str) -> Optional[str]:
    """The key of a module-call name (module docstring), None for other names.

    >>> module_key("Net/layers/Block[0]/Linear[fc@1]"), module_key("Net/ModuleList[layers]/Block[0]/Linear[fc]")
    ('Net/Block[0]/Linear[fc]', 'Net/Block[0]/Linear[fc]')
    >>> module_key("Net/Linear[fc]/weight") is None
    True
    """
    parts = name.split("/")
    if len(parts) < 2 or not parts[-1].endswith("]") or "[" not in parts[-1]:
        return None
    return "/".join([parts[0]] + [_CALL_NUMBER.sub("", p) for p in parts[1:]
                                  if p.endswith("]") and "[" in p and not p.startswith(_CONTAINERS)])


def module_keys(h) -> dict[str, int]:
    """Module key -> group id, for the groups whose name is a module call (first one wins)."""
    keys: dict[str, int] = {}
    for g in h.walk_groups():
        key = module_key(g.name)
        if key is not None:
            keys.setdefault(key, h.group_index[g.name])
    return keys


def resolve(h, names: Iterable[str], keys: Optional[dict[str, int]] = None) -> tuple[list[int], list[str]]:
    """(node id per data name, -1 where none; the names that found no node)."""
    ids, unmatched = [], []
    for name in names:
        try:
            i = h.id_of(name)
        except KeyError:
            key = module_key(name)
            if keys is None and key is not None:
                keys = module_keys(h)
            i = keys.get(key, -1) if key is not None else -1
        ids.append(i)
        if i < 0:
            unmatched.append(name)
    return ids, unmatched


def combine(values: Iterable[float], agg: str) -> float:
    """``agg`` of some values, NaN if one is NaN, NaN for none.

    >>> combine([1, 3], "mean"), combine([1, float("nan")], "max"), combine([], "sum")
    (2.0, nan, nan)
    """
    vs = list(values)
    if not vs or any(math.isnan(v) for v in vs):
        return math.nan
    if agg == "max":
        return max(vs)
    if agg == "sum":
        return math.fsum(vs)
    return math.fsum(vs) / len(vs)


class NodeStats:
    """Per node id: the sum, count, max and NaN count of the values that make its value."""

    def __init__(self, n: int):
        self.total = np.zeros(n)
        self.count = np.zeros(n, dtype=np.int64)
        self.top = np.full(n, -np.inf)
        self.nans = np.zeros(n, dtype=np.int64)
        self.own = np.zeros(n, dtype=bool)
        self.agg = "max"

    def value(self, i: int) -> float:
        if self.nans[i]:
            return math.nan
        if not self.count[i]:
            return math.nan
        if self.agg == "max":
            return float(self.top[i])
        if self.agg == "sum":
            return float(self.total[i])
        return float(self.total[i] / self.count[i])

    def has(self, i: int) -> bool:
        return bool(self.count[i] or self.nans[i])


def aggregate(h, ids: list[int], values: list[float], agg: str) -> NodeStats:
    """Each node's value (module docstring, step 2): one pass down the groups, bottom-up."""
    if agg not in AGGS:
        raise ValueError(f"agg must be one of {AGGS}, got {agg!r}")
    n = h.n_ops + len(h.groups)
    stats = NodeStats(n)
    stats.agg = agg
    for i, v in zip(ids, values):
        if i < 0:
            continue
        stats.own[i] = True
        if math.isnan(v):
            stats.nans[i] += 1
            continue
        stats.total[i] += v
        stats.count[i] += 1
        stats.top[i] = max(stats.top[i], v)
    if agg == "mean":  # several data names on one node: their mean is its own value, counted once
        several = stats.own & (stats.count > 1)
        stats.total[several] /= stats.count[several]
        stats.count[several] = 1
    for g in reversed(list(h.walk_groups())):
        gid = h.group_index[g.name]
        if stats.own[gid]:
            continue
        for c in g.children:
            if stats.count[c] or stats.nans[c]:
                stats.nans[gid] += stats.nans[c]
                stats.total[gid] += stats.total[c]
                stats.count[gid] += stats.count[c]
                stats.top[gid] = max(stats.top[gid], stats.top[c])
    return stats


def covering(h, stats: NodeStats, i: int) -> list[int]:
    """The valued nodes whose values make node ``i``'s: itself when its own, else the outermost
    valued nodes inside it."""
    out, stack = [], [i]
    n = h.n_ops
    while stack:
        j = stack.pop()
        if stats.own[j]:
            out.append(j)
        elif j >= n and stats.has(j):
            stack.extend(h.groups[j - n].children)
    return out
