"""Oracle for ``graph.embeddings``: the embedding rule stated from its documented behaviour.

Written from the rule, not from the production code: it reads the GraphDef's NodeDefs
directly (its own input parsing, its own name index, its own shape reading) and resolves
owners by plain recursion over dicts. Sources of the rule: the stock Graph dashboard
([TB-GRAPH-DOC], "GraphDef -> SlimGraph": ``Const`` ops are in-embeddings, ``*Summary`` ops
out-embeddings, the inputs of an in-embedding move to its main node) and
[TB-SRC] ``tf_graph_common/graph.ts`` (reference-edge ops, edge sizes), plus the
extensions ``graph/embeddings.py`` documents (PyTorch ``prim::*`` noise, TF2 resource handles
and their ``ReadVariableOp``; see docs/references.md):

1. Candidates by op type: in-embedding ops (``Const``, the PyTorch noise ops), out-embedding
   ops (``^[a-zA-Z]+Summary$``); a resource-typed ``_Arg`` (attr ``T``) / ``Placeholder``
   (attr ``dtype``) or a ``VarHandleOp`` is an in-embedding candidate, and so is any
   ``ReadVariableOp`` with an input from such a handle.
2. Owners, for each op in id order: an in-embedding's owner is its first consumer (inputs in
   op order, then input order) that is a main op, or else that is an embedding whose own
   owner exists (found the same way, skipping ops already on the current chain); an
   out-embedding's, the same over its producers. A candidate without owner becomes a main op
   there and then, so later ops see it as main (the walk in id order).
3. Base edges, one per resolvable input in input order: main -> main kept; an edge out of an
   in-embedding is no edge (the embedding is listed beside the main op it feeds, or that
   op's owner); main -> out-embedding owned by that main op is no edge (listed); an edge out
   of an out-embedding into an embedding is dropped; any other edge touching an embedding
   joins the owners of its ends, unless both ends have the same owner. Size: product of the
   source output's dims, a dim <= 0 counting 1; 1 for control edges and without shapes.
"""

from __future__ import annotations

import re

from tensorboard.compat.proto import graph_pb2, types_pb2

from tb_graph_plugin.graph.model import SlimGraphOptions
from tb_graph_plugin.wire import EdgeKindCode

MAIN, IN, OUT = "main", "in", "out"

#: Stock reference-edge ops ([TB-SRC] ``graph.ts``), input 0 only.
REFERENCE_OPS = {"Assign", "AssignAdd", "AssignSub", "assign", "assign_add", "assign_sub", "count_up_to",
                 "ScatterAdd", "ScatterSub", "ScatterUpdate", "scatter_add", "scatter_sub", "scatter_update"}


def raw_edges(g: graph_pb2.GraphDef) -> list[tuple[int, int, int, int]]:
    """``(src, dst, kind, output)`` of every input naming an existing node, in op then input order
    (``output`` -1 for a control input, which names no tensor)."""
    first_id: dict[str, int] = {}
    for i, node in enumerate(g.node):
        first_id.setdefault(node.name, i)
    out = []
    for d, node in enumerate(g.node):
        for pos, text in enumerate(node.input):
            control = text.startswith("^")
            name, _, port = text.lstrip("^").partition(":")
            if name not in first_id:
                continue  # dangling: no edge
            if control:
                kind = EdgeKindCode.CONTROL
            elif pos == 0 and node.op in REFERENCE_OPS:
                kind = EdgeKindCode.REFERENCE
            else:
                kind = EdgeKindCode.DATA
            out.append((first_id[name], d, kind, -1 if control else int(port or 0)))
    return out


def _is_handle(node) -> bool:
    if node.op == "VarHandleOp":
        return True
    key = {"_Arg": "T", "Placeholder": "dtype"}.get(node.op)
    return key is not None and key in node.attr and node.attr[key].type == types_pb2.DT_RESOURCE


def candidate_roles(g: graph_pb2.GraphDef, options: SlimGraphOptions, edges) -> list[str]:
    in_ops = set(options.in_embedding_ops) | (set(options.torch_noise_ops) if options.embed_torch_noise else set())
    roles = []
    for node in g.node:
        if node.op in in_ops:
            roles.append(IN)
        elif re.match(options.out_embedding_pattern, node.op):
            roles.append(OUT)
        else:
            roles.append(MAIN)
    if options.embed_variable_reads:
        handles = {i for i, node in enumerate(g.node) if roles[i] == MAIN and _is_handle(node)}
        for i in handles:
            roles[i] = IN
        for s, d, _, _ in edges:
            if s in handles and g.node[d].op == "ReadVariableOp":
                roles[d] = IN
    return roles


def owners(roles: list[str], edges) -> list[int | None]:
    """Rule 2 above; ``roles`` is updated in place (ownerless candidates become MAIN)."""
    nexts: dict[int, list[int]] = {}
    for s, d, _, _ in edges:
        if roles[s] == IN:
            nexts.setdefault(s, []).append(d)
        if roles[d] == OUT:
            nexts.setdefault(d, []).append(s)
    memo: dict[int, int | None] = {}

    def find(i: int, chain: frozenset) -> int | None:
        if i in memo:
            return memo[i]
        found = None
        for k in nexts.get(i, []):
            if roles[k] == MAIN:
                found = k
                break
            if k in chain:
                continue
            found = find(k, chain | {i})
            if found is not None:
                break
        memo[i] = found
        return found

    owner: list[int | None] = [None] * len(roles)
    for i in range(len(roles)):
        if roles[i] != MAIN:
            owner[i] = find(i, frozenset())
            if owner[i] is None:
                roles[i] = MAIN
    return [o if roles[i] != MAIN else None for i, o in enumerate(owner)]


def _size(g: graph_pb2.GraphDef, s: int, kind: int, port: int) -> int:
    node = g.node[s]
    if kind == EdgeKindCode.CONTROL or "_output_shapes" not in node.attr:
        return 1
    shapes = node.attr["_output_shapes"].list.shape
    if port >= len(shapes) or shapes[port].unknown_rank:
        return 1
    size = 1
    for dim in shapes[port].dim:
        size *= dim.size if dim.size > 0 else 1
    return size


def expected(g: graph_pb2.GraphDef, options: SlimGraphOptions) -> dict:
    """What ``place_embeddings`` must produce for ``g``: roles, owners, base edges, listings."""
    edges = raw_edges(g)
    roles = candidate_roles(g, options, edges)
    owner = owners(roles, edges)

    def main_of(v: int) -> int:
        return v if roles[v] == MAIN else owner[v]

    base, touching = [], []
    in_list: dict[int, list[int]] = {}
    out_list: dict[int, list[int]] = {}

    def list_beside(listing, m, e):
        if e not in listing.setdefault(m, []):
            listing[m].append(e)

    for s, d, kind, port in edges:
        if roles[s] == MAIN and roles[d] == MAIN:
            base.append((s, d, kind, port, _size(g, s, kind, port)))
            continue
        touching.append((s, d, kind, port))
        if roles[s] == IN:
            list_beside(in_list, main_of(d), s)
        elif roles[d] == OUT and roles[s] == MAIN and owner[d] == s:
            list_beside(out_list, s, d)
        elif roles[s] == OUT and roles[d] != MAIN:
            pass
        elif main_of(s) != main_of(d):
            base.append((main_of(s), main_of(d), kind, port, _size(g, s, kind, port)))
    for i, role in enumerate(roles):
        if role != MAIN:
            list_beside(in_list if role == IN else out_list, owner[i], i)
    return {"roles": roles, "owner": owner, "base": base, "embedding_edges": touching,
            "in_embeddings": in_list, "out_embeddings": out_list}
