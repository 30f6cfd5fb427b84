"""Match the nodes of two Hierarchies: by name first, then what is left by structure.

Steps (each a function ``(m: Matching) -> int`` returning the op pairs it added; run in this
order by ``diff.diff_hierarchies``):

1. ``by_name``          ops and groups with the same hierarchy name in A and B.
2. ``groups_by_structure``  unmatched groups with the same ``structure_hash`` (the template
                        hash, ``hierarchy.templates``) whose parents are partners: a renamed
                        scope with the same insides.
3. ``by_scope``         inside every matched pair of groups with different names, unmatched ops
                        whose names are equal below the group (``enc/dense/MatMul`` in B for
                        ``encoder/dense/MatMul`` in A).
4. ``by_suffix``        unmatched ops whose names are equal once ``_<digits>`` suffixes are
                        dropped from every segment, with the same op type, unique on both
                        sides (a shifted ``add_1`` -> ``add_2``).
5. ``by_neighbourhood`` unmatched ops with the same op type whose inputs are all matched to the
                        inputs of the other (in order), or, for ops without inputs, whose
                        consumers are; unique on both sides; repeated while it finds pairs, so
                        a chain is matched from its matched end.
5b. ``by_position``     unmatched ops of any op type whose inputs are all matched to those of
                        the other and whose groups are partners, unique on both sides with
                        that key (an activation swapped in place: ``Relu`` -> ``Tanh``,
                        reported as changed ``op``, ``name``).
6. ``groups_by_votes``  an unmatched B group (deepest first) takes the unmatched A group that
                        holds the partners of most of its children.

Pre-condition: the Hierarchies are built and never mutated here.
Post-condition: ``a_of_b`` / ``b_of_a`` are inverse partial maps between hierarchy ids of the
same family (op <-> op, group <-> group); an id is matched at most once; the roots match.

Follows the two-phase scheme of GumTree (Falleri et al., "Fine-grained and accurate source code
differencing", ASE 2014): anchors first (here: names), then a bottom-up/neighbourhood pass on
what the anchors left.
"""

from __future__ import annotations

import re
from typing import Optional, Union

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.wire import EdgeKindCode

__all__ = ["Matching", "op_inputs", "by_name", "groups_by_structure", "by_scope", "by_suffix",
           "by_neighbourhood", "by_position", "groups_by_votes"]

_SUFFIX = re.compile(r"_\d+(?=/|$)")

# An input: (op id or the raw name when it names no op, output index, is control).
Input = tuple[Union[int, str], int, bool]


def op_inputs(h: Hierarchy) -> list[list[Input]]:
    """Every op's NodeDef inputs, resolved to op ids of ``h.slim`` where they name an op.

    Ops without a NodeDef (synthetic nodes) get their base edges' sources instead.
    """
    slim = h.slim
    index = slim.index
    out: list[list[Input]] = []
    for i, nd in enumerate(slim.node_defs):
        if nd is None:
            out.append([])
            continue
        inputs = []
        for raw in nd.input:
            control = raw.startswith("^")
            name = raw[1:] if control else raw
            port = 0
            colon = name.rfind(":")
            if colon > 0 and name[colon + 1:].isdigit():
                port = int(name[colon + 1:])
                name = name[:colon]
            target = index.get(name)
            inputs.append((raw if target is None else target, port, control))
        out.append(inputs)
    control = EdgeKindCode.CONTROL
    present = slim.node_defs.present
    for s, d, o, k in zip(slim.edge_src.tolist(), slim.edge_dst.tolist(), slim.edge_output.tolist(),
                          slim.edge_kind.tolist()):  # synthetic ops: their base edges
        if not present(d):
            out[d].append((s, o, k == control))
    return out


class Matching:
    """The partial map between A's and B's hierarchy ids, grown by the steps of this module."""

    def __init__(self, a: Hierarchy, b: Hierarchy):
        self.a, self.b = a, b
        self.a_of_b: dict[int, int] = {}
        self.b_of_a: dict[int, int] = {}
        self.a_inputs = op_inputs(a)
        self.b_inputs = op_inputs(b)

    def pair(self, ia: int, ib: int) -> None:
        self.a_of_b[ib] = ia
        self.b_of_a[ia] = ib

    def unmatched_ops(self, h: Hierarchy, matched: dict[int, int]) -> list[int]:
        return [i for i in range(h.n_ops) if i not in matched]

    def unmatched_groups(self, h: Hierarchy, matched: dict[int, int]) -> list[int]:
        n = h.n_ops
        return [g.id for g in h.walk_groups() if g.id not in matched and g.id >= n]


def by_name(m: Matching) -> int:
    """Step 1: same hierarchy name (ops: SlimGraph names; groups: group names)."""
    a, b = m.a, m.b
    a_index = a.slim.index
    found = 0
    for ib, name in enumerate(b.slim.names):
        ia = a_index.get(name)
        if ia is not None and a.slim.names[ia] == name and ia not in m.b_of_a:
            m.pair(ia, ib)
            found += 1
    for name, gb in b.group_index.items():
        ga = a.group_index.get(name)
        if ga is not None:
            m.pair(ga, gb)
    m.pair(a.root.id, b.root.id)
    return found


def groups_by_structure(m: Matching) -> int:
    """Step 2: unmatched groups with equal ``structure_hash`` under partner parents, in order."""
    a, b = m.a, m.b
    waiting: dict[tuple, list[int]] = {}
    for ga in m.unmatched_groups(a, m.b_of_a):
        g = a.group(ga)
        waiting.setdefault((g.parent, g.structure_hash, g.is_series), []).append(ga)
    for gb in m.unmatched_groups(b, m.a_of_b):
        g = b.group(gb)
        parent_a = m.a_of_b.get(g.parent)
        if parent_a is None:
            continue
        candidates = waiting.get((parent_a, g.structure_hash, g.is_series))
        if candidates:
            m.pair(candidates.pop(0), gb)
    return 0


def by_scope(m: Matching) -> int:
    """Step 3: below each matched pair of groups named differently, equal relative op names.

    Each unmatched B op looks up its ``/`` prefixes, deepest first, among the renamed groups:
    O(name depth) per op.
    """
    a, b = m.a, m.b
    renamed: dict[str, str] = {}
    for gb, ga in m.a_of_b.items():
        if gb >= b.n_ops and gb != b.root.id:
            name_a, name_b = a.name_of(ga), b.name_of(gb)
            if name_a != name_b:
                renamed[name_b] = name_a
    if not renamed:
        return 0
    found = 0
    a_index = a.slim.index
    for ib in m.unmatched_ops(b, m.a_of_b):
        name = b.slim.names[ib]
        cut = name.rfind("/")
        while cut > 0:
            prefix_a = renamed.get(name[:cut])
            if prefix_a is not None:  # the deepest renamed scope holding the op
                ia = a_index.get(prefix_a + name[cut:])
                if ia is not None and ia not in m.b_of_a:
                    m.pair(ia, ib)
                    found += 1
                break
            cut = name.rfind("/", 0, cut)
    return found


def _unique_keys(h: Hierarchy, ids: list[int], key) -> dict:
    seen: dict = {}
    for i in ids:
        k = key(h, i)
        if k is not None:
            seen[k] = -1 if k in seen else i
    return {k: i for k, i in seen.items() if i >= 0}


def by_suffix(m: Matching) -> int:
    """Step 4: equal names once ``_<n>`` suffixes are dropped, same op type, unique both sides."""
    def key(h, i):
        return _SUFFIX.sub("", h.slim.names[i]), h.slim.ops[i]

    left_a = _unique_keys(m.a, m.unmatched_ops(m.a, m.b_of_a), key)
    left_b = _unique_keys(m.b, m.unmatched_ops(m.b, m.a_of_b), key)
    found = 0
    for k, ib in left_b.items():
        ia = left_a.get(k)
        if ia is not None:
            m.pair(ia, ib)
            found += 1
    return found


def _consumers(h: Hierarchy, inputs: list[list[Input]], wanted: set[int]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {i: [] for i in wanted}
    for j, ins in enumerate(inputs):
        for src, _, _ in ins:
            if src in out:
                out[src].append(j)
    return out


def by_neighbourhood(m: Matching, max_rounds: int = 50) -> int:
    """Step 5: same op type and matched inputs (or, for sources, matched consumers)."""
    a, b = m.a, m.b
    found = 0
    for _ in range(max_rounds):
        left_a = m.unmatched_ops(a, m.b_of_a)
        left_b = m.unmatched_ops(b, m.a_of_b)
        if not left_a or not left_b:
            break
        set_a = set(left_a)
        cons_a = _consumers(a, m.a_inputs, {i for i in left_a if not m.a_inputs[i]})
        cons_b = _consumers(b, m.b_inputs, {i for i in left_b if not m.b_inputs[i]})

        def key_a(h, i):
            ins = m.a_inputs[i]
            if ins:
                if any(isinstance(s, int) and s in set_a for s, _, _ in ins):
                    return None
                return h.slim.ops[i], "in", tuple(ins)
            users = cons_a[i]
            if not users or any(u in set_a for u in users):
                return None
            return h.slim.ops[i], "out", tuple(sorted(users))

        def key_b(h, i) -> Optional[tuple]:
            if m.b_inputs[i]:
                mapped = _inputs_in_a(m, i)
                return None if mapped is None else (h.slim.ops[i], "in", mapped)
            users = [m.a_of_b.get(u) for u in cons_b[i]]
            if not users or None in users:
                return None
            return h.slim.ops[i], "out", tuple(sorted(users))

        keys_a = _unique_keys(a, left_a, key_a)
        keys_b = _unique_keys(b, left_b, key_b)
        new = 0
        for k, ib in keys_b.items():
            ia = keys_a.get(k)
            if ia is not None:
                m.pair(ia, ib)
                new += 1
        found += new
        if not new:
            break
    return found


def _inputs_in_a(m: Matching, i: int) -> Optional[tuple]:
    """Op ``i`` of B's inputs with B's op ids replaced by their A partners; None if one has none."""
    mapped = []
    for s, port, control in m.b_inputs[i]:
        if isinstance(s, int):
            s = m.a_of_b.get(s)
            if s is None:
                return None
        mapped.append((s, port, control))
    return tuple(mapped)


def by_position(m: Matching) -> int:
    """Step 5b: any op type; inputs all matched to the other's, groups partners; unique."""
    a, b = m.a, m.b
    left_a = m.unmatched_ops(a, m.b_of_a)
    left_b = m.unmatched_ops(b, m.a_of_b)
    if not left_a or not left_b:
        return 0

    def key_a(h, i):
        ins = m.a_inputs[i]
        if not ins or any(isinstance(s, int) and s not in m.b_of_a for s, _, _ in ins):
            return None
        return tuple(ins), h.parent(i)

    def key_b(h, i):
        parent = m.a_of_b.get(h.parent(i))
        if not m.b_inputs[i] or parent is None:
            return None
        mapped = _inputs_in_a(m, i)
        return None if mapped is None else (mapped, parent)

    keys_a = _unique_keys(a, left_a, key_a)
    found = 0
    for k, ib in _unique_keys(b, left_b, key_b).items():
        ia = keys_a.get(k)
        if ia is not None:
            m.pair(ia, ib)
            found += 1
    return found


def groups_by_votes(m: Matching) -> int:
    """Step 6: an unmatched B group takes the unmatched A group holding most of its children's
    partners (deepest B groups first, so a renamed scope's parent can follow it)."""
    a, b = m.a, m.b
    left_b = sorted(m.unmatched_groups(b, m.a_of_b), key=lambda g: -b.group(g).level)
    for gb in left_b:
        votes: dict[int, int] = {}
        for c in b.group(gb).children:
            ca = m.a_of_b.get(c)
            if ca is not None:
                pa = a.parent(ca)
                if pa is not None and pa not in m.b_of_a:
                    votes[pa] = votes.get(pa, 0) + 1
        if votes:
            best = max(votes, key=lambda g: (votes[g], -g))
            if a.group(best).is_series == b.group(gb).is_series:
                m.pair(best, gb)
    return 0
