"""What the changes of a structural diff cost: each changed group's cost in A and in B.

Pre: two built Hierarchies and their ``wire.GraphDiff`` (``diff.diff_hierarchies``). Post: one entry
per changed group (``DiffStatus.CHANGED``, kind meta or series) whose ``hierarchy.cost.node_cost``
differs between A (its ``old_name`` there, else its name) and B, in the diff's order, each
``{"name", "a": NodeCost, "b": NodeCost, "delta": {field: b - a}}`` as plain JSON values; the root
first, named ``__root__``, when the totals differ. Cost: the op costs of both graphs once
(``graph.cost.cached_op_costs``), then one gather per changed group.

>>> from tensorboard.compat.proto import graph_pb2
>>> from tb_graph_plugin.graph import build_slim_graph
>>> from tb_graph_plugin.hierarchy import build_hierarchy
>>> from tb_graph_plugin.diff import diff_hierarchies
>>> def h(units):
...     g = graph_pb2.GraphDef()
...     w = g.node.add(name="d/w", op="VariableV2"); w.attr["dtype"].type = 1
...     s = w.attr["_output_shapes"].list.shape.add(); _ = [s.dim.add(size=n) for n in (3, units)]
...     _ = g.node.add(name="d/MatMul", op="MatMul", input=["d/w"])
...     return build_hierarchy(build_slim_graph(g))
>>> a, b = h(4), h(8)
>>> [(c["name"], c["delta"]["params"]) for c in cost_changes(a, b, diff_hierarchies(a, b))]
[('__root__', 12), ('d', 12)]
"""

from __future__ import annotations

from tb_graph_plugin import wire
from tb_graph_plugin.hierarchy.cost import node_cost
from tb_graph_plugin.hierarchy.model import ROOT_NAME, Hierarchy

__all__ = ["cost_changes"]

_FIELDS = ("params", "param_bytes", "flops", "output_bytes", "unknown_ops")


def _change(name: str, a: wire.NodeCost, b: wire.NodeCost):
    if all(getattr(a, f) == getattr(b, f) for f in _FIELDS):
        return None
    return {"name": name, "a": wire.to_plain(a), "b": wire.to_plain(b),
            "delta": {f: getattr(b, f) - getattr(a, f) for f in _FIELDS}}


def cost_changes(a: Hierarchy, b: Hierarchy, diff: wire.GraphDiff) -> list[dict]:
    """The cost changes of the changed groups of ``diff`` (module docstring)."""
    out = []
    total = _change(ROOT_NAME, node_cost(a, a.root.id), node_cost(b, b.root.id))
    if total:
        out.append(total)
    for e in diff.entries:
        if e.status != wire.DiffStatus.CHANGED or e.kind not in (wire.NodeKind.META, wire.NodeKind.SERIES):
            continue
        old = e.old_name or e.name
        if not a.has(old) or not b.has(e.name):
            continue
        change = _change(e.name, node_cost(a, old), node_cost(b, e.name))
        if change:
            out.append(change)
    return out
