"""Auxiliary node extraction: high-degree children of a group go to side columns.

Follows [VAST] §5.2 ("Extract Auxiliary Nodes": high-degree nodes that couple
distant parts of the graph are taken out of the flow layout and drawn on the side) with
the stock thresholds ([TB-SRC] ``render.ts``): only in groups of at least ``extract_min_children``
children; a child whose number of incoming metaedges exceeds ``max(Q3 + (Q3 - Q1), 4)`` goes
to the out-column (right), one whose outgoing metaedges exceed ``max(Q3 + 4 (Q3 - Q1), 4)``
to the in-column (left) (Q1/Q3 at indices round(n/4), round(3n/4) of the sorted degrees,
both at least ``extract_min_degree``); ops of ``out_extract_types`` (``NoOp``) with
``extract_min_degree`` or more metaedges, and children with more than ``max_control_degree``
control-only metaedges, go to the out-column too.

Pre: a group's children and metaedges. Post: two disjoint lists of child ids (in-column,
out-column), in children order; never all children.
"""

from __future__ import annotations

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.layout.scene.options import SceneOptions

__all__ = ["extract_auxiliary"]


def _bound(degrees: list[int], k: float) -> float:
    s = sorted(degrees)
    n = len(s)
    q1 = s[min(round(n / 4), n - 1)]
    q3 = s[min(round(3 * n / 4), n - 1)]
    return max(q3 + k * (q3 - q1), 4)


def extract_auxiliary(h: Hierarchy, gid: int, o: SceneOptions, exclude: frozenset = frozenset()) -> tuple[list[int], list[int]]:
    """``(in-column, out-column)`` child ids; children in ``exclude`` (floated) take no part."""
    group = h.group(gid)
    children = [c for c in group.children if c not in exclude] if exclude else group.children
    if not o.extract or len(children) < o.extract_min_children:
        return [], []
    ins = {c: 0 for c in children}
    outs = {c: 0 for c in children}
    control = {c: 0 for c in children}
    for me in group.metaedges:
        if exclude and (me.src in exclude or me.dst in exclude):
            continue
        outs[me.src] += 1
        ins[me.dst] += 1
        if me.control_only:
            control[me.src] += 1
            control[me.dst] += 1
    in_bound = _bound(list(ins.values()), 1.0)
    out_bound = _bound(list(outs.values()), 4.0)
    left, right = [], []
    n_ops = h.n_ops
    ops = h.slim.ops
    for c in children:
        deg = ins[c] + outs[c]
        is_type = c < n_ops and ops[c] in o.out_extract_types and deg >= o.extract_min_degree
        if is_type or control[c] > o.max_control_degree or (ins[c] > in_bound and ins[c] >= o.extract_min_degree):
            right.append(c)
        elif outs[c] > out_bound and outs[c] >= o.extract_min_degree:
            left.append(c)
    if len(left) + len(right) >= len(children):
        return [], []
    return left, right
