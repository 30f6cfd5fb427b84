"""Structural diff of two graphs: Hierarchy A (base) and Hierarchy B -> ``wire.GraphDiff``.

The pipeline, in order (each step timed into ``GraphDiff.stats``):

1. ``match.by_name``              ops and groups of the same name
2. ``match.groups_by_structure``  renamed groups with the same structure hash
3. ``match.by_scope``             ops below renamed groups, by relative name
4. ``match.by_suffix``            ops whose names differ only in ``_<n>`` suffixes
5. ``match.by_neighbourhood``     ops by op type and matched inputs / consumers
5b. ``match.by_position``         ops of any type on matched inputs, in partner groups
6. ``match.groups_by_votes``      groups holding the partners of most of their children,
                                  then 3 and 5 again for the pairs this made
7. ``classify.classify``          same / changed / added / removed, aggregated to groups

Sits after ``hierarchy`` (reads two built Hierarchies, mutates neither) and before ``api``.

Example::

    >>> from tensorboard.compat.proto import graph_pb2
    >>> from tb_graph_plugin.graph import build_slim_graph
    >>> from tb_graph_plugin.hierarchy import build_hierarchy
    >>> def h(*nodes):
    ...     g = graph_pb2.GraphDef()
    ...     for name, op, inputs in nodes:
    ...         _ = g.node.add(name=name, op=op, input=inputs)
    ...     return build_hierarchy(build_slim_graph(g))
    >>> a = h(("x", "Placeholder", []), ("d/MatMul", "MatMul", ["x"]), ("d/Relu", "Relu", ["d/MatMul"]),
    ...       ("y", "Identity", ["d/Relu"]))
    >>> b = h(("x", "Placeholder", []), ("d/MatMul", "MatMul", ["x"]), ("d/Tanh", "Tanh", ["d/MatMul"]),
    ...       ("z", "Identity", ["d/Tanh"]), ("y", "Identity", ["z"]))
    >>> d = diff_hierarchies(a, b)
    >>> d.added, d.removed, d.changed, d.same
    (['z'], [], ['d', 'd/Tanh', 'y'], False)
    >>> [(e.name, e.fields, e.old_name) for e in d.entries if e.name == "d/Tanh"]
    [('d/Tanh', ['op', 'name'], 'd/Relu')]
"""

from __future__ import annotations

import time
from typing import Optional

from tb_graph_plugin import wire
from tb_graph_plugin.diff import classify, match
from tb_graph_plugin.hierarchy.model import Hierarchy

__all__ = ["diff_hierarchies"]

_NO_REF = wire.GraphRef(run="", tag="", kind=wire.GraphKind.OP)


def diff_hierarchies(a: Hierarchy, b: Hierarchy, base_ref: Optional[wire.GraphRef] = None,
                     ref: Optional[wire.GraphRef] = None) -> wire.GraphDiff:
    """Diff B against A. Post-condition: ``same`` iff no entry; lists sorted, root never listed."""
    timings: dict[str, float] = {}
    matched: dict[str, int] = {}

    def step(name, fn, key=None):
        t0 = time.perf_counter()
        out = fn()
        timings[name] = round(timings.get(name, 0.0) + time.perf_counter() - t0, 4)
        if key:
            matched[key] = matched.get(key, 0) + out
        return out

    m = step("inputs", lambda: match.Matching(a, b))
    step("by_name", lambda: match.by_name(m), "name")
    step("groups_by_structure", lambda: match.groups_by_structure(m))
    step("by_scope", lambda: match.by_scope(m), "scope")
    step("by_suffix", lambda: match.by_suffix(m), "suffix")
    step("by_neighbourhood", lambda: match.by_neighbourhood(m), "neighbourhood")
    step("by_position", lambda: match.by_position(m), "position")
    step("groups_by_votes", lambda: match.groups_by_votes(m))
    step("by_scope", lambda: match.by_scope(m), "scope")
    step("by_neighbourhood", lambda: match.by_neighbourhood(m), "neighbourhood")
    entries, counts = step("classify", lambda: classify.classify(m))
    entries.sort(key=lambda e: (e.status.value, e.name))
    names = {s: sorted(e.name for e in entries if e.status == s) for s in wire.DiffStatus}
    timings["total"] = round(sum(timings.values()), 4)
    return wire.GraphDiff(
        base=base_ref or _NO_REF,
        graph=ref or _NO_REF,
        same=not entries,
        added=names[wire.DiffStatus.ADDED],
        removed=names[wire.DiffStatus.REMOVED],
        changed=names[wire.DiffStatus.CHANGED],
        entries=entries,
        counts=counts,
        matched=matched,
        stats={"timings_s": timings, "ops_a": a.n_ops, "ops_b": b.n_ops},
    )
