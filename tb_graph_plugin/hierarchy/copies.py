"""Which sibling groups are exact copies of each other, read from their ops and edges alone.

Ours (issue 21: the first view before the rest; no reference document). A multi-tower training
graph repeats its model under ``tower_0/``, ``tower_1/``, ...; the 1M-op corpus graph is seven
such towers and nothing else. A first view that shows them (the series ``tower_[0-6]``, opened)
needs their template ids and the block series they make, which ``templates`` reads from each
tower's whole subtree, grouped. This module proves, without grouping any subtree, that two
towers are grouped alike and hash alike (``replicate`` uses the same proof to group one copy of
each class only, in the whole build):

Two sibling scope groups ``A`` and ``B`` are **exact copies** when, listing the main ops under
each in op id (GraphDef) order, the ``k``-th ops have the same op type and the same name after
the group's own name (every op under ``A`` is named ``A/...``), and the base edges with both ends
under each, in edge id order, are the same (source position, destination position, kind).

Why copies are grouped alike by the whole build: every grouping phase run in a group reads that
group's subtree only: its children's labels (the last parts of their names), op types and order
(GraphDef order), and the base edges between them (``placement.ChildEdges``), plus the options.
A copy's scopes, their children lists and those edges correspond one to one, so each phase makes
the same groups in both (only names of made groups may differ by a clash suffix ``*``, which no
hash reads); the structure hash (``templates``) reads op types, the children's hashes and the
metaedges between children, so ``A`` and ``B`` hash alike. The one option that names groups,
``ungrouped_series``, must be empty.

Why groups of different classes hash apart: a structure hash fixes the multiset of op types
under a group (each op is coloured by its type, recursively); two classes whose op type counts
differ cannot share a hash. Classes with equal counts are not told apart: no proof then.

The proof reads the ops under each group, their names and the edges between them, which no
grouping phase changes: it holds whichever phases have run in the partial tree.

Pre: ``h``'s tree holds every main op of the graph (scopes built). Post: :func:`copy_classes`
maps each group of its lists to the first of its copies only when each is an exact copy of another
in its list and classes differ in their op type counts, else None; :func:`prove_copies` gives
the classes of one list, a class of one group included; O(ops + edges) numpy plus one string
comparison per op under the groups (once per SlimGraph, groups and their ops: remembered).
"""

from __future__ import annotations

import dataclasses
import hashlib
import weakref
from itertools import repeat
from operator import add
from typing import Optional

import numpy as np

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.hierarchy.tree import group_levels, group_parents
from tb_graph_plugin.hierarchy.unique import op_type_codes, owners

__all__ = ["copy_classes", "first_of_copies", "CopyProof", "prove_copies"]


def copy_classes(h: Hierarchy, sibling_lists: list[list[int]]) -> Optional[dict[int, int]]:
    """Group id -> the id of the first group it is an exact copy of (itself for the first), for
    every group in each list of sibling groups (module docstring), or None when one is not proven
    (a group with no copy in its list, classes of equal op type counts, ``ungrouped_series`` set)."""
    if h.options.ungrouped_series:
        return None
    n_types = op_type_codes(h.slim)[1]
    found: dict[int, int] = {}
    counted: set[bytes] = set()
    for gids in sibling_lists:
        if not gids:
            continue
        proof = prove_copies(h, gids)
        if proof is None or min(map(len, proof.members.values())) < 2:
            return None
        found.update(proof.first)
        for c in proof.op_type_counts(n_types):  # two classes of equal counts may hash alike
            if c in counted:
                return None
            counted.add(c)
    return found


def first_of_copies(copy_of: Optional[dict[int, int]], gid: int) -> bool:
    """Whether ``gid`` is the first of a class of exact copies with another member, in a map
    :func:`copy_classes` gave."""
    return bool(copy_of) and copy_of.get(gid) == gid and sum(first == gid for first in copy_of.values()) >= 2


@dataclasses.dataclass
class CopyProof:
    """What :func:`prove_copies` found among some sibling groups: ``first`` maps each to the
    first group it is an exact copy of (itself for a first), ``members`` each first to its class
    (itself included, in list order), ``ops`` each group to its main ops in op id order (the
    ``k``-th ops of two copies correspond)."""

    first: dict[int, int]
    members: dict[int, list[int]]
    ops: dict[int, np.ndarray]
    codes: dict[int, np.ndarray]  # each first's ops' op type codes

    def op_type_counts(self, n_types: int) -> list[bytes]:
        return [np.bincount(c, minlength=n_types).tobytes() for c in self.codes.values()]


def prove_copies(h: Hierarchy, gids: list[int]) -> Optional[CopyProof]:
    """The classes of exact copies among sibling groups ``gids`` (a class may be one group), or
    None when a group holds an op not named under it."""
    n, slim = h.n_ops, h.slim
    parent = group_parents(h)
    under = owners(gids, parent, group_levels(parent), n)
    op_parent = h.op_parent_array()
    main = np.flatnonzero(op_parent >= 0)
    owner = under[op_parent[main] - n]
    inside = owner >= 0
    ops, owner = main[inside], owner[inside]  # op id order
    by_group = np.argsort(owner, kind="stable")
    ops, owner = ops[by_group], owner[by_group]  # each group's ops together, in op id order
    counts = np.bincount(owner, minlength=len(gids))
    starts = np.concatenate(([0], np.cumsum(counts)))
    first: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    own_ops = {gid: ops[starts[k]:starts[k + 1]] for k, gid in enumerate(gids)}
    # The classes are a function of the SlimGraph, each group's name and its ops: a first view's
    # partial build and the whole build after it prove the same towers (the names ~0.12 s at 1M).
    digest = hashlib.blake2b(ops)
    digest.update(counts)
    key = (tuple(h.group(g).name for g in gids), digest.digest())
    known = _PROVEN.setdefault(slim, {}).get(key)
    if known is not None:
        for k, rep in enumerate(known):
            first[gids[k]] = gids[rep]
            members.setdefault(gids[rep], []).append(gids[k])
        all_codes = op_type_codes(slim)[0]
        return CopyProof(first, members, own_ops, {gid: all_codes[own_ops[gid]] for gid in members})
    op_owner = np.full(n, -1, dtype=np.int64)
    op_owner[ops] = owner
    rank = np.zeros(n, dtype=np.int64)  # an op's position among its group's ops
    rank[ops] = np.arange(len(ops)) - np.repeat(starts[:-1], counts)
    src, dst = slim.edge_src, slim.edge_dst
    src_owner = op_owner[src]
    keep = np.flatnonzero((src_owner >= 0) & (src_owner == op_owner[dst]))  # edge id order
    edge_owner = src_owner[keep]
    by_group = np.argsort(edge_owner, kind="stable")
    keep, edge_owner = keep[by_group], edge_owner[by_group]
    edge_keys = (rank[src[keep]] * (int(counts.max()) + 1) + rank[dst[keep]]) * 4 + slim.edge_kind[keep]
    edge_counts = np.bincount(edge_owner, minlength=len(gids))
    edge_starts = np.concatenate(([0], np.cumsum(edge_counts)))
    codes = op_type_codes(slim)[0][ops]
    names = slim.names

    def names_of(k: int) -> list[str]:
        return [names[i] for i in ops[starts[k]:starts[k + 1]].tolist()]

    def suffixes(k: int) -> Optional[list[str]]:
        """The names of group ``k``'s ops after its own name, or None if one is not under it."""
        prefix = h.group(gids[k]).name + "/"
        own = names_of(k)
        if not all(map(str.startswith, own, repeat(prefix))):
            return None
        return [s[len(prefix):] for s in own]

    def same(k: int, rep: int, rep_suffixes: list[str]) -> bool:
        return (np.array_equal(codes[starts[k]:starts[k + 1]], codes[starts[rep]:starts[rep + 1]])
                and np.array_equal(edge_keys[edge_starts[k]:edge_starts[k + 1]],
                                   edge_keys[edge_starts[rep]:edge_starts[rep + 1]])
                and list(map(add, repeat(h.group(gids[k]).name + "/"), rep_suffixes)) == names_of(k))

    reps: dict[tuple[int, int], list[tuple[int, list[str]]]] = {}  # (ops, edges) -> [(first, its suffixes)]
    for k, gid in enumerate(gids):
        signature = (int(counts[k]), int(edge_counts[k]))
        for rep, rep_suffixes in reps.get(signature, ()):
            if same(k, rep, rep_suffixes):
                first[gid] = gids[rep]
                members[gids[rep]].append(gid)
                break
        else:
            own = suffixes(k)
            if own is None:
                return None
            reps.setdefault(signature, []).append((k, own))
            first[gid] = gid
            members[gid] = [gid]
    position = {gid: k for k, gid in enumerate(gids)}
    _PROVEN[slim][key] = [position[first[gid]] for gid in gids]
    return CopyProof(first, members, own_ops,
                     {gid: codes[starts[position[gid]]:starts[position[gid] + 1]] for gid in members})


_PROVEN: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # SlimGraph -> {key: each group's first}
