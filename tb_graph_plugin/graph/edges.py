"""Phase 3 of GraphDef -> SlimGraph: turn input strings into edges.

Follows the stock dashboard ([TB-GRAPH-DOC] "Add edges"; [TB-SRC] ``graph.ts``):
``^x`` is a control edge from ``x``; ``x:N`` (and function-style ``x:out_arg:N``) is output
``N`` of ``x``; input 0 of the stock reference ops (``Assign``, ``ScatterAdd``, ...) is a
reference edge; anything else is a data edge. Edge size is the product of the source
output's dims (unknown dims count 1), 1 without shape info. Inputs naming an absent node
are kept in ``slim.dangling`` (reported, no edge). Cycles (while loops) are allowed.

Pre-condition: ``slim.index`` built (phase 2); ``inputs`` are every op's raw inputs, op after
op, ``counts[i]`` of them op ``i``'s.
Post-condition: returns the raw edge columns ``(src, dst, kind, output)``, one per
resolvable input, in op order then input order; ``slim.dangling`` lists the others.
"""

from __future__ import annotations

from itertools import accumulate, chain, repeat

from tb_graph_plugin.graph.model import REFERENCE_EDGE_OPS, DanglingInput, SlimGraph
from tb_graph_plugin.wire import EdgeKindCode

__all__ = ["parse_input", "read_edges", "tensor_size"]


def parse_input(raw: str) -> tuple[str, int, bool]:
    """``"^a/b"`` -> ``("a/b", -1, True)``; ``"a:2"`` -> ``("a", 2, False)``."""
    if raw.startswith("^"):
        return raw[1:], -1, True
    j = raw.rfind(":")
    if j > 0 and raw[j + 1:].isdigit():
        name = raw[:j]
        k = name.find(":")
        if k > 0:  # function-style node:output_arg:index
            name = name[:k]
        return name, int(raw[j + 1:]), False
    return raw, 0, False


# Element counts are capped (2**40, a 4 TiB float32 tensor; no real one is larger), so that a
# hostile or corrupt shape (dims of 2**63 - 1) cannot overflow the int64 sums of MetaEdge sizes:
# up to 2**23 edges of the cap still fit.
MAX_TENSOR_SIZE = 1 << 40


def tensor_size(shape) -> int:
    """Elements of a tensor of ``shape`` (unknown dims count as 1), at most ``MAX_TENSOR_SIZE``."""
    if not shape:
        return 1
    size = 1
    for d in shape:
        if d > 0:
            size = min(size * d, MAX_TENSOR_SIZE)
    return size


def read_edges(slim: SlimGraph, inputs: list[str], counts: list[int]):
    """Resolve every input string of every op; return parallel edge columns.

    ``inputs`` are every op's raw inputs, op after op, ``counts[i]`` how many are op ``i``'s.
    Fast path: when no node name contains ``:`` or starts with ``^``, an input that is
    itself a node name is output 0 of that node, so one dict lookup per input resolves
    most of them; only control inputs, ``x:N`` and dangling names take the parser.
    """
    index = slim.index
    joined = "\n".join(slim.original_names)
    if ":" in joined or joined.startswith("^") or "\n^" in joined:
        return _read_edges_slow(slim, inputs, counts)
    dst_col = list(chain.from_iterable(map(repeat, range(len(counts)), counts)))
    starts = list(accumulate(counts, initial=0))
    src_col = list(map(index.get, inputs, repeat(-1)))
    kind_col = [EdgeKindCode.DATA] * len(src_col)
    out_col = [0] * len(src_col)
    ops = slim.ops
    if REFERENCE_EDGE_OPS.intersection(ops):
        for dst, n_in in enumerate(counts):
            if n_in and ops[dst] in REFERENCE_EDGE_OPS:
                kind_col[starts[dst]] = EdgeKindCode.REFERENCE
    get = index.get
    dangling = slim.dangling
    missing = False
    for e in [e for e, src in enumerate(src_col) if src < 0]:
        dst = dst_col[e]
        raw = inputs[e]
        if raw.startswith("^"):
            name, out, kind = raw[1:], -1, EdgeKindCode.CONTROL
        else:
            name, out, _ = parse_input(raw)
            kind = kind_col[e]
        src = get(name)
        if src is None:
            dangling.append(DanglingInput(dst, raw))
            missing = True
            continue
        src_col[e] = src
        kind_col[e] = kind
        out_col[e] = out
    if missing:  # drop the dangling inputs (src still -1)
        keep = [e for e, src in enumerate(src_col) if src >= 0]
        return tuple([c[e] for e in keep] for c in (src_col, dst_col, kind_col, out_col))
    return src_col, dst_col, kind_col, out_col


def _read_edges_slow(slim: SlimGraph, inputs: list[str], counts: list[int]):
    """Input by input (node names holding ``:`` or starting with ``^``)."""
    index = slim.index
    ops = slim.ops
    src_col, dst_col, kind_col, out_col = [], [], [], []
    dangling = slim.dangling
    starts = accumulate(counts, initial=0)
    for dst, (start, n_in) in enumerate(zip(starts, counts)):
        if not n_in:
            continue
        ref_op = ops[dst] in REFERENCE_EDGE_OPS
        for pos in range(n_in):
            raw = inputs[start + pos]
            if raw.startswith("^"):
                name, out, kind = raw[1:], -1, EdgeKindCode.CONTROL
            elif ":" in raw:
                name, out, _ = parse_input(raw)
                kind = EdgeKindCode.REFERENCE if (ref_op and pos == 0) else EdgeKindCode.DATA
            else:
                name, out = raw, 0
                kind = EdgeKindCode.REFERENCE if (ref_op and pos == 0) else EdgeKindCode.DATA
            src = index.get(name)
            if src is None:
                dangling.append(DanglingInput(dst, raw))
                continue
            src_col.append(src)
            dst_col.append(dst)
            kind_col.append(kind)
            out_col.append(out)
    return src_col, dst_col, kind_col, out_col
