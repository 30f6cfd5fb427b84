"""Hierarchy invariants asserted over real graphs (the post-conditions of every phase)."""

from __future__ import annotations

import re

from tb_graph_plugin.wire import EmbeddingRole
from tb_graph_plugin.hierarchy import Hierarchy


def check_invariants(h: Hierarchy) -> None:
    slim = h.slim
    n = h.n_ops
    # every main op in exactly one leaf position; embeddings beside a main op, in none
    seen: dict[int, int] = {}
    for g in h.groups:
        for c in g.children:
            assert c not in seen, f"{h.name_of(c)} is a child twice"
            seen[c] = g.id
            parent = h.op_parent[c] if c < n else h.groups[c - n].parent
            assert parent == g.id, f"parent pointer of {h.name_of(c)} is wrong"
    for i in range(n):
        if slim.embedding[i] == EmbeddingRole.MAIN:
            assert i in seen, f"main op {slim.names[i]} is not placed"
        else:
            assert i not in seen
            assert slim.embedding[slim.owner[i]] == EmbeddingRole.MAIN
    assert h.root.cardinality == sum(1 for r in slim.embedding if r == EmbeddingRole.MAIN)
    # every base edge in exactly one metaedge, at the LCA; sizes add up
    counted = [0] * slim.n_edges
    for g in h.groups:
        kids = set(g.children)
        for me in g.metaedges:
            assert me.src in kids and me.dst in kids
            assert me.size == sum(slim.edge_size[e] for e in me.base_edges)
            for e in me.base_edges:
                counted[e] += 1
                s, d = slim.edge_src[e], slim.edge_dst[e]
                assert me.src == s or me.src in h.ancestors(s)
                assert me.dst == d or me.dst in h.ancestors(d)
    assert all(c == 1 for c in counted), "a base edge is not in exactly one metaedge"
    # series: members contiguous (consecutive indices) and ordered
    for s in h.series_nodes():
        assert s.indices == list(range(s.indices[0], s.indices[0] + len(s.indices)))
        assert len(s.children) == len(s.indices) >= 2
        for c, k in zip(s.children, s.indices):
            label = h.leaf_name(c)  # the index is in the name (an op's label may be its op type)
            layer = re.sub(r"_\d+$", "", label)  # a Keras 3 trace scope without its uniquifier
            assert re.search(rf"(?<!\d){k}(?!\d)", label) or (k == 0 and not re.search(
                r"\d", layer)) or (k < 26 and re.search(rf"\d{chr(ord('a') + k)}(?![A-Za-z])", label)), (
                label, k)  # a bare "add" is add_0; a letter index (Mixed_6b) counts from a = 0
            assert h.series_of(c) == s.id
    # templates: shared ids only, same hash inside one template
    for tid, members in h.templates.items():
        assert len(members) >= 2
        assert len({h.group(m).structure_hash for m in members}) == 1
        assert all(h.group(m).template == tid for m in members)
    # cardinality adds up
    for g in h.groups:
        assert g.cardinality == sum(h.cardinality(c) for c in g.children)


def lowest_common_group(h: Hierarchy, ops) -> int:
    """The deepest group holding every one of ``ops`` (hierarchy ids), read from the tree."""
    paths = [[*reversed(h.ancestors(op))] for op in ops]
    common = None
    for level in zip(*paths):
        if len(set(level)) != 1:
            break
        common = level[0]
    return common
