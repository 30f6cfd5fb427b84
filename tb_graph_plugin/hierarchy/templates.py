"""Hierarchy phase 5: structural templates by a bottom-up Weisfeiler-Lehman hash.

Replaces the stock ``clusterSimilarSubgraphs`` (signature + pairwise DFS comparison,
O(clusters x nodes^2), switched off above 10k nodes; [TB-GRAPH-DOC] "Finding similar
subgraphs") with a near-linear hash, ours (after Weisfeiler-Lehman graph kernels [WL] and
Merkle trees [MERKLE87], see docs/references.md): groups are visited children first (one level
of the tree at a time, deepest first); inside a group's metagraph each child
starts with a colour (an op: its op type; a group: its structure hash), refined
``template_rounds`` times by the sorted colours of its in- and out-neighbours (metaedge
kinds included); the group's ``structure_hash`` hashes the sorted final colours and the
sorted coloured metaedges. Names, shapes and attrs are ignored. The hash of a metagraph is
memoized (the 48 identical layers of a deep model are refined once; the memo key of a whole
pass is read from ``h.metaedge_table`` and a level's children colours gathered in numpy, as
bytes); metagraphs with at
least ``BIG_METAGRAPH`` metaedges are refined with numpy (neighbour multisets summed after
a 64-bit mix instead of sorted), those of one level together (their disjoint union).

Groups sharing a hash with at least one other group get the same ``template`` id
(``T0``, ``T1``, ... numbered in pre-order of their first member); a unique structure
gets ``template = None`` (like the stock dashboard, which keeps only shared clusters).

Pre-condition: metaedges built for the final tree.
Post-condition: two groups with isomorphic metagraphs (same op types, recursively same
child structure) have the same ``structure_hash``; ``h.templates`` maps each template id to
its >= 2 group ids in pre-order; cost O(sum over groups of (children + metaedges) log).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.hierarchy.tree import ChildrenArrays, group_levels, group_parents, node_parents
from tb_graph_plugin.hierarchy.unique import op_type_codes, op_types
from tb_graph_plugin.wire import EdgeKind, EdgeKindCode

__all__ = ["hash_structures", "number_templates", "number_grouped_templates", "BIG_METAGRAPH"]

BIG_METAGRAPH = 512
"""Metagraphs with at least this many metaedges (an optimizer's thousands of update ops)
are refined with numpy; the hash is a function of the metagraph alone, so isomorphic
groups (same edge count) always take the same path."""

_KIND_SALT = {EdgeKind.DATA: 1, EdgeKind.CONTROL: 2, EdgeKind.REFERENCE: 3}  # mixed into edge hashes
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_IN, _OUT, _EDGE = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finalizer, elementwise on uint64 (wrapping arithmetic)."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


def _wl_hash_numpy(colour: list[int], a: np.ndarray, b: np.ndarray, k: np.ndarray, rounds: int,
                   is_series: bool) -> int:
    """The same refinement with multisets summed instead of sorted (order-free either way);
    ``a``/``b``: the metaedges' source/destination positions, ``k`` their ``_KIND_SALT``."""
    col = np.array(colour, dtype=np.int64).view(np.uint64)
    col, edge_keys = _refine(col, a.astype(np.intp, copy=False), b.astype(np.intp, copy=False), k, rounds)
    return hash((is_series, np.sort(col).tobytes(), np.sort(edge_keys).tobytes()))


def _refine(col: np.ndarray, a: np.ndarray, b: np.ndarray, k: np.ndarray, rounds: int) -> tuple:
    """``rounds`` of refinement of the colours ``col`` (uint64) by the summed mixes of their in-
    and out-neighbours over the edges ``a -> b`` of salts ``k``; the final colours and each edge's
    key."""
    with np.errstate(over="ignore"):
        for _ in range(rounds):
            ins = np.zeros(len(col), dtype=np.uint64)
            outs = np.zeros(len(col), dtype=np.uint64)
            np.add.at(outs, a, _mix(col[b] + k * _OUT))
            np.add.at(ins, b, _mix(col[a] + k * _IN))
            col = _mix(col ^ _mix(ins + _IN) ^ _mix(outs + _OUT))
        return col, _mix(_mix(col[a] + _EDGE) ^ (col[b] * _M1) ^ k)


def _wl_hash_many(graphs: list[tuple], rounds: int) -> list[int]:
    """``_wl_hash_numpy`` of several metagraphs ``(colour, a, b, k, is_series)`` at once, refined as
    their disjoint union (the same hashes: each node's sums run over its own metagraph's edges)."""
    sizes = [len(colour) for colour, *_ in graphs]
    counts = [len(a) for _, a, *_ in graphs]
    node_start = np.concatenate(([0], np.cumsum(sizes)))
    edge_start = np.concatenate(([0], np.cumsum(counts)))
    col = np.concatenate([np.asarray(colour, dtype=np.int64) for colour, *_ in graphs]).view(np.uint64)
    shift = np.repeat(node_start[:-1], counts)
    a = np.concatenate([a for _, a, *_ in graphs]).astype(np.intp) + shift
    b = np.concatenate([b for _, _, b, *_ in graphs]).astype(np.intp) + shift
    k = np.concatenate([k for *_, k, _ in graphs])
    col, edge_keys = _refine(col, a, b, k, rounds)
    col = col[np.lexsort((col, np.repeat(np.arange(len(graphs)), sizes)))]  # sorted within each metagraph
    edge_keys = edge_keys[np.lexsort((edge_keys, np.repeat(np.arange(len(graphs)), counts)))]
    return [hash((g[4], col[node_start[i]:node_start[i + 1]].tobytes(),
                  edge_keys[edge_start[i]:edge_start[i + 1]].tobytes())) for i, g in enumerate(graphs)]


def _edges(g, control, reference, data) -> tuple:
    """``g``'s metaedges as (source position, destination position, EdgeKind)."""
    if not g.metaedges:
        return ()
    pos = {c: k for k, c in enumerate(g.children)}
    return tuple((pos[me.src], pos[me.dst],
                  control if me.n_control == len(me.base_edges)
                  else (reference if me.n_reference else data))  # MetaEdge.kind, inlined
                 for me in g.metaedges)


_KIND_OF_CODE = [EdgeKind[code.name] for code in sorted(EdgeKindCode)]
_SALT_OF_CODE = np.array([_KIND_SALT[kind] for kind in _KIND_OF_CODE], dtype=np.uint64)


class _TableEdges:
    """Each group's metaedges as ``_edges`` gives them, read from ``h.metaedge_table`` in numpy
    (the MetaEdge objects are not made): ``key`` packs them into bytes, a memo key equal for two
    groups exactly when their edges are (a key of either form finds the same hash: only the
    lookup is faster); ``edges`` unpacks them for a group whose hash is computed, ``arrays`` gives
    them as arrays for a big metagraph."""

    def __init__(self, h: Hierarchy, tree: ChildrenArrays, only: Optional[np.ndarray] = None) -> None:
        table = self.table = h.metaedge_table
        self.src, self.dst = tree.position[table.src], tree.position[table.dst]
        packed = (self.src * (int(tree.lengths.max()) + 1) + self.dst) * 4 + table.kind
        rows = table.rows if only is None else {g: table.rows[g] for g in only.tolist() if g in table.rows}
        self.keys = {gid: packed[lo:hi].tobytes() for gid, (lo, hi) in rows.items()}

    def edges(self, gid: int) -> tuple:
        lo, hi = self.table.rows[gid]
        return tuple(zip(self.src[lo:hi].tolist(), self.dst[lo:hi].tolist(),
                         map(_KIND_OF_CODE.__getitem__, self.table.kind[lo:hi].tolist())))

    def count(self, gid: int) -> int:
        lo, hi = self.table.rows[gid]
        return hi - lo

    def arrays(self, gid: int) -> tuple:
        lo, hi = self.table.rows[gid]
        return self.src[lo:hi], self.dst[lo:hi], _SALT_OF_CODE[self.table.kind[lo:hi]]


def _structure_hash(colour: list[int], edges: tuple, is_series: bool, rounds: int) -> int:
    """The hash of one metagraph: children colours in order, edges ``(a, b, EdgeKind)`` by position."""
    if len(edges) >= BIG_METAGRAPH:
        a = np.array([e[0] for e in edges], dtype=np.intp)
        b = np.array([e[1] for e in edges], dtype=np.intp)
        k = np.array([_KIND_SALT[e[2]] for e in edges], dtype=np.uint64)
        return _wl_hash_numpy(colour, a, b, k, rounds, is_series)
    if edges:
        n_children = len(colour)
        for _ in range(rounds):
            ins: list[list] = [[] for _ in range(n_children)]
            outs: list[list] = [[] for _ in range(n_children)]
            for a, b, k in edges:
                outs[a].append(hash((colour[b], k)))
                ins[b].append(hash((colour[a], k)))
            colour = [
                hash((colour[k], tuple(sorted(ins[k])), tuple(sorted(outs[k]))))
                for k in range(n_children)
            ]
    return hash(
        (
            is_series,
            tuple(sorted(colour)),
            tuple(sorted((colour[a], colour[b], k) for a, b, k in edges)),
        )
    )


def hash_structures(h: Hierarchy, dirty: Optional[set] = None) -> None:
    """Set ``structure_hash`` of every group (or, with ``dirty``, of those group ids only, their
    children's hashes being current); template ids are left to :func:`number_templates`."""
    op_colour = {op: hash(("op", op)) for op in op_types(h.slim)}
    # The hash is a pure function of (is_series, child colours in order, edges by position):
    # the 48 identical layers of a deep model are refined once, then looked up.
    memo: dict[tuple, int] = {}
    if h.metaedge_table is not None:
        _hash_levels(h, op_colour, memo, dirty)
    else:
        _hash_groups(h, op_colour, memo, dirty)


def _hash_groups(h: Hierarchy, op_colour: dict, memo: dict, dirty: Optional[set]) -> None:
    """Hash the groups ``dirty`` (all when None), deepest level first, from their metaedges."""
    n, ops, groups, rounds = h.n_ops, h.slim.ops, h.groups, h.options.template_rounds
    data, control, reference = EdgeKind.DATA, EdgeKind.CONTROL, EdgeKind.REFERENCE
    if dirty is None:
        level = group_levels(group_parents(h)).tolist()
        ids = sorted(range(n, n + len(groups)), key=lambda gid: -level[gid - n])
    else:  # a few groups: their levels by climbing
        ids = sorted(dirty, key=lambda gid: -len(h.ancestors(gid)))
    for gid in ids:  # children before parents
        g = groups[gid - n]
        children = g.children
        if not children:
            g.structure_hash = hash(("empty", g.is_series))
            continue
        colour = [op_colour[ops[c]] if c < n else groups[c - n].structure_hash for c in children]
        edges = _edges(g, control, reference, data)
        key = (g.is_series, tuple(colour), edges)
        cached = memo.get(key)
        if cached is None:
            cached = memo[key] = _structure_hash(colour, edges, g.is_series, rounds)
        g.structure_hash = cached


def _hash_levels(h: Hierarchy, op_colour: dict, memo: dict, only: Optional[set] = None) -> None:
    """Hash every group (or the group ids ``only``, the others' hashes being current) from
    ``h.metaedge_table``, one level at a time, deepest first: the colours of a level's children
    gathered at once (numpy), each group's memo key their bytes."""
    n, groups, rounds = h.n_ops, h.groups, h.options.template_rounds
    colour_by_type = np.array([op_colour[op] for op in op_types(h.slim)], dtype=np.int64)
    colour_of = np.zeros(n + len(groups), dtype=np.int64)  # ops: their op's; groups: as hashed
    if only is None:
        tree = ChildrenArrays(h)
        colour_of[:n] = colour_by_type[op_type_codes(h.slim)[0]]
        level = group_levels(group_parents(h))
        by_level = np.argsort(-level, kind="stable")
    else:  # the lists of ``only`` read; their children's colours as they are; levels from the
        # groups of ``only`` whose parent is outside it
        if not only:
            return
        at = np.sort(np.fromiter(only, dtype=np.int64, count=len(only)))
        tree = ChildrenArrays(h, only=at.tolist())
        kids = tree.flat
        op_kids, group_kids = kids[kids < n], kids[kids >= n]
        colour_of[op_kids] = colour_by_type[op_type_codes(h.slim)[0][op_kids]]
        colour_of[group_kids] = [groups[k].structure_hash for k in (group_kids - n).tolist()]
        parent = node_parents(tree, n)[n:] - n
        tops = at[parent[at - n] < 0]
        top_level = np.zeros(len(groups), dtype=np.int64)
        top_level[tops - n] = [len(h.ancestors(t)) for t in tops.tolist()]
        level = group_levels(parent, top_level)
        by_level = (at - n)[np.argsort(-level[at - n], kind="stable")]
    table = _TableEdges(h, tree, None if only is None else by_level + n)
    edge_keys = table.keys
    bounds = np.searchsorted(-level[by_level], np.arange(-int(level.max()), 2)).tolist()
    for lo, hi in zip(bounds, bounds[1:]):
        at = by_level[lo:hi]
        lengths = tree.lengths[at]
        ends = np.cumsum(lengths)
        take = np.repeat(tree.start[at] - (ends - lengths), lengths) + np.arange(int(ends[-1]) if len(at) else 0)
        colours = colour_of[tree.flat[take]]
        packed = colours.tobytes()
        big: dict[tuple, tuple] = {}  # key -> (group, children colours): big metagraphs, hashed together
        waiting = []  # (group, key) of the groups whose hash the batch gives
        for k, a, b in zip(at.tolist(), (ends - lengths).tolist(), ends.tolist()):
            g = groups[k]
            if a == b:
                g.structure_hash = hash(("empty", g.is_series))
                continue
            edge_key = edge_keys.get(g.id, ())
            key = (g.is_series, packed[8 * a:8 * b], edge_key)
            found = memo.get(key)
            if found is None:
                if edge_key and table.count(g.id) >= BIG_METAGRAPH:
                    big.setdefault(key, (g, colours[a:b]))
                    waiting.append((g, key))
                    continue
                edges = table.edges(g.id) if edge_key else ()
                found = memo[key] = _structure_hash(colours[a:b].tolist(), edges, g.is_series, rounds)
            g.structure_hash = found
        if big:
            found_big = _wl_hash_many([(colour, *table.arrays(g.id), g.is_series) for g, colour in big.values()],
                                      rounds)
            memo.update(zip(big, found_big))
            for g, key in waiting:
                g.structure_hash = memo[key]
        colour_of[n + at] = [groups[k].structure_hash for k in at.tolist()]


def number_templates(h: Hierarchy) -> None:
    """Template ids ``T0``, ``T1``, ... for hashes shared by >= 2 groups, in pre-order of their
    first member; members listed in pre-order; the root has none."""
    groups, n = h.groups, h.n_ops
    pre = h.pre_order_groups()
    by_hash: dict[int, list[int]] = {}
    for g in pre[1:]:  # the root has no template
        by_hash.setdefault(g.structure_hash, []).append(g.id)
    h.templates = {}
    for g in pre:
        g.template = None
    for members in by_hash.values():
        if len(members) < 2:
            continue
        tid = f"T{len(h.templates)}"
        h.templates[tid] = members
        for gid in members:
            groups[gid - n].template = tid


def number_grouped_templates(h: Hierarchy, copy_of: dict[int, int]) -> bool:
    """A first view's partial build (``h.grouped_only`` set): the template ids
    :func:`number_templates` gives the children of the grouped groups, where they can be known
    without the rest of the tree. ``copy_of`` maps each child that may share its structure to
    the first of its exact copies (``copies.copy_classes``); every other child group is proven
    unique (``unique``: no template).

    Ids are numbered in the pre-order of their first member, so a class's id is known while
    the subtree of every group before its first member in pre-order is known: a grouped group's,
    or one that stays flat (:func:`_stays_flat`). Another group not grouped (its subtree as its
    scopes made it) may hold shared structures, and after it no new id can be numbered.

    A group of ``h.whole_subtrees`` (the first of its copies) has every group under it grouped
    and hashed as the whole build does: each of those shares its hash with its counterpart in
    every copy, so each has the id of its hash, numbered at its first member there. Only its own
    class may have an id before it, and no new class of copies may follow it (either might share
    a hash with a group under it, which ``copy_of`` cannot tell).

    Returns False where an id cannot be known (the ids are not set); True with each grouped
    group's children's ``template`` set and ``h.templates`` holding the members seen."""
    n, groups = h.n_ops, h.groups
    ids: dict[tuple, str] = {}  # ("copies", first member) or ("hash", structure hash) -> template id
    unknown = False  # a subtree not grouped has been passed: later ids are unknown
    whole_seen = False  # a whole subtree has been numbered: a later new class of copies is unknown
    stack = [iter(h.root.children)]
    templates: dict[str, list[int]] = {}
    while stack:
        for c in stack[-1]:
            if c < n:
                continue
            g = groups[c - n]
            g.template = None
            if h.under_whole_subtree(c):
                key = ("hash", g.structure_hash)
            else:
                first = copy_of.get(c)
                key = None if first is None else ("copies", first)
            if key is not None:
                if key not in ids:
                    if unknown or (whole_seen and key[0] == "copies"):
                        return False
                    ids[key] = f"T{len(ids)}"
                g.template = ids[key]
                templates.setdefault(g.template, []).append(c)
            if g.name in h.whole_subtrees:
                if list(ids) != [("copies", c)]:
                    return False
                whole_seen = True
            if h.regroups(g):
                stack.append(iter(g.children))
                break
            unknown = unknown or not _stays_flat(h, g)
        else:
            stack.pop()
    h.templates = templates
    return True


def _stays_flat(h: Hierarchy, g) -> bool:
    """Whether no grouping phase makes a group inside ``g``: it holds ops only (scopes, regions
    and inferred scopes group group children), fewer than an op series needs, and no more than a
    split cuts."""
    children, options = g.children, h.options
    return (max(children, default=-1) < h.n_ops and len(children) <= options.split_max_children
            and (options.series_min_size <= 0 or len(children) < options.series_min_size))
