"""Where a pattern of ops occurs in a SlimGraph: ``(MatMul|BatchMatMulV2) -> * -> Softmax``.

Syntax: steps joined by ``->``. A step is an RE2 regex ([RE2]) over an op's **type** (the
default, or ``op:``), its **label** (``label:``, what is drawn: ``graph.labels.op_label``) or its
**name** (``name:``), ignoring case (``(?-i)`` turns case back on). A type or label step matches the
whole text (``MatMul`` is not ``BatchMatMulV2``; a type also matches without its namespace:
``linear`` is ``aten::linear``); a name step matches anywhere in the name, as the search box does.
``*`` is a gap of 0 to 3 ops of any type, ``*N`` of 0 to N (N <= ``MAX_GAP``); gaps stand between
steps only. A **match** is a path along data edges between main ops (the SlimGraph's base edges,
control edges left out): one op per step in order, each edge from one to the next, a gap's ops
between. Matches that end at the same op are one match (its path is the one found first); so a
pattern ending at a ``Softmax`` counts each softmax once, however many matmuls reach it.

Algorithm: the ops each step's regex matches, as boolean columns (a type or label regex is run once
per distinct text); then, step by step, the set of ops where a partial match ends is pushed along
the edges (one vectorised pass over the edge columns per gap position): ``O(steps x (gap + 1) x
edges)``, no backtracking; each reported match's path is read back from the kept sets, one
predecessor per op ([RE2] keeps each regex linear too).

Pre: a built SlimGraph. Post: ``total`` counts the distinct last ops of every match; ``matches``
holds the paths (op ids, first step first) of the first ``limit`` of them in op id order; each
path's consecutive ops are joined by a base edge, its ops at step positions match their steps.

>>> from tensorboard.compat.proto import graph_pb2
>>> from tb_graph_plugin.graph import build_slim_graph
>>> g = graph_pb2.GraphDef()
>>> for name, op, inputs in [("x", "Placeholder", []), ("q", "MatMul", ["x"]), ("k", "MatMul", ["x"]),
...                          ("s", "BatchMatMulV2", ["q", "k"]), ("m", "Mul", ["s"]), ("p", "Softmax", ["m"])]:
...     _ = g.node.add(name=name, op=op, input=inputs)
>>> slim = build_slim_graph(g)
>>> found = find_pattern(slim, "MatMul -> * -> Softmax")
>>> found.total, [[slim.names[i] for i in path] for path in found.matches]
(1, [['q', 's', 'm', 'p']])
"""

from __future__ import annotations

import dataclasses
import re
from typing import Optional

import numpy as np
import re2
from re2 import _re2

from tb_graph_plugin.graph.labels import op_label
from tb_graph_plugin.wire import EdgeKindCode, EmbeddingRole

__all__ = ["PatternError", "PatternMatches", "parse_pattern", "find_pattern", "MAX_STEPS", "MAX_GAP", "DEFAULT_GAP"]

MAX_STEPS = 16
MAX_GAP = 16
DEFAULT_GAP = 3
MAX_PATTERN_CHARS = 1000
_GAP = re.compile(r"^\*(\d*)$")
_FIELDS = ("op", "label", "name")


class PatternError(ValueError):
    """A pattern that cannot be read: the message says why (the route's 400)."""


@dataclasses.dataclass
class Step:
    field: str  # "op", "label" or "name"
    regex: str
    gap_before: int = 0  # ops of any type allowed between the previous step and this one


@dataclasses.dataclass
class PatternMatches:
    total: int  # distinct last ops of every match
    matches: list  # the first ``limit`` paths, op ids, first step first


def _compile(regex: str, anchored: bool):
    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    options.case_sensitive = False
    program = _re2.RE2(regex.encode("utf-8", "surrogatepass"), options)
    if not program.ok():
        reason = program.error().decode("utf-8", "replace")
        raise PatternError(f"bad regex {regex!r} in the pattern: {reason} (RE2 syntax: no backreferences or look-around)")
    anchor = _re2.RE2.Anchor.ANCHOR_BOTH if anchored else _re2.RE2.Anchor.UNANCHORED

    def hit(text: str) -> bool:
        b = text.encode("utf-8", "surrogatepass")
        return program.Match(anchor, b, 0, len(b))[0] != (-1, -1)
    return hit


def parse_pattern(pattern: str) -> list[Step]:
    """The steps of ``pattern`` (module docstring), or ``PatternError`` saying what is wrong.

    >>> [(s.field, s.regex, s.gap_before) for s in parse_pattern("aten::linear -> *2 -> label:gelu")]
    [('op', 'aten::linear', 0), ('label', 'gelu', 2)]
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"a pattern of {len(pattern)} characters is longer than the limit of {MAX_PATTERN_CHARS}")
    steps: list[Step] = []
    gap = 0
    parts = [p.strip() for p in pattern.split("->")]
    for k, part in enumerate(parts):
        if not part:
            raise PatternError(f"step {k + 1} of the pattern is empty (steps are joined by '->')")
        m = _GAP.match(part)
        if m:
            n = int(m.group(1)) if m.group(1) else DEFAULT_GAP
            if n > MAX_GAP:
                raise PatternError(f"a gap of {n} ops is longer than the limit of {MAX_GAP}")
            if not steps:
                raise PatternError("a pattern starts with a step, not a gap ('*')")
            gap += n
            continue
        field, regex = "op", part
        head, sep, rest = part.partition(":")
        if sep and head.strip().lower() in _FIELDS and not rest.startswith(":"):
            field, regex = head.strip().lower(), rest.strip()
        steps.append(Step(field, regex, gap))
        gap = 0
    if gap:
        raise PatternError("a pattern ends with a step, not a gap ('*')")
    if len(steps) > MAX_STEPS:
        raise PatternError(f"a pattern of {len(steps)} steps is longer than the limit of {MAX_STEPS}")
    return steps


def _codes(texts: list[str]) -> tuple[list[str], np.ndarray]:
    distinct: dict[str, int] = {}
    codes = np.fromiter((distinct.setdefault(t, len(distinct)) for t in texts), np.int64, len(texts))
    return list(distinct), codes


class _Columns:
    """What matching reads of a SlimGraph, made once (kept on it as ``slim.pattern_memo``)."""

    def __init__(self, slim):
        n = slim.n_nodes
        self.main = slim.embedding == EmbeddingRole.MAIN
        data = slim.edge_kind != EdgeKindCode.CONTROL
        self.src, self.dst = slim.edge_src[data], slim.edge_dst[data]
        order = np.argsort(self.dst, kind="stable")
        self.pred_src = self.src[order]  # predecessors of op v: pred_src[pred_start[v]:pred_start[v + 1]]
        self.pred_start = np.searchsorted(self.dst[order], np.arange(n + 1))
        self.types, self.type_codes = _codes(slim.ops)
        self._slim = slim
        self._labels: Optional[tuple] = None

    def labels(self) -> tuple[list[str], np.ndarray]:
        if self._labels is None:
            slim = self._slim
            self._labels = _codes([op_label(name, op) for name, op in zip(slim.names, slim.ops)])
        return self._labels


def _columns(slim) -> _Columns:
    memo = getattr(slim, "pattern_memo", None)
    if memo is None:
        memo = slim.pattern_memo = _Columns(slim)
    return memo


def _short(op_type: str) -> str:
    """``aten::add.Tensor`` -> ``add``: the type without its namespace and overload."""
    short = op_type.rsplit("::", 1)[-1]
    return short.split(".", 1)[0] if "::" in op_type else short


def _mask(slim, cols: _Columns, step: Step) -> np.ndarray:
    if step.field == "name":
        hit = _compile(step.regex, anchored=False)
        return np.fromiter((hit(name) for name in slim.names), bool, slim.n_nodes) & cols.main
    hit = _compile(step.regex, anchored=True)
    if step.field == "op":
        table = np.array([hit(t) or hit(_short(t)) for t in cols.types], bool)
        return table[cols.type_codes] & cols.main
    texts, codes = cols.labels()
    return np.array([hit(t) for t in texts], bool)[codes] & cols.main


def find_pattern(slim, pattern: str, limit: int = 200) -> PatternMatches:
    """Every match of ``pattern`` in ``slim`` (module docstring); ``PatternError`` for a bad one."""
    steps = parse_pattern(pattern)
    cols = _columns(slim)
    n = slim.n_nodes
    ends = [_mask(slim, cols, steps[0])]  # ends[s]: ops where a match of steps 0..s ends
    reached: list[list[np.ndarray]] = []  # reached[s - 1][j]: ops j + 1 edges after ends[s - 1]
    for step in steps[1:]:
        target = _mask(slim, cols, step)
        cur, found, layers = ends[-1], np.zeros(n, bool), []
        for _ in range(step.gap_before + 1):
            nxt = np.zeros(n, bool)
            nxt[cols.dst[cur[cols.src]]] = True
            layers.append(nxt)
            found |= nxt & target
            cur = nxt
            if not cur.any():
                break
        reached.append(layers)
        ends.append(found)
    last = np.flatnonzero(ends[-1])
    return PatternMatches(total=len(last), matches=[_path(cols, ends, reached, int(v)) for v in last[:limit]])


def _pred(cols: _Columns, v: int, among: np.ndarray) -> int:
    preds = cols.pred_src[cols.pred_start[v]:cols.pred_start[v + 1]]
    return int(preds[among[preds]].min())


def _path(cols: _Columns, ends: list, reached: list, v: int) -> list[int]:
    """The path of the match ending at ``v``: back through the kept sets, the lowest op id each time."""
    back = [v]
    for s in range(len(ends) - 1, 0, -1):
        layers = reached[s - 1]
        j = next(j for j, layer in enumerate(layers) if layer[v])  # the fewest gap ops
        for k in range(j, -1, -1):
            v = _pred(cols, v, layers[k - 1] if k > 0 else ends[s - 1])
            back.append(v)
    return back[::-1]
