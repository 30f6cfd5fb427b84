"""Floating copies of high fan-out parameters and constants.

Follows nGraph's visualisation notes ([NGRAPH-VIS], "float Parameter and Constant nodes": rather than
one node with a very large out-degree, e.g. a learning rate fed to many places, draw a copy
at each occurrence site). A child of the group is floated when it is a parameter- or
constant-like op (:data:`PARAMETER_OPS`: placeholders, function arguments, constants that
stayed main ops, variables, PyTorch inputs and constants), a source of the group's
BridgeGraph (no incoming metaedge or bridge), and feeds at least ``float_fanout`` distinct
children. Its copies are :class:`~placed.Annex` nodes of kind IN_EMBEDDING (``of`` = the
original's name), one in the input column of each consumer, so the layered layout never
sees the original. When it also feeds something outside the group (outgoing bridges), one
more copy, a *carrier*, an embedding-sized layout node of its own, carries those edges.

Default threshold 3: with two consumers the original sits between them on two short edges;
from three on, one node pulls distant consumers together (nGraph's "routing pressure"), and
below the in-column extraction bound (``extract_min_degree`` 5 and the quartile rule of
:mod:`extract`) nothing else takes the hub out of the flow.

Pre: a group's children, metaedges and boundary edges. Post: ``floated`` lists child ids in
children order, ``carriers`` those of them with outgoing bridges; each floated child has one
Annex per distinct consumer child, and each metaedge leaving it is one edge of exactly one
of those Annexes (the copy beside that metaedge's target). The carrier, or else the copy
beside the first consumer, keeps the original's name; the other copies are
``name@consumer``.
"""

from __future__ import annotations

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.layout.scene.bridge import BoundaryEdge
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.placed import Annex, Annexes
from tb_graph_plugin.wire import NodeKind

__all__ = ["PARAMETER_OPS", "float_parameters"]

PARAMETER_OPS = frozenset({
    "Placeholder", "PlaceholderWithDefault", "_Arg",  # graph / function inputs (resource ones are embeddings)
    "Const", "HostConst",  # constants that stayed main ops (no single owner)
    "VariableV2", "Variable", "VarHandleOp",  # TF1 / TF2 variables
    "IO Node", "prim::Param", "prim::Constant", "prim::GetAttr",  # PyTorch inputs, constants, parameters
    "torch::parameter", "torch::buffer", "torch::constant",  # the same from torch.export (tb_graph_plugin.torch)
    "torch::optimizer_state",  # a training step's optimizer state (tb_graph_plugin.torch.training)
})


def float_parameters(h: Hierarchy, gid: int, bounds: list[BoundaryEdge], o: SceneOptions) -> tuple[list[int], Annexes, set[int]]:
    """``(floated child ids, annexes: consumer -> ([copies], []), carriers)`` of group ``gid``."""
    if o.float_fanout <= 0:
        return [], {}, set()
    group = h.group(gid)
    n_ops, ops = h.n_ops, h.slim.ops
    has_in = {me.dst for me in group.metaedges} | {be.inner for be in bounds if be.incoming}
    leaves = {be.inner for be in bounds if not be.incoming}
    consumers: dict[int, dict[int, list]] = {}
    for me in group.metaedges:
        c = me.src
        if c < n_ops and ops[c] in PARAMETER_OPS and c not in has_in and me.dst != c:
            consumers.setdefault(c, {}).setdefault(me.dst, []).append(me)
    floated = [c for c in group.children if len(consumers.get(c, ())) >= o.float_fanout]
    annexes: Annexes = {}
    ew, eh = o.embedding_size
    carriers = {c for c in floated if c in leaves}
    for c in floated:
        name = h.name_of(c)
        for k, (dst, mes) in enumerate(consumers[c].items()):
            copy = Annex(name if k == 0 and c not in carriers else f"{name}@{h.name_of(dst)}", NodeKind.IN_EMBEDDING, ew, eh, hid=c,
                         of=name, edges=[(me.kind, me.size, me.count, me.base_edges[0] if me.count == 1 else None)
                                         for me in mes])
            annexes.setdefault(dst, ([], []))[0].append(copy)
    return floated, annexes, carriers
