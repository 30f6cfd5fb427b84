"""Hierarchy phase 7: per-group cardinality, depth and level; histograms when asked.

Follows the stock dashboard ([TB-GRAPH-DOC]: "keep track of device names, XLAClusters,
opHistograms"; glossary: *level* = distance from the root, *depth* = distance to the
bottom-most leaf, a group holding only ops has depth 1).

Pre-condition: the group tree is final, ``h.op_parent`` names the group whose ``children`` hold
each MAIN op (-1 for embeddings).
Post-condition of :func:`compute_stats`: for every group, ``cardinality`` = number of MAIN ops
below it, ``n_embeddings`` = embedding ops beside those ops, ``depth`` and ``level``; the
root's cardinality is the number of MAIN ops. Cost: one pass over the groups, numpy over the
ops and per level (``tree.group_levels``).

:func:`histograms` (ours: done when a group is shown or described, not for every group before
the first view): the ops below a group counted by op (embeddings excluded), by device and by
XLA cluster, each keyed in order of first occurrence in a pre-order walk of the group's children
(the order a bottom-up merge of the children's histograms gives: ties sort the same). Cost
O(ops below the group), memoized per hierarchy. :func:`top_placement` (what a drawn group shows:
its most common device and XLA cluster) walks nothing when no op of the graph has either (a
trace's graph, a PyTorch graph).
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np

from typing import Optional

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.hierarchy.tree import ChildrenArrays, deepest_first, group_levels, group_parents, node_parents

__all__ = ["compute_stats", "histograms", "Histograms", "top_placement"]


def compute_stats(h: Hierarchy, within: Optional[list[int]] = None) -> None:
    """The stats of every group (module docstring); with ``within`` (the ids of some groups and
    of every group under them, regrouped since the stats were computed: an expand-ahead build's
    subtree), of those groups only, and the depth of their ancestors."""
    n = h.n_ops
    groups = h.groups
    m = len(groups)
    slim = h.slim
    # direct op children per group, and the embeddings each main op owns (counted once, for
    # its owner, however many consumers list it)
    if within is None:
        changed = groups
        parent = group_parents(h)  # ids - n; negative for the root
        level = group_levels(parent)
        op_parent = h.op_parent_array() - n
        tops = []
    else:  # the subtree's lists only; its roots' levels as they were
        changed = [groups[gid - n] for gid in within]
        node_parent = node_parents(ChildrenArrays(h, only=within), n)
        parent = node_parent[n:] - n
        at = np.asarray(within, dtype=np.int64) - n
        tops = at[parent[at] < 0].tolist()
        top_level = np.zeros(m, dtype=np.int64)
        top_level[tops] = [groups[k].level for k in tops]
        level = group_levels(parent, top_level)
        op_parent = node_parent[:n] - n
    placed = op_parent >= 0
    owners = np.asarray(slim.owner, dtype=np.int64)
    owned = np.bincount(owners[owners >= 0], minlength=n) if n else np.zeros(0, dtype=np.int64)
    card = np.bincount(op_parent[placed], minlength=m)
    emb = np.bincount(op_parent[placed], weights=owned[placed], minlength=m).astype(np.int64)
    depth = (card > 0).astype(np.int64)
    for ids, up in deepest_first(parent, level):  # children before parents
        np.add.at(card, up, card[ids])
        np.add.at(emb, up, emb[ids])
        np.maximum.at(depth, up, depth[ids] + 1)
    if within is not None:  # the groups set, in the order of ``changed``
        card, emb, depth, level = card[at], emb[at], depth[at], level[at]
    for g, c, e, d, lv in zip(changed, card.tolist(), emb.tolist(), depth.tolist(), level.tolist()):
        g.cardinality = c
        g.n_embeddings = e
        g.depth = d
        g.level = lv
    for k in tops:  # each ancestor at least as deep as the regrouped subtree below it
        below = groups[k]
        while below.parent >= 0:
            above = groups[below.parent - n]
            above.depth = max(above.depth, below.depth + 1)
            below = above
    if within is None or h.histogram_memo is None:
        h.histogram_memo = _Memo(any(slim.devices), any(slim.xla_clusters), {})
    else:  # what was counted read the subtree's old order
        h.histogram_memo = _Memo(h.histogram_memo.any_device, h.histogram_memo.any_xla, {})


@dataclasses.dataclass
class _Memo:
    """``h.histogram_memo``: whether any op has a device / an XLA cluster, and what was counted."""

    any_device: bool
    any_xla: bool
    found: dict  # group id -> Histograms


@dataclasses.dataclass(frozen=True)
class Histograms:
    """The ops below one group counted by op, by device and by XLA cluster (empty when none)."""

    ops: dict
    devices: dict
    xla: dict


def histograms(h: Hierarchy, gid: int) -> Histograms:
    """The histograms of group ``gid`` (see the module docstring), computed on first use."""
    memo = h.histogram_memo
    found = memo.found.get(gid)
    if found is not None:
        return found
    below = list(h.leaf_ops(gid))  # in pre-order of the children
    slim = h.slim
    found = Histograms(_counts(slim.ops, below),
                       _counts(slim.devices, below, True) if memo.any_device else {},
                       _counts(slim.xla_clusters, below, True) if memo.any_xla else {})
    memo.found[gid] = found
    return found


def top_placement(h: Hierarchy, gid: int) -> tuple[Optional[str], Optional[str]]:
    """The device and the XLA cluster most ops below group ``gid`` have (a tie: the larger
    name; None for none); ``(None, None)`` at once when no op of the graph has either."""
    memo = h.histogram_memo
    if not (memo.any_device or memo.any_xla):
        return None, None
    counted = histograms(h, gid)
    return _top(counted.devices), _top(counted.xla)


def _top(hist: dict) -> Optional[str]:
    return max(hist.items(), key=lambda kv: (kv[1], kv[0]))[0] if hist else None


def _counts(column: list, below: list[int], skip_empty: bool = False) -> dict:
    """How often each value of ``column`` occurs at ``below``, in order of first occurrence
    (``skip_empty``: None and "" not counted)."""
    counts = collections.Counter(map(column.__getitem__, below))
    if skip_empty:
        counts.pop(None, None)
        counts.pop("", None)
    return dict(counts)
