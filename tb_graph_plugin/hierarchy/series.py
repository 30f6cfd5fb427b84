"""Hierarchy phases 3 and 6: SeriesNodes for runs of repeated siblings.

Op series follow the stock dashboard ([TB-GRAPH-DOC] "Detect series"; [TB-SRC]
``hierarchy.ts``): a group's op children are clustered by op; leaf names ``^(\\D*)(\\d+)$`` with
consecutive numbers (``add_1 .. add_N``; a bare ``add`` counts as ``add_0``) form
``add_[1-N]`` when the run has at least ``series_min_size`` members.

Block series generalize this to groups (ours): sibling groups whose labels differ in one
number (``TransformerEncoderLayer[0..5]``, ``layers.0..N``, ``Block[i]``, ``block1..N``,
``transformer_block_1.._N``, other digit runs fixed), or in one letter that follows a number
(Inception's ``Mixed_6b..6e``, EfficientNet's ``block6a..6d``: ``a`` is index 0), whose indices
are consecutive and whose structural hash (phase 5) is equal form ``prefix[a-b]suffix``
(``Mixed_6[b-e]``; inside a PyTorch label's brackets ``InceptionC[Mixed_6b-e]``) when the run has at
least ``block_series_min_size`` members. Labels are read as layer names: when most siblings
share a trailing uniquifier (a Keras 3 trace calls layer ``encoder_block_1``'s scope
``encoder_block_1_2``), each label's last ``_<n>`` is dropped first, and a bare
``encoder_block`` is index 0 of ``encoder_block_1..`` (the stock op rule's ``add``).

Pre-condition: op series - scopes built; block series - templates hashed.
Block series re-route their parent's metaedges (a member-to-member metaedge moves into
the series, others now end at the series) instead of rebuilding all metaedges.

Series never invent cycles (ours; the stock rule does: ``AddN_[0-121]`` in a training step
is not a chain and draws a reversed edge). A run becomes a SeriesNode only if (a) its
members, in index order, form a chain (each feeds the next, every member-to-member edge
goes forward) or are mutually unconnected (``dataflow.series_shape``), or lie on one cycle
the graph already has with member-to-member edges going forward only (a training step's
gradient sums ``AddN_[0-N]``, each reading from and feeding ``gradient_tape``), and (b)
contracting it, together with the runs already made in the same group, keeps the group's
metagraph free of new cycles (``dataflow.Contraction``). A refused run's members stay
children of the parent. Op series read the children's dataflow from base edges (metaedges
do not exist yet), block series from the parent's metaedges.

A run whose SeriesNode name is in ``options.ungrouped_series`` is not made (the stock
"ungroup this series"); its members stay children of the parent, and a block run's
members are not offered to another, shorter run.

Post-condition: each SeriesNode takes the place of its first member in its parent's
children; its children are the members, ordered by increasing consecutive index; members
keep their names; ``h.series_of_op`` maps each member to its series; a series' members
are a chain, unconnected, or on one existing cycle with forward edges only, and a parent's
metagraph has no cycle its children's dataflow does not have.
"""

from __future__ import annotations

import re
from collections import Counter
from operator import itemgetter
from typing import Optional

import numpy as np

from tb_graph_plugin.hierarchy.dataflow import Contraction, graph_from_metaedges
from tb_graph_plugin.hierarchy.infer_names import shared_uniquifier
from tb_graph_plugin.hierarchy.model import Hierarchy, MetaEdge, SeriesNode
from tb_graph_plugin.hierarchy.placement import ChildEdges, placed_edges
from tb_graph_plugin.hierarchy.scopes import add_group
from tb_graph_plugin.hierarchy.series_names import op_clusters

__all__ = ["detect_op_series", "detect_block_series"]

_DIGITS = re.compile(r"(\d+)")
_UNIQUIFIER = re.compile(r"_\d+$")
_LETTER = re.compile(r"(?<=\d)[a-z](?![A-Za-z])")  # a block index that is a letter after a number: 6b, 2a
_MANY = 256  # a longer list is cut into runs (``_runs``) or counted (op series) in C


def _runs(items: list[tuple[int, int]], min_size: int) -> list[list[tuple[int, int]]]:
    """Split (index, child) pairs sorted by index into consecutive runs of >= min_size;
    O(items), in C when they are one run (``add_1 .. add_N``)."""
    if len(items) < min_size:
        return []
    index = list(map(itemgetter(0), items))
    if index[-1] - index[0] == len(index) - 1 and len(set(index)) == len(index):
        return [items]
    if len(index) < _MANY or index[-1] >= 2 ** 62:
        cuts = [j for j in range(1, len(index)) if index[j] != index[j - 1] + 1]
        bounds = [0, *cuts, len(items)]
        return [items[a:b] for a, b in zip(bounds, bounds[1:]) if b - a >= min_size]
    # many items (an optimizer's thousands of ``mul_<k>``, numbered apart): the cuts in numpy
    bounds = np.concatenate(([0], np.flatnonzero(np.diff(np.array(index, dtype=np.int64)) != 1) + 1, [len(items)]))
    long = np.flatnonzero(np.diff(bounds) >= min_size)
    return [items[a:b] for a, b in zip(bounds[long].tolist(), bounds[long + 1].tolist())]


def _series_name(h: Hierarchy, g, run, prefix: str, suffix: str, letters: bool = False) -> tuple[str, str]:
    """(hierarchy name, label) the SeriesNode of ``run`` inside ``g`` gets if made now;
    ``letters``: the indices are letters (0 is ``a``)."""
    lo, hi = run[0][0], run[-1][0]
    if letters:
        lo, hi = chr(ord("a") + lo), chr(ord("a") + hi)
    if (prefix.endswith("[") and suffix.startswith("]")) or (letters and "[" in prefix and suffix.startswith("]")):
        label = f"{prefix}{lo}-{hi}{suffix}"  # Layer[0] .. Layer[5] -> Layer[0-5]; InceptionC[Mixed_6b-e]
    else:
        label = f"{prefix}[{lo}-{hi}]{suffix}"  # block2[a-c]
    base = "" if g.parent < 0 else g.name + "/"
    name = base + label
    while name in h.group_index or name in h.slim.index:
        name += "*"
    return name, label


def _make_series(h: Hierarchy, g, run, prefix: str, suffix: str, kind: str, letters: bool = False):
    """Create the SeriesNode of one run (members re-parented); caller fixes g.children."""
    name, label = _series_name(h, g, run, prefix, suffix, letters)
    members = [c for _, c in run]
    s = add_group(h, name, label, g.id, cls=SeriesNode, series_kind=kind, prefix=prefix,
                  suffix=suffix, indices=[i for i, _ in run])
    s.children = members
    h.set_parents(members, s.id)
    h.series_of_op.update(dict.fromkeys(members, s.id))
    return s


class _SeriesCheck:
    """Conditions (a) and (b) for the runs of one group; the children graph built on first use
    (``edges``: from base edges; None: from the group's metaedges)."""

    def __init__(self, h: Hierarchy, g, edges: ChildEdges | None) -> None:
        self.h, self.g, self.edges = h, g, edges
        self.pos: dict[int, int] = {}
        self.contraction = None

    def accepts(self, run) -> bool:
        if self.contraction is None:
            h, g = self.h, self.g
            if self.edges is None:
                self.contraction = Contraction(graph_from_metaedges(h, g.id))
            else:
                self.contraction = self.edges.contraction(g.id)
            self.pos = dict(zip(g.children, range(len(g.children))))
        members = list(map(self.pos.__getitem__, map(itemgetter(1), run)))
        shape = self.contraction.shape(members)
        if shape is None or (shape == "forward" and not self.contraction.on_one_cycle(members)):
            return False
        return self.contraction.try_add(members)


def _replace_children(g, made) -> None:
    """Each series takes the place of its first member in ``g.children``; O(children), in C
    (each child mapped to its series id or itself, duplicates dropped by ``dict.fromkeys``:
    a series id is no child's id)."""
    if not made:
        return
    where: dict[int, int] = {}
    for s in made:
        where.update(dict.fromkeys(s.children, s.id))
    g.children = list(dict.fromkeys(map(where.get, g.children, g.children)))


def detect_op_series(h: Hierarchy) -> int:
    min_size = h.options.series_min_size
    if min_size <= 0:
        return 0
    n = h.n_ops
    ops = h.slim.ops
    names = h.slim.names
    ungrouped = h.options.ungrouped_series
    made = 0
    edges = placed_edges(h)
    for g in h.regrouped_groups():
        children = g.children
        if len(children) + 1 < min_size:
            continue
        op_of = [ops[c] for c in children if c < n]
        if len(op_of) + 1 < min_size:
            continue
        # A run's members share one op: only ops that many children have can form one
        # (an op held k times repeats k - 1 times: too few repeats, no op is held that often).
        distinct = set(op_of)
        if len(op_of) - len(distinct) + 2 < min_size:
            continue
        per_op = Counter(op_of) if len(op_of) >= _MANY else None
        most = max(per_op.values()) if per_op is not None else max(map(op_of.count, distinct))
        if most + 1 < min_size:
            continue
        op_children = [c for c in children if c < n]
        per_op = per_op or Counter(op_of)
        if min(per_op.values()) + 1 < min_size:
            op_children = [c for c in op_children if per_op[ops[c]] + 1 >= min_size]
        clusters, bare = op_clusters(names, ops, op_children)
        big = [(key, items) for key, items in clusters.items() if len(items) + 1 >= min_size]
        if not big:
            continue
        here: list = []
        check = _SeriesCheck(h, g, edges)
        for key, items in big:
            if key in bare:
                items.append((0, bare[key]))
            items.sort()
            for run in _runs(items, min_size):
                if ungrouped and _series_name(h, g, run, key[1], "")[0] in ungrouped:
                    continue  # "ungroup this series": members stay children of g
                if not check.accepts(run):
                    if not (run[0][0] == 0 and key in bare):
                        continue
                    run = run[1:]  # the bare ``add`` may be another role (a step counter)
                    if len(run) < min_size or not check.accepts(run):
                        continue
                here.append(_make_series(h, g, run, key[1], "", "op"))
        _replace_children(g, here)
        made += len(here)
    return made


def detect_block_series(h: Hierarchy, only: Optional[list[int]] = None) -> list:
    """Make block SeriesNodes (among the children of the groups ``only``, when given); return them
    (metaedges of their parents are re-routed)."""
    min_size = h.options.block_series_min_size
    if min_size <= 0:
        return []
    h.metaedge_table = None  # the templates' read of the metaedges: the series re-route some
    n = h.n_ops
    ungrouped = h.options.ungrouped_series
    made: list = []
    groups = h.groups
    holders = {g.parent for g in groups}  # most groups hold ops only
    for g in (list(groups) if only is None else [groups[gid - n] for gid in only]):
        children = g.children
        if len(children) < min_size or g.id not in holders:
            continue
        groups_here = [c for c in children if c >= n and not isinstance(groups[c - n], SeriesNode)]
        if len(groups_here) < min_size:
            continue
        # A run's members share one structural hash: a child whose hash fewer than
        # min_size siblings have joins no run (read no label of a group without one).
        hashes = [groups[c - n].structure_hash for c in groups_here]
        per_hash = Counter(hashes)
        if max(per_hash.values()) < min_size:
            continue
        keyed: dict[tuple, list[tuple[int, int]]] = {}
        labels = [groups[c - n].label for c in groups_here]
        if shared_uniquifier(labels):  # a Keras 3 trace: scope encoder_block_1_2 is layer encoder_block_1
            labels = [_UNIQUIFIER.sub("", x) for x in labels]
        bare = []
        for c, label, structure_hash in zip(groups_here, labels, hashes):
            if per_hash[structure_hash] < min_size:
                continue
            parts = _DIGITS.split(label)
            if len(parts) == 1:
                bare.append((c, label, structure_hash))
            for p in range(1, len(parts), 2):
                key = (tuple(parts[:p]), tuple(parts[p + 1:]), structure_hash)
                keyed.setdefault(key, []).append((int(parts[p]), c))
            for m in _LETTER.finditer(label):  # Mixed_6b .. Mixed_6e, block2a .. block2c: the index is a letter
                key = ((label[:m.start()],), (label[m.end():],), structure_hash, "letter")
                keyed.setdefault(key, []).append((ord(m.group()) - ord("a"), c))
        # encoder_block before encoder_block_1 .. _5 is index 0 (stock: add, add_1)
        for c, label, structure_hash in bare:
            key = ((label + "_",), ("",), structure_hash)
            if key in keyed:
                keyed[key].append((0, c))
        claimed: set[int] = set()
        runs = []
        for key, items in keyed.items():
            if len(items) < min_size:
                continue
            items.sort()
            for run in _runs(items, min_size):
                runs.append((len(run), key, run))
        runs.sort(key=lambda r: -r[0])
        here = []
        check = _SeriesCheck(h, g, None)
        for _, key, run in runs:
            if any(c in claimed for _, c in run):
                continue
            if not check.accepts(run):
                continue  # not a chain, or a cycle: its members may still join another run
            claimed.update(c for _, c in run)
            prefix, suffix = "".join(key[0]), "".join(key[1])
            letters = len(key) == 4  # (prefix, suffix, hash, "letter")
            if ungrouped and _series_name(h, g, run, prefix, suffix, letters)[0] in ungrouped:
                continue  # ungrouped: its members stay children of g (and stay claimed)
            here.append(_make_series(h, g, run, prefix, suffix, "block", letters))
        if here:
            _replace_children(g, here)
            _reroute_metaedges(g, here)
            made.extend(here)
    return made


def _reroute_metaedges(g, made) -> None:
    """Metaedges of ``g`` touching members now end at the series, or move inside it."""
    where = {}
    for s in made:
        for c in s.children:
            where[c] = s
    table: dict = {}
    order = []
    for me in g.metaedges:
        sa, sb = where.get(me.src), where.get(me.dst)
        if sa is not None and sa is sb:
            sa.metaedges.append(me)  # between two members: inside the series
            if me.n_control != len(me.base_edges):
                sa.has_non_control_edges = True
            continue
        key = (sa.id if sa is not None else me.src, sb.id if sb is not None else me.dst)
        cur = table.get(key)
        if cur is None:
            if sa is None and sb is None:
                table[key] = me
            else:
                table[key] = cur = MetaEdge(key[0], key[1], list(me.base_edges), me.size,
                                            me.n_control, me.n_reference)
            order.append(key)
            continue
        cur.base_edges.extend(me.base_edges)
        cur.size += me.size
        cur.n_control += me.n_control
        cur.n_reference += me.n_reference
    g.metaedges = [table[k] for k in order]
