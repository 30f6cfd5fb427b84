"""Phase 4 of GraphDef -> SlimGraph: embeddings beside their op, and the base edges.

Follows the stock dashboard ([TB-GRAPH-DOC]: "Consider all 'Const' ops as in-embedding
nodes, all '*Summary' ops as out-embedding nodes ... move the inputs of the in-embedding
into incoming edges of the main node") and [VAST] §5.2 ("Extract Non-Critical Operations": weights drawn
beside the op that uses them), extended to the noise of today's writers:

* in-embeddings: ``Const``; PyTorch ``prim::GetAttr`` / ``prim::ListConstruct`` /
  ``prim::Constant`` / ``prim::TupleConstruct``; TF2 variable handles (resource-typed
  ``_Arg`` / ``Placeholder``, ``VarHandleOp``) and the ``ReadVariableOp`` reading one.
  The owner is the first consumer that is (or is owned by) a main op.
* out-embeddings: ``^[a-zA-Z]+Summary$``; the owner is the first producer that resolves.
* A candidate with nothing to resolve to (a Const nobody reads) stays a main op.

Pre-condition: raw edge columns from phase 3.
Post-condition: ``slim.embedding``/``slim.owner`` set for every op, ``owner[i]`` is a MAIN
op for every embedding; ``slim.in_embeddings``/``out_embeddings`` list embeddings beside
main ops; base edges join two MAIN ops, distinct unless the GraphDef itself has a self
loop (an edge into an embedding is re-targeted to its owner; an edge out of an
in-embedding is not a base edge); every raw edge touching an embedding is also kept in
``slim.embedding_edges``.

Cost: O(V + E) numpy passes over the raw edge columns (and log2 of the longest chain of
embeddings feeding embeddings); Python loops only over the ops whose chain of first consumers
(producers) ends nowhere or in a cycle, over the base edges out of ops with shapes, and over
the ``_Arg`` / ``Placeholder`` ops (a NodeDef parse each: is it a resource handle?). The
Python objects made (the listings' dict and its lists) are the rest; every other output is a
numpy column.
"""

from __future__ import annotations

import re
from collections import defaultdict
from itertools import compress

import numpy as np

from tb_graph_plugin.graph.columns import EmbeddingEdges, OpLists
from tb_graph_plugin.graph.edges import tensor_size
from tb_graph_plugin.graph.model import SlimGraph, SlimGraphOptions
from tb_graph_plugin.wire import EdgeKindCode, EmbeddingRole

__all__ = ["place_embeddings"]

_DT_RESOURCE = 20
_HANDLE_OPS = frozenset({"_Arg", "Placeholder"})
# The attr map entry {key: "T" (_Arg) / "dtype" (Placeholder), value: {type: DT_RESOURCE}} as every
# protobuf serializer writes it (NodeDef.attr is field 5; the entry's key field 1, value field 2;
# AttrValue.type field 6): found in a kept encoding, the op is a handle without a parse.
_RESOURCE_ATTR = {
    "_Arg": b"\x2a\x07\x0a\x01T\x12\x02\x30\x14",
    "Placeholder": b"\x2a\x0b\x0a\x05dtype\x12\x02\x30\x14",
}


def _is_resource_handle(slim: SlimGraph, i: int) -> bool:
    op = slim.ops[i]
    if op == "VarHandleOp":
        return True
    if op not in _HANDLE_OPS:
        return False
    encoding = slim.node_defs.encoding(i)
    if encoding is not None and _RESOURCE_ATTR[op] in encoding:
        return True  # else parsed: an attr written otherwise (or none) is read, not guessed
    node = slim.node_defs[i]
    if node is None:
        return False
    attr = node.attr
    key = "T" if op == "_Arg" else "dtype"
    return key in attr and attr[key].type == _DT_RESOURCE


def _roles(slim: SlimGraph, options: SlimGraphOptions, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Candidate role of every op (by op type; variable handles and their reads)."""
    ops = slim.ops
    in_ops = set(options.in_embedding_ops)
    if options.embed_torch_noise:
        in_ops |= options.torch_noise_ops
    out_re = re.compile(options.out_embedding_pattern)
    code_of: defaultdict = defaultdict()  # op type -> its code, in order of first appearance: one pass
    code_of.default_factory = code_of.__len__
    codes = np.fromiter(map(code_of.__getitem__, ops), dtype=np.int32, count=len(ops))
    by_code = np.array([EmbeddingRole.IN_EMBEDDING if op in in_ops
                        else (EmbeddingRole.OUT_EMBEDDING if out_re.match(op) else EmbeddingRole.MAIN)
                        for op in code_of], dtype=np.int8)
    roles = by_code[codes] if len(ops) else np.zeros(0, dtype=np.int8)
    if options.embed_variable_reads:
        maybe = [code_of[op] for op in _HANDLE_OPS | {"VarHandleOp"} if op in code_of]
        handles = np.zeros(len(ops), dtype=bool)
        for i in np.flatnonzero(np.isin(codes, maybe) & (roles == EmbeddingRole.MAIN)).tolist():
            if _is_resource_handle(slim, i):
                handles[i] = True
        if handles.any():
            roles[handles] = EmbeddingRole.IN_EMBEDDING
            read = code_of.get("ReadVariableOp")
            if read is not None:
                roles[dst[handles[src] & (codes[dst] == read)]] = EmbeddingRole.IN_EMBEDDING
    return roles


def _first_other_end(ends_from: np.ndarray, ends_to: np.ndarray, mask: np.ndarray, n: int):
    """For each op: the other end of its first edge among ``mask`` (-1 if none)."""
    first = np.full(n, -1, dtype=np.int64)
    idx = np.flatnonzero(mask)
    if len(idx):
        heads, pos = np.unique(ends_from[idx], return_index=True)
        first[heads] = ends_to[idx[pos]]
    return first


def _owners(roles: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Main op each embedding sits beside; embeddings with none become MAIN (in ``roles``).

    An in-embedding's owner is its first consumer that is (or is owned by) a main op; an
    out-embedding's, its first producer. The usual case - the first consumer (producer)
    is a main op - is read off with numpy, and so are chains of first consumers ending at
    one (``_follow_first_chains``); embeddings with no consumer (producer) at all, when they
    are all that is left, stay main ops; anything else follows the chain in op order, exactly
    as a depth-first walk from each op in id order would (``_walk_owners``: an embedding
    found ownerless becomes a main op as the walk passes it, which later ops then see).
    """
    n = len(roles)
    owner = np.full(n, -1, dtype=np.int64)
    r_src, r_dst = roles[src], roles[dst]
    first_in = _first_other_end(src, dst, r_src == EmbeddingRole.IN_EMBEDDING, n)
    first_out = _first_other_end(dst, src, r_dst == EmbeddingRole.OUT_EMBEDDING, n)
    first = np.where(roles == EmbeddingRole.IN_EMBEDDING, first_in,
                     np.where(roles == EmbeddingRole.OUT_EMBEDDING, first_out, -1))
    done = (roles != EmbeddingRole.MAIN) & (first >= 0)
    done[done] = roles[first[done]] == EmbeddingRole.MAIN  # first consumer/producer is a main op
    owner[done] = first[done]
    rest = np.flatnonzero((roles != EmbeddingRole.MAIN) & ~done)
    if len(rest):
        _follow_first_chains(roles, owner, done, first, rest)
        rest = rest[~done[rest]]
    if len(rest) and (first[rest] < 0).all():  # no consumer (producer) at all: nothing to sit beside
        roles[rest] = EmbeddingRole.MAIN
    elif len(rest):
        _walk_owners(roles, owner, done, rest.tolist(), src, dst, r_src, r_dst)
    return owner


def _follow_first_chains(roles, owner, done, first, rest) -> None:
    """Resolve the ops of ``rest`` whose chain of first consumers (producers) through
    embeddings ends at a main op: each gets that op, by pointer doubling (log2 of the longest
    chain numpy passes). The walk would give the same: from any op of such a chain it follows
    the chain (each first consumer is unseen, done or main), so no op of it is ever seen in
    progress and the order of the walk does not matter. Chains ending nowhere or in a cycle
    are left to the walk."""
    hop = np.arange(len(roles))  # main ops and dead ends are fixed points
    hop[done] = owner[done]
    live = rest[first[rest] >= 0]
    hop[live] = first[live]
    for _ in range(len(roles).bit_length() + 1):
        nxt = hop[hop]
        if np.array_equal(nxt[rest], hop[rest]):
            break
        hop = nxt
    end = hop[rest]
    found = rest[roles[end] == EmbeddingRole.MAIN]
    owner[found] = hop[found]
    done[found] = True


def _walk_owners(roles, owner, done, rest, src, dst, r_src, r_dst) -> None:
    need = np.zeros(len(roles), dtype=bool)
    need[rest] = True
    consumers: dict[int, list[int]] = {}
    producers: dict[int, list[int]] = {}
    sel = need[src] & (r_src == EmbeddingRole.IN_EMBEDDING)
    for s, d in zip(src[sel].tolist(), dst[sel].tolist()):
        consumers.setdefault(s, []).append(d)
    sel = need[dst] & (r_dst == EmbeddingRole.OUT_EMBEDDING)
    for s, d in zip(src[sel].tolist(), dst[sel].tolist()):
        producers.setdefault(d, []).append(s)
    role = roles.tolist()
    own = owner.tolist()
    main, in_embedding = EmbeddingRole.MAIN, EmbeddingRole.IN_EMBEDDING  # locals for the walk
    state = np.where(done, 2, 0).tolist()  # 0 unseen, 1 in progress, 2 done

    def resolve(i: int) -> int:
        if state[i] == 2:
            return own[i]
        stack = [i]
        while stack:
            j = stack[-1]
            if state[j] == 2:
                stack.pop()
                continue
            state[j] = 1
            nexts = consumers.get(j, ()) if role[j] == in_embedding else producers.get(j, ())
            found = -1
            pending = None
            for k in nexts:
                if role[k] == main:
                    found = k
                    break
                if state[k] == 2:
                    if own[k] >= 0:
                        found = own[k]
                        break
                elif state[k] == 0:
                    pending = k
                    break
            if found < 0 and pending is not None:
                stack.append(pending)
                continue
            own[j] = found
            state[j] = 2
            stack.pop()
        return own[i]

    for i in rest:
        if role[i] != main and resolve(i) < 0:
            role[i] = main  # nothing to sit beside: stays in the main graph
            roles[i] = main
    for i in rest:
        owner[i] = own[i] if role[i] != main else -1


def _grouped(keys: np.ndarray, values: np.ndarray, n: int) -> OpLists:
    """The (key, value) pairs as a list of values per key (op ids below ``n``): first
    occurrences only, each key's values in order of their first appearance."""
    starts = np.zeros(n + 1, dtype=np.int64)
    if not len(keys):
        return OpLists(starts, np.zeros(0, dtype=np.int64))
    pairs, first = np.unique(keys * n + values, return_index=True)  # by key, then value
    key = pairs // n
    order = np.lexsort((first, key))  # by key, then first appearance
    np.cumsum(np.bincount(key, minlength=n), out=starts[1:])
    return OpLists(starts, pairs[order] % n)


def _edge_sizes(slim: SlimGraph, src: np.ndarray, kind: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Each base edge's tensor size: 1, except the non-control edges out of an op with shapes
    (looked at one by one: usually a few ops, or every op of a TF1 graph written with shapes)."""
    sizes = np.ones(len(src), dtype=np.int64)
    if not slim.has_shape_info:
        return sizes
    shapes = slim.output_shapes
    shaped = np.zeros(len(shapes), dtype=bool)
    shaped[list(compress(range(len(shapes)), shapes))] = True  # C-level; an empty list of shapes sizes nothing
    at = np.flatnonzero(shaped[src] & (kind != EdgeKindCode.CONTROL))
    got = []
    for s, o in zip(src[at].tolist(), out[at].tolist()):
        sh = shapes[s]
        got.append(tensor_size(sh[o]) if 0 <= o < len(sh) else 1)
    sizes[at] = got
    return sizes


def place_embeddings(slim: SlimGraph, options: SlimGraphOptions, src_col, dst_col, kind_col, out_col) -> None:
    """Set roles, owners, base edges and the embedding lists of ``slim`` (module docstring) from
    the raw edge columns."""
    n = slim.n_nodes
    src = np.asarray(src_col, dtype=np.int64).reshape(-1)
    dst = np.asarray(dst_col, dtype=np.int64).reshape(-1)
    kind = np.asarray(kind_col, dtype=np.int64).reshape(-1)
    out = np.asarray(out_col, dtype=np.int64).reshape(-1)
    roles = _roles(slim, options, src, dst)
    owner = _owners(roles, src, dst)
    slim.embedding = roles
    slim.owner = owner

    r_src, r_dst = roles[src], roles[dst]
    o_src, o_dst = owner[src], owner[dst]
    main_src, main_dst = r_src == EmbeddingRole.MAIN, r_dst == EmbeddingRole.MAIN
    other = ~(main_src & main_dst)
    emb = np.flatnonzero(other)
    slim.embedding_edges = EmbeddingEdges(src[emb], dst[emb], kind[emb], out[emb])
    # An in-embedding is listed beside the op it feeds (or that op's owner), not a base edge.
    listed_in = other & (r_src == EmbeddingRole.IN_EMBEDDING)
    # An out-embedding is listed beside its producer when that producer is its owner.
    listed_out = other & ~listed_in & (r_dst == EmbeddingRole.OUT_EMBEDDING) & main_src & (o_dst == src)
    dropped = other & (r_src == EmbeddingRole.OUT_EMBEDDING) & ~main_dst
    e_src = np.where(main_src, src, o_src)
    e_dst = np.where(main_dst, dst, o_dst)
    # a re-targeted edge inside one op's embeddings vanishes; a main op's own self loop stays
    base = ~other | (~(listed_in | listed_out | dropped) & (e_src != e_dst))
    slim.edge_src = e_src[base]
    slim.edge_dst = e_dst[base]
    slim.edge_kind = kind[base]
    slim.edge_output = out[base]
    slim.edge_size = _edge_sizes(slim, src[base], slim.edge_kind, slim.edge_output)  # the raw source's shapes

    # Every embedding is listed beside at least its owner (after the ops it feeds).
    every = np.arange(n, dtype=np.int64)
    own_in, own_out = roles == EmbeddingRole.IN_EMBEDDING, roles == EmbeddingRole.OUT_EMBEDDING
    slim.in_embeddings = _grouped(
        np.concatenate([np.where(main_dst, dst, o_dst)[listed_in], owner[own_in]]),
        np.concatenate([src[listed_in], every[own_in]]), n)
    slim.out_embeddings = _grouped(
        np.concatenate([src[listed_out], owner[own_out]]),
        np.concatenate([dst[listed_out], every[own_out]]), n)
