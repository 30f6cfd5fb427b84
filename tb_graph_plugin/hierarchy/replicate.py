"""Hierarchy phases 1b and 3c: exact copies grouped once, their grouping replicated.

Ours (issue 21: the whole build at 1M ops; no reference document). A multi-tower graph repeats
its model under ``tower_0/`` .. ``tower_6/`` (the 1M-op corpus graph: seven copies of a 141k-op
training step). The grouping phases 2-3b (inferred scopes, regions, op series, splits) read only
a group's own subtree (``copies``: why exact copies are grouped alike), so they need to run in
one copy of each class only:

1b. :func:`find_copies` (after the scopes): large sibling groups of equal op counts that are
    exact copies (``copies.prove_copies``, one proof per parent, at most :data:`MAX_PROOFS`)
    are found, top-down, and the subtrees of all but the first of each class are left out of
    phases 2-3b (``h.not_regrouped``);
3c. :func:`replicate_copies` (after them): the groups the phases made in each first copy are
    made again in the others, in the order of their ids there (so their relative order, which
    the later phases read, is the same), with its name after the copy's own name, and the
    children lists of the copy's groups are the first copy's, op for op (the ``k``-th op of two
    copies correspond).

The phases after 3c (MetaEdges, templates, block series, stats) run on the whole tree as before.

A group name the phases made carries a ``*`` where it met a name already taken; in a copy the
name taken may differ. So when a first copy's made groups have one, or a replicated name is
taken (by a group or an op), :func:`replicate_copies` raises :class:`NotReplicated` and the build
runs again without this (``hierarchy.build_hierarchy``).

Pre (3c): 1b and phases 2-3b done, ``h.not_regrouped`` as 1b left it. Post: the tree equals the
one phases 2-3b give when run in every group, group for group (names, kinds, labels, children in
order), but for group ids; ``h.not_regrouped`` is empty. Cost: O(ops + groups) array work for 1b;
one Python step per op and group under the copies for 3c.
"""

from __future__ import annotations

import copy
import dataclasses
from collections import Counter
from itertools import chain

import numpy as np

from tb_graph_plugin.hierarchy.copies import prove_copies
from tb_graph_plugin.hierarchy.model import Hierarchy, SeriesNode
from tb_graph_plugin.hierarchy.split import SplitNode
from tb_graph_plugin.hierarchy.tree import deepest_first, group_levels, group_parents
from tb_graph_plugin.hierarchy.unique import owners

__all__ = ["Replication", "find_copies", "replicate_copies", "NotReplicated", "MIN_COPY_OPS", "MAX_PROOFS"]

MIN_COPY_OPS = 2000
"""A group is looked at for copies when it holds at least this many main ops, and at least 1% of
them all: each proof reads every main op, so it is made for few, large groups."""


MAX_PROOFS = 16
"""At most this many groups' children are proven (each proof reads every main op once)."""


class NotReplicated(Exception):
    """A replicated group's name may differ from what the phases would have named it."""


@dataclasses.dataclass
class Replication:
    """The classes 1b found, deepest first: (first copy, the others, each one's ops in op id
    order), and how many groups the scopes made (the groups made later have larger ids)."""

    classes: list[tuple[int, list[int], dict[int, np.ndarray]]]
    scope_groups: int


def find_copies(h: Hierarchy) -> Replication:
    """Find the classes of large exact copies (module docstring, 1b) and set
    ``h.not_regrouped`` to the group ids under all but the first of each."""
    n, groups = h.n_ops, h.groups
    found = Replication([], len(groups))
    if h.options.ungrouped_series:
        return found
    parent = group_parents(h)
    level = group_levels(parent)
    op_parent = h.op_parent_array()
    held = np.bincount(op_parent[op_parent >= 0] - n, minlength=len(groups))  # main ops under each
    for ids, up in deepest_first(parent, level):
        np.add.at(held, up, held[ids])
    big = held >= max(MIN_COPY_OPS, int(held[0]) // 100)
    skipped: set[int] = set()
    stack, proofs = [0], MAX_PROOFS
    while stack:
        g = groups[stack.pop()]
        large = [c for c in g.children if c >= n and big[c - n]]
        sizes = Counter(int(held[c - n]) for c in large)
        alike = [c for c in large if sizes[int(held[c - n])] > 1]  # copies hold as many ops
        proof = None
        if alike and proofs:
            proofs -= 1
            proof = prove_copies(h, alike)
        for c in large:
            first = proof.first.get(c, c) if proof is not None else c
            if first != c:
                skipped.add(c)
                continue
            if proof is not None and len(proof.members.get(c, ())) > 1:
                found.classes.append((c, proof.members[c][1:], proof.ops))
            stack.append(c - n)
    if not found.classes:
        return found
    under = owners(sorted(skipped), parent, level, n)  # each group's skipped ancestor, or -1
    h.not_regrouped = frozenset((np.flatnonzero(under >= 0) + n).tolist())
    found.classes.sort(key=lambda c: -int(level[c[0] - n]))  # deepest first: inner copies are whole first
    return found


def replicate_copies(h: Hierarchy, found: Replication) -> None:
    """Make each class's others grouped as its first copy is (module docstring, 3c)."""
    n = h.n_ops
    op_parent = h.op_parent
    for first, others, ops in found.classes:
        subtree = [g.id for g in h.pre_order_groups(first)]
        made = [g for g in sorted(subtree) if g - n >= found.scope_groups]
        head = h.name_of(first) + "/"
        for g in made:
            name = h.groups[g - n].name
            if not name.startswith(head) or "*" in name:
                raise NotReplicated(name)
        lists = [h.groups[g - n].children for g in subtree]
        lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        flat = np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=int(lengths.sum()))
        is_op = flat < n
        position = np.full(n, -1, dtype=np.int64)
        position[ops[first]] = np.arange(len(ops[first]))
        places = position[flat[is_op]]  # each op child's place among the first copy's ops
        for other in others:
            _replicate(h, first, other, subtree, made, (lengths, flat, is_op, places), ops[other], op_parent)
    h.op_parent = op_parent  # changed in place: the array made from it is stale
    h.not_regrouped = frozenset()
    h.child_edges = None  # placed on the tree before the copies were regrouped


def _split_from(h: Hierarchy, gid: int) -> int:
    """The group whose children a SplitNode holds a run of (its nearest ancestor not a SplitNode),
    whose label begins the SplitNode's (``split``: ``adam [1-967]``)."""
    g = h.groups[gid - h.n_ops]
    while isinstance(g, SplitNode):
        g = h.groups[g.parent - h.n_ops]
    return g.id


def _replicate(h: Hierarchy, first: int, other: int, subtree: list[int], made: list[int], children: tuple,
               other_ops: np.ndarray, op_parent: list) -> None:
    """``other`` grouped as ``first``: its scope groups found by name, the made groups made;
    ``children``: the first copy's subtree's children lists flattened (lengths, ids, which are
    ops, and each op's place among its ops); ``op_parent`` (``h.op_parent``) is updated."""
    n, groups, index = h.n_ops, h.groups, h.group_index
    cut, prefix = len(h.name_of(first)), h.name_of(other)
    image: dict[int, int] = {first: other}
    fresh = set(made)
    for g in subtree[1:]:  # the groups the scopes made: the other copy has each, by name
        if g not in fresh:
            name = prefix + groups[g - n].name[cut:]
            if name not in index:
                raise NotReplicated(name)
            image[g] = index[name]
    first_label, other_label = groups[first - n].label, groups[other - n].label
    for g in made:  # the groups the phases made, in the order they were made
        name = prefix + groups[g - n].name[cut:]
        if name in index or name in h.slim.index:
            raise NotReplicated(name)
        twin = copy.copy(groups[g - n])
        twin.id, twin.name = n + len(groups), name
        if isinstance(twin, SplitNode) and _split_from(h, g) == first:  # labelled after the copy itself
            twin.label = other_label + twin.label[len(first_label):]
        twin.profile_devices = {}
        twin._metaedges = twin._metaedge_rows = None
        if isinstance(twin, SeriesNode):
            twin.indices = list(twin.indices)
        groups.append(twin)
        index[name] = twin.id
        image[g] = twin.id
    lengths, flat, is_op, places = children
    twins = np.fromiter(map(image.__getitem__, subtree), dtype=np.int64, count=len(subtree))
    holder = np.repeat(twins, lengths)  # each child's new holder
    mapped = flat.copy()
    mapped[is_op] = other_ops[places]
    one = {gid: gid for gid in twins.tolist()}  # one int object per holder, as the phases share
    for op, gid in zip(mapped[is_op].tolist(), holder[is_op].tolist()):
        op_parent[op] = one[gid]
    kids = np.flatnonzero(~is_op)
    mapped[kids] = np.fromiter(map(image.__getitem__, flat[kids].tolist()), dtype=np.int64, count=len(kids))
    for c, p in zip(mapped[kids].tolist(), holder[kids].tolist()):
        groups[c - n].parent = p
    ends = np.cumsum(lengths).tolist()
    every = mapped.tolist()
    for twin_id, lo, hi in zip(twins.tolist(), [0, *ends[:-1]], ends):
        twin = groups[twin_id - n]
        twin.children = every[lo:hi]
        if isinstance(twin, SeriesNode):
            h.series_of_op.update(dict.fromkeys(twin.children, twin_id))
