"""Classify every node of two matched Hierarchies as same / changed / added / removed.

Ops: a B op without partner is added, an A op without partner removed; a matched pair is
changed when any of these differ (the names of ``DiffEntry.fields``):

- ``op``      the op type;
- ``attrs``   the NodeDef attrs other than ``_output_shapes`` (compared as protos);
- ``shapes``  the output shapes (``SlimGraph.output_shapes``);
- ``device``  the requested device;
- ``inputs``  the inputs, in order, each mapped through the matching (an input from an
              unmatched op, or from an op matched to another one, differs);
- ``name``    the op was matched under another name.

Groups (aggregated): a B group without partner is added, an A group without partner removed;
a matched pair is changed (``contents``) when anything under either is not the same (an op or
group under it changed, added or removed), and (``name``) when named differently.

Pre-condition: ``match`` ran (the roots are partners). Post-condition: every op and group of
B is in exactly one of same/changed/added, every op and group of A without partner is
removed; the root is never listed.
"""

from __future__ import annotations

from tb_graph_plugin import wire
from tb_graph_plugin.diff.match import Matching
from tb_graph_plugin.hierarchy.model import Hierarchy

__all__ = ["classify"]

_IGNORED_ATTRS = ("_output_shapes",)


def _attrs_differ(nd_a, nd_b) -> bool:
    if nd_a is None or nd_b is None:
        return (nd_a is None) != (nd_b is None)
    if nd_a.attr == nd_b.attr:
        return False
    keys = (set(nd_a.attr) | set(nd_b.attr)) - set(_IGNORED_ATTRS)
    return any(k not in nd_a.attr or k not in nd_b.attr or nd_a.attr[k] != nd_b.attr[k] for k in keys)


def _op_fields(m: Matching, ia: int, ib: int) -> list[str]:
    sa, sb = m.a.slim, m.b.slim
    fields = []
    if sa.ops[ia] != sb.ops[ib]:
        fields.append("op")
    if _attrs_differ(sa.node_defs[ia], sb.node_defs[ib]):
        fields.append("attrs")
    if sa.output_shapes[ia] != sb.output_shapes[ib]:
        fields.append("shapes")
    if (sa.devices[ia] or "") != (sb.devices[ib] or ""):
        fields.append("device")
    ins_a, ins_b = m.a_inputs[ia], m.b_inputs[ib]
    if len(ins_a) != len(ins_b) or any(
        (m.a_of_b.get(src_b, -1) if isinstance(src_b, int) else src_b, pb, cb) != (src_a, pa, ca)
        for (src_a, pa, ca), (src_b, pb, cb) in zip(ins_a, ins_b)
    ):
        fields.append("inputs")
    if sa.names[ia] != sb.names[ib]:
        fields.append("name")
    return fields


def _mark_up(h: Hierarchy, i, dirty: set[int]) -> None:
    p = h.parent(i)
    while p is not None and p not in dirty:
        dirty.add(p)
        p = h.parent(p)


def classify(m: Matching) -> tuple[list[wire.DiffEntry], dict[str, dict[str, int]]]:
    """The entries of every node that is not the same, and the counts per status."""
    a, b = m.a, m.b
    entries: list[wire.DiffEntry] = []
    counts = {fam: {s.value: 0 for s in wire.DiffStatus} for fam in ("ops", "groups")}
    dirty_b: set[int] = set()  # B groups with something under them not the same
    dirty_a: set[int] = set()

    for ib in range(b.n_ops):
        ia = m.a_of_b.get(ib)
        if ia is None:
            entries.append(wire.DiffEntry(b.slim.names[ib], wire.DiffStatus.ADDED, b.kind(ib)))
            counts["ops"]["added"] += 1
            _mark_up(b, ib, dirty_b)
            continue
        fields = _op_fields(m, ia, ib)
        if fields:
            old = a.slim.names[ia] if "name" in fields else None
            entries.append(wire.DiffEntry(b.slim.names[ib], wire.DiffStatus.CHANGED, b.kind(ib), fields, old))
            counts["ops"]["changed"] += 1
            _mark_up(b, ib, dirty_b)
        else:
            counts["ops"]["same"] += 1
    removed_a = []
    for ia in range(a.n_ops):
        if ia not in m.b_of_a:
            removed_a.append(ia)
            counts["ops"]["removed"] += 1
            _mark_up(a, ia, dirty_a)
    n_a = a.n_ops
    for g in a.groups[1:]:
        if g.id not in m.b_of_a:
            removed_a.append(g.id)
            counts["groups"]["removed"] += 1
            _mark_up(a, g.id, dirty_a)
    for ga in dirty_a:  # something under A's group went: its partner in B changed
        gb = m.b_of_a.get(ga)
        if gb is not None and gb not in dirty_b:
            dirty_b.add(gb)
            _mark_up(b, gb, dirty_b)
    for g in b.groups[1:]:
        if g.id not in m.a_of_b:
            _mark_up(b, g.id, dirty_b)
    for g in b.groups[1:]:
        ga = m.a_of_b.get(g.id)
        if ga is None:
            entries.append(wire.DiffEntry(g.name, wire.DiffStatus.ADDED, b.kind(g.id)))
            counts["groups"]["added"] += 1
            continue
        fields = (["contents"] if g.id in dirty_b else []) + (["name"] if a.groups[ga - n_a].name != g.name else [])
        if fields:
            old = a.groups[ga - n_a].name if "name" in fields else None
            entries.append(wire.DiffEntry(g.name, wire.DiffStatus.CHANGED, b.kind(g.id), fields, old))
            counts["groups"]["changed"] += 1
        else:
            counts["groups"]["same"] += 1
    for ia in removed_a:
        anchor = None
        p = a.parent(ia)
        while p is not None and anchor is None:
            pb = m.b_of_a.get(p)
            anchor = b.name_of(pb) if pb is not None else None
            p = a.parent(p)
        entries.append(wire.DiffEntry(a.name_of(ia), wire.DiffStatus.REMOVED, a.kind(ia), anchor=anchor))
    return entries, counts
