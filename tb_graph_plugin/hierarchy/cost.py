"""What a node of the Hierarchy costs: its ops' costs (``graph.cost``) summed, as a ``wire.NodeCost``.

A group's cost is the sum of the costs of the main ops inside it (recursively) and of the
embeddings beside them (their ``owned_*`` columns): a parameter counts in the group of its first
reader, once. An op's cost is its own and its embeddings'. ``unknown_ops`` counts the ops inside
whose cost could not be known (listed by op type in ``unknown_op_types``, most first); they add 0
to the sums, which are then lower bounds.

Pre: a built Hierarchy (a partial one too: every op is inside the groups it has, and a group's
ops are what the whole build gives it). Post: ``node_cost(h, root)`` is the graph's total;
a group's figures are the sums of its children's. Cost: the op columns once per SlimGraph
(``graph.cost.cached_op_costs``), then one gather over the group's ops per call.

>>> from tensorboard.compat.proto import graph_pb2
>>> from tb_graph_plugin.graph import build_slim_graph
>>> from tb_graph_plugin.hierarchy import build_hierarchy
>>> g = graph_pb2.GraphDef()
>>> _ = g.node.add(name="a/x", op="Mystery")
>>> h = build_hierarchy(build_slim_graph(g))
>>> c = node_cost(h, "a")
>>> c.flops, c.unknown_ops, c.unknown_op_types
(0, 1, {'Mystery': 1})
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from tb_graph_plugin.graph.cost import cached_op_costs
from tb_graph_plugin.hierarchy.model import Hierarchy, NodeRef
from tb_graph_plugin.wire import NodeCost

__all__ = ["node_cost", "cost_values", "MAX_UNKNOWN_TYPES"]

MAX_UNKNOWN_TYPES = 20


def _ops_of(h: Hierarchy, i: int) -> np.ndarray:
    return np.fromiter(h.leaf_ops(i), np.int64)


def node_cost(h: Hierarchy, ref: NodeRef) -> NodeCost:
    """The ``NodeCost`` of op or group ``ref`` (id or hierarchy name)."""
    i = h.id_of(ref)
    costs = cached_op_costs(h.slim)
    owned = costs.owned
    if i < h.n_ops and h.slim.owner[i] >= 0:  # an embedding: its own row
        ids = np.array([i], np.int64)
        sums = {k: int(getattr(costs, k)[i]) for k in costs.FIELDS}
        unknown_ids = ids if costs.unknown[i] else ids[:0]
    else:
        ids = _ops_of(h, i)
        sums = {k: int(owned[k][ids].sum()) for k in costs.FIELDS}
        unknown_ids = ids[owned["unknown"][ids] > 0]
    types: Counter = Counter()
    if len(unknown_ids):
        slim = h.slim
        for op in unknown_ids.tolist():
            if costs.unknown[op]:
                types[_op_type(slim, op)] += 1
            for e in (*slim.in_embeddings.get(op, ()), *slim.out_embeddings.get(op, ())):
                if costs.unknown[e] and int(slim.owner[e]) == op:
                    types[_op_type(slim, e)] += 1
    return NodeCost(params=sums["params"], param_bytes=sums["param_bytes"], flops=sums["flops"],
                    output_bytes=sums["output_bytes"], unknown_ops=sums["unknown"],
                    unknown_op_types=dict(types.most_common(MAX_UNKNOWN_TYPES)))


def _op_type(slim, op: int) -> str:
    """The op type to list an unknown op by; a Keras conceptual layer (no op type): its class."""
    if slim.ops[op]:
        return slim.ops[op]
    node_def = slim.node_defs[op]
    cls = node_def.attr["keras_class"].s.decode("utf-8", "replace") if node_def is not None and "keras_class" in node_def.attr else ""
    return f"keras:{cls}" if cls else ""


def cost_values(h: Hierarchy, field: str) -> tuple[list[int], list[float]]:
    """``(op ids, values)``: every main op whose owned ``field`` is not 0, for per-node colouring
    (``hierarchy.node_values.aggregate`` with ``sum`` makes each group's value its cost)."""
    owned = cached_op_costs(h.slim).owned[field]
    ids = np.flatnonzero(owned)
    return ids.tolist(), owned[ids].astype(np.float64).tolist()
