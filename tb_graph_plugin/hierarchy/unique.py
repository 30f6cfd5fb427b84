"""Which groups no other group can share a structure with, read from op counts alone.

Ours (issue 21: the first view before the rest; no reference document). A first view built
from a partial Hierarchy (``hierarchy.build_first_view_hierarchy``: the grouping phases run
only in the groups that view shows) does not hash templates: the hash of a group reads its
whole subtree (``templates``), which the partial build leaves unfinished. What a shown group's
children need from the templates is whether any other group shares their structure (their
``template`` id; a block series is made of siblings that do). This module answers "no" where
the op counts prove it:

A group ``C`` whose subtree holds more than half of the graph's ops of some op type ``t``
shares its structure with no other group of the *whole* Hierarchy. A group of the same
structure holds the same op types as many times (the hash colours each op by its op type,
and refines by the children's colours, recursively), so it holds more than half of the ``t``
ops too: it overlaps ``C``, so in a tree it contains ``C`` or lies inside it, holding exactly
``C``'s ops. Such a group wraps the other through levels of one child each, and a wrapper's
metagraph (one node) hashes apart from the metagraph it wraps (barring a 64-bit collision).
That holds whatever groups the rest of the build makes (an inferred scope, a series or a split
elsewhere only regroups ops under one group).

Where the op counts prove nothing (repeated blocks), ``copies`` may prove that siblings are exact
copies of each other instead.

Pre: ``h``'s tree holds every main op of the graph (scopes built; any later phase may have run).
Post: :func:`unique_structures` is True only when every group in its lists holds more than half
of the ops of some op type (:func:`unproven` lists those that do not); O(ops + groups x depth)
in numpy per list.
"""

from __future__ import annotations

import weakref

import numpy as np

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.hierarchy.tree import group_levels, group_parents

__all__ = ["unique_structures", "unproven", "owners", "op_type_codes", "op_types"]


def unique_structures(h: Hierarchy, sibling_lists: list[list[int]]) -> bool:
    """Whether each group in each list of siblings holds more than half of the ops of one op
    type (see the module docstring); ops in a list are ignored."""
    return not any(unproven(h, sibling_lists))


def unproven(h: Hierarchy, sibling_lists: list[list[int]]) -> list[list[int]]:
    """For each list of siblings, its groups that :func:`unique_structures` cannot prove unique
    (in list order; ops left out)."""
    n = h.n_ops
    lists = [[g for g in siblings if g >= n] for siblings in sibling_lists]
    if not any(lists):
        return [[] for _ in lists]
    parent = group_parents(h)
    level = group_levels(parent)
    op_parent = h.op_parent_array()
    main = np.flatnonzero(op_parent >= 0)
    all_codes, n_types = op_type_codes(h.slim)
    codes = all_codes[main]
    total = np.bincount(codes, minlength=n_types)
    return [[g for g, ok in zip(gids, _holds_most_of_a_type(gids, parent, level, op_parent[main] - n, codes,
                                                             total, n, n_types)) if not ok] if gids else []
            for gids in lists]


_CODES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # SlimGraph -> (codes, count, op types)


def op_type_codes(slim) -> tuple[np.ndarray, int]:
    """Each op's op type as a number, and how many there are (numbered in C, once per SlimGraph:
    a first view's partial builds check twice a round)."""
    return _numbered(slim)[:2]


def op_types(slim) -> list[str]:
    """The op types :func:`op_type_codes` numbers, in the order of their numbers."""
    return _numbered(slim)[2]


def _numbered(slim) -> tuple:
    found = _CODES.get(slim)
    if found is None:
        code_of = {op: k for k, op in enumerate(dict.fromkeys(slim.ops))}
        found = _CODES[slim] = (np.fromiter(map(code_of.__getitem__, slim.ops), dtype=np.int64, count=len(slim.ops)),
                                len(code_of), list(code_of))
    return found


def owners(gids, parent: np.ndarray, level: np.ndarray, n: int) -> np.ndarray:
    """Each group's position in ``gids`` (groups no two of which nest), or its ancestor's; -1
    for a group in none of their subtrees. ``parent``/``level``: ``tree.group_parents`` and
    ``tree.group_levels``."""
    under = np.full(len(parent), -1, dtype=np.int64)
    under[np.asarray(gids, dtype=np.int64) - n] = np.arange(len(gids))
    for depth in range(1, int(level.max()) + 1):  # parents before children: one pass per level
        at = np.flatnonzero((level == depth) & (under < 0))
        under[at] = under[parent[at]]
    return under


def _holds_most_of_a_type(gids, parent, level, op_group, codes, total, n, n_types) -> np.ndarray:
    """For sibling groups ``gids``, whether each holds more than half of the ops of one op type;
    ``op_group``: each main op's group (index), ``codes`` its op type."""
    owner = owners(gids, parent, level, n)[op_group]
    inside = owner >= 0
    keys = owner[inside] * n_types + codes[inside]
    if len(gids) * n_types <= 1 << 22:  # counted in place (no sort)
        counts = np.bincount(keys, minlength=len(gids) * n_types)
        keys = np.flatnonzero(counts)
        counts = counts[keys]
    else:
        keys, counts = np.unique(keys, return_counts=True)
    owners_, types = np.divmod(keys, n_types)
    proven = np.zeros(len(gids), dtype=bool)
    proven[owners_[2 * counts > total[types]]] = True
    return proven
