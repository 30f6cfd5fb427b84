"""Reference for ``graph.embeddings``: the plain per-edge Python loop it replaced.

The module under test vectorizes this with numpy; ``test_embeddings_reference`` checks
that both give the same roles, owners, base edges and listings on random graphs, chains
and cycles of embeddings included. Kept deliberately simple: one pass, dicts and lists.
"""

from __future__ import annotations

import re

from tb_graph_plugin.graph.edges import tensor_size
from tb_graph_plugin.graph.model import SlimGraph, SlimGraphOptions
from tb_graph_plugin.wire import EdgeKindCode, EmbeddingRole

EDGE_CONTROL = EdgeKindCode.CONTROL
MAIN, IN_EMBEDDING, OUT_EMBEDDING = EmbeddingRole.MAIN, EmbeddingRole.IN_EMBEDDING, EmbeddingRole.OUT_EMBEDDING

_DT_RESOURCE = 20
_HANDLE_OPS = frozenset({"_Arg", "Placeholder"})


def _is_resource_handle(slim: SlimGraph, i: int) -> bool:
    op = slim.ops[i]
    if op == "VarHandleOp":
        return True
    if op not in _HANDLE_OPS:
        return False
    node = slim.node_defs[i]
    if node is None:
        return False
    attr = node.attr
    key = "T" if op == "_Arg" else "dtype"
    return key in attr and attr[key].type == _DT_RESOURCE


def _roles(slim: SlimGraph, options: SlimGraphOptions, src_col, dst_col) -> list[int]:
    ops = slim.ops
    in_ops = set(options.in_embedding_ops)
    if options.embed_torch_noise:
        in_ops |= options.torch_noise_ops
    out_re = re.compile(options.out_embedding_pattern)
    by_op: dict[str, int] = {}
    for op in set(ops):
        by_op[op] = IN_EMBEDDING if op in in_ops else (OUT_EMBEDDING if out_re.match(op) else MAIN)
    roles = [by_op[op] for op in ops]
    handles = set()
    if options.embed_variable_reads:
        maybe = _HANDLE_OPS | {"VarHandleOp"}
        for i, op in enumerate(ops):
            if op in maybe and roles[i] == MAIN and _is_resource_handle(slim, i):
                roles[i] = IN_EMBEDDING
                handles.add(i)
    if handles:
        for s, d in zip(src_col, dst_col):
            if s in handles and ops[d] == "ReadVariableOp":
                roles[d] = IN_EMBEDDING
    return roles


def place_embeddings(slim: SlimGraph, options: SlimGraphOptions, src_col, dst_col, kind_col,
                     out_col) -> None:
    n = slim.n_nodes
    roles = _roles(slim, options, src_col, dst_col)
    consumers: dict[int, list[int]] = {}
    producers: dict[int, list[int]] = {}
    for s, d in zip(src_col, dst_col):
        if roles[s] == IN_EMBEDDING:
            consumers.setdefault(s, []).append(d)
        if roles[d] == OUT_EMBEDDING:
            producers.setdefault(d, []).append(s)

    owner = [-1] * n
    state = [0] * n  # 0 unseen, 1 in progress, 2 done

    def resolve(i: int) -> int:
        # Iterative resolution of the main op an embedding chain ends at.
        if roles[i] == MAIN:
            return i
        if state[i] == 2:
            return owner[i]
        stack = [i]
        while stack:
            j = stack[-1]
            if state[j] == 2:
                stack.pop()
                continue
            state[j] = 1
            nexts = consumers.get(j, ()) if roles[j] == IN_EMBEDDING else producers.get(j, ())
            found = -1
            pending = None
            for k in nexts:
                if roles[k] == MAIN:
                    found = k
                    break
                if state[k] == 2:
                    if owner[k] >= 0:
                        found = owner[k]
                        break
                elif state[k] == 0:
                    pending = k
                    break
            if found < 0 and pending is not None:
                stack.append(pending)
                continue
            owner[j] = found
            state[j] = 2
            stack.pop()
        return owner[i]

    for i in range(n):
        if roles[i] != MAIN and resolve(i) < 0:
            roles[i] = MAIN  # nothing to sit beside: stays in the main graph
    for i in range(n):
        if roles[i] == MAIN:
            owner[i] = -1
    slim.embedding = roles
    slim.owner = owner

    in_emb, out_emb = slim.in_embeddings, slim.out_embeddings
    shapes = slim.output_shapes
    e_src, e_dst, e_kind, e_out, e_size = (slim.edge_src, slim.edge_dst, slim.edge_kind,
                                           slim.edge_output, slim.edge_size)
    emb_edges = slim.embedding_edges
    # (main op * n + embedding) pairs already listed: a NoOp fed by thousands of variable
    # reads would make a list-membership test quadratic.
    listed: set[int] = set()
    for s, d, k, o in zip(src_col, dst_col, kind_col, out_col):
        rs, rd = roles[s], roles[d]
        if rs == MAIN and rd == MAIN:
            src, dst = s, d
        else:
            emb_edges.append((s, d, k, o))
            if rs == IN_EMBEDDING:
                m = d if rd == MAIN else owner[d]
                key = m * n + s
                if key not in listed:
                    listed.add(key)
                    in_emb.setdefault(m, []).append(s)
                continue
            if rd == OUT_EMBEDDING and rs == MAIN and owner[d] == s:
                key = s * n + d
                if key not in listed:
                    listed.add(key)
                    out_emb.setdefault(s, []).append(d)
                continue
            if rs == OUT_EMBEDDING and rd != MAIN:
                continue
            src = s if rs == MAIN else owner[s]
            dst = d if rd == MAIN else owner[d]
            if src == dst:
                continue
        e_src.append(src)
        e_dst.append(dst)
        e_kind.append(k)
        e_out.append(o)
        if k == EDGE_CONTROL:
            e_size.append(1)
        else:
            sh = shapes[s]
            e_size.append(tensor_size(sh[o]) if sh is not None and 0 <= o < len(sh) else 1)
    # Every embedding is listed beside at least its owner.
    for i in range(n):
        r = roles[i]
        if r == MAIN:
            continue
        m = owner[i]
        key = m * n + i
        if key not in listed:
            listed.add(key)
            (in_emb if r == IN_EMBEDDING else out_emb).setdefault(m, []).append(i)
