"""Phase 3 of GraphDef -> SlimGraph: turn input strings into edges.

Follows the stock dashboard ([TB-GRAPH-DOC] "Add edges"; [TB-SRC] ``graph.ts``):
``^x`` is a control edge from ``x``; ``x:N`` (and function-style ``x:out_arg:N``) is output
``N`` of ``x``; input 0 of the stock reference ops (``Assign``, ``ScatterAdd``, ...) is a
reference edge; anything else is a data edge. Edge size is the product of the source
output's dims (unknown dims count 1), 1 without shape info. Inputs naming an absent node
are kept in ``slim.dangling`` (reported, no edge). Cycles (while loops) are allowed.

Pre-condition: ``slim.index`` built (phase 2); ``inputs`` are every op's raw inputs, op after
op, each op's preceded by a marker (``graph.nodes``: a value no name and no real input equals).
Post-condition: returns the raw edge columns ``(src, dst, kind, output)`` (int sequences: numpy
arrays on the fast path), one per resolvable input, in op order then input order;
``slim.dangling`` lists the others.

Cost (fast path): one dict lookup per input and per marker, and one more per input that is not a
node's name (``^x``, ``x:N``, dangling), in C-level maps; Python only for ``x:N`` and dangling inputs. The
lookups are most of it (at 1M ops, ~0.4 s CPU for 1.4M inputs: cache misses in a 1M-key dict).
"""

from __future__ import annotations

from itertools import repeat
from operator import is_not

import numpy as np

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


_MARKED = -2  # what the fast path's lookups give a marker


def read_edges(slim: SlimGraph, inputs: list, marker):
    """Resolve every input string of every op; return parallel edge columns.

    ``inputs`` are every op's raw inputs, op after op, each op's preceded by ``marker`` (a value
    no node name and no real input equals; ``graph.nodes``). Fast path: when no node name
    contains ``:`` or starts with ``^``, an input that is itself a node name is output 0 of that
    node, so one dict lookup per input resolves most of them, and finds the markers (looked up
    as ``_MARKED`` while it runs); only control inputs, ``x:N`` and dangling names take the parser.
    """
    index = slim.index
    names = slim.original_names
    joined = "".join(names)
    if ":" in joined or ("^" in joined and any(map(str.startswith, names, repeat("^")))):
        return _read_edges_slow(slim, inputs, marker)
    if marker in index:
        raise ValueError(f"an op is named like the input marker {marker!r}")
    index[marker] = _MARKED
    try:
        found = np.fromiter(map(index.get, inputs, repeat(-1)), dtype=np.int64, count=len(inputs))
    finally:
        del index[marker]
    is_marker = found == _MARKED
    src_col = found[~is_marker]
    starts = np.flatnonzero(is_marker)  # op k's marker is at starts[k]: its inputs follow
    dst_col = np.repeat(np.arange(len(starts), dtype=np.int64), np.diff(starts, append=len(inputs)) - 1)
    n_in = len(src_col)
    kind_col = np.full(n_in, int(EdgeKindCode.DATA), dtype=np.int64)
    out_col = np.zeros(n_in, dtype=np.int64)
    ops = slim.ops
    if REFERENCE_EDGE_OPS.intersection(ops):  # input 0 of a reference op: right after its marker
        ref = np.flatnonzero(np.fromiter(map(REFERENCE_EDGE_OPS.__contains__, ops), dtype=bool, count=len(ops)))
        first = starts[ref] + 1
        has = first < len(inputs)
        ref, first = ref[has], first[has]
        has = ~is_marker[first]
        kind_col[first[has] - ref[has] - 1] = int(EdgeKindCode.REFERENCE)  # op k's follow k + 1 markers
    misses = np.flatnonzero(src_col < 0).tolist()
    if not misses:
        return src_col, dst_col, kind_col, out_col
    # control inputs (``^x``) first, in C-level passes; then ``x:N`` and names of absent nodes
    get = index.get
    # a miss's position in ``inputs``: after its op's marker and those of the ops before
    raws = list(map(inputs.__getitem__, (np.asarray(misses, dtype=np.int64) + dst_col[misses] + 1).tolist()))
    stripped = list(map(str.removeprefix, raws, repeat("^")))  # the same object when not a control input
    controls = np.fromiter(map(get, stripped, repeat(-1)), dtype=np.int64, count=len(raws))
    found = (controls >= 0) & np.fromiter(map(is_not, stripped, raws), dtype=bool, count=len(raws))
    at = np.asarray(misses, dtype=np.int64)[found]
    src_col[at], kind_col[at], out_col[at] = controls[found], int(EdgeKindCode.CONTROL), -1
    dangling = slim.dangling
    keep = np.ones(n_in, dtype=bool)
    for k in np.flatnonzero(~found).tolist():
        e, raw = misses[k], raws[k]
        if raw[:1] == "^":
            name, out, kind = raw[1:], -1, int(EdgeKindCode.CONTROL)
        else:
            name, out, _ = parse_input(raw)
            kind = kind_col[e]
        src = get(name)
        if src is None:
            dangling.append(DanglingInput(int(dst_col[e]), raw))
            keep[e] = False
            continue
        src_col[e], kind_col[e], out_col[e] = src, kind, out
    if not keep.all():  # drop the dangling inputs
        return src_col[keep], dst_col[keep], kind_col[keep], out_col[keep]
    return src_col, dst_col, kind_col, out_col


def _read_edges_slow(slim: SlimGraph, inputs: list, marker):
    """Input by input (node names holding ``:`` or starting with ``^``)."""
    index = slim.index
    ops = slim.ops
    src_col, dst_col, kind_col, out_col = [], [], [], []
    dangling = slim.dangling
    dst, pos, ref_op = -1, 0, False
    for raw in inputs:
        if raw == marker:  # the next op's inputs
            dst, pos = dst + 1, 0
            ref_op = ops[dst] in REFERENCE_EDGE_OPS
            continue
        if raw.startswith("^"):
            name, out, kind = raw[1:], -1, EdgeKindCode.CONTROL
        elif ":" in raw:
            name, out, _ = parse_input(raw)
            kind = EdgeKindCode.REFERENCE if (ref_op and pos == 0) else EdgeKindCode.DATA
        else:
            name, out = raw, 0
            kind = EdgeKindCode.REFERENCE if (ref_op and pos == 0) else EdgeKindCode.DATA
        pos += 1
        src = index.get(name)
        if src is None:
            dangling.append(DanglingInput(dst, raw))
            continue
        src_col.append(src)
        dst_col.append(dst)
        kind_col.append(kind)
        out_col.append(out)
    return src_col, dst_col, kind_col, out_col
