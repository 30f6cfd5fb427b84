"""A JSON-ready summary of a Hierarchy: what ``tb-graph summary`` prints.

Pre-condition: a built Hierarchy. Post-condition: a dict of plain JSON values with keys
``ops`` (ops in the GraphDef, function library included), ``main_ops``, ``embeddings``,
``edges`` (base edges), ``dangling_inputs`` (inputs naming absent nodes, PyTorch module
references not counted), ``module_references`` (those: ``SlimGraph.split_dangling``, the counts
``/scene``'s stats give), ``graph_breaks`` (ops of type ``graph_break``: torch.compile's), ``top_level`` (root children: ``name``, ``kind``
op|meta|series, ``cardinality``, ``template``, and ``op`` for ops), ``templates`` (template id
-> group names), ``series`` (``name``, ``kind``, ``members``), ``inferred_groups``,
``functions``, ``op_histogram`` and ``timings``.

``cost_summary(h)`` (``tb-graph summary --cost``): ``total`` (the root's ``wire.NodeCost``),
``top_level`` (each root child's, by name) and ``series`` (each SeriesNode's, by name), plain JSON.

``tree(h)`` (``tb-graph summary --tree``) nests every group under its parent: ``name``,
``label``, ``kind`` (meta|series), ``cardinality``, ``ops`` (op children), ``template``,
``inferred`` (``"name"`` from name tokens, ``"dataflow"`` from the children's DAG, or
false), ``series`` (``{"kind": op|block, "members": n}`` for a SeriesNode, else None),
and ``children`` (its child groups, in children order).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tb_graph_plugin.hierarchy.model import Hierarchy, SeriesNode
from tb_graph_plugin.hierarchy.stats import histograms
from tb_graph_plugin.wire import EmbeddingRole

__all__ = ["summarize", "tree", "cost_summary"]


def summarize(h: Hierarchy) -> dict[str, Any]:
    slim = h.slim
    n_main = int(np.count_nonzero(slim.embedding == EmbeddingRole.MAIN))
    dangling, references = slim.split_dangling()
    top = []
    for c in h.root.children:
        entry = {"name": h.name_of(c), "kind": h.kind(c), "cardinality": h.cardinality(c),
                 "template": h.template_of(c)}
        if not h.is_group(c):
            entry["op"] = slim.ops[c]
        top.append(entry)
    series = [
        {"name": g.name, "kind": g.series_kind, "members": [h.name_of(m) for m in g.children]}
        for g in h.walk_groups() if isinstance(g, SeriesNode)
    ]
    return {
        "ops": slim.n_nodes,
        "main_ops": n_main,
        "embeddings": slim.n_nodes - n_main,
        "edges": slim.n_edges,
        "dangling_inputs": len(dangling),
        "module_references": len(references),
        "graph_breaks": slim.ops.count("graph_break"),
        "groups": len(h.groups) - 1,
        "top_level": top,
        "templates": {tid: [h.name_of(g) for g in members] for tid, members in h.templates.items()},
        "series": series,
        "inferred_groups": [g.name for g in h.walk_groups() if g.inferred],
        "functions": sorted(slim.functions),
        "op_histogram": dict(sorted(histograms(h, h.root.id).ops.items(), key=lambda kv: -kv[1])),
        "timings": {**{f"slim.{k}": round(v, 6) for k, v in slim.timings.items()},
                    **{f"hierarchy.{k}": round(v, 6) for k, v in h.timings.items()}},
    }


def tree(h: Hierarchy) -> dict[str, Any]:
    """The group tree from the root, groups only (ops are counted, not listed)."""
    n = h.n_ops

    def entry(g) -> dict[str, Any]:
        return {
            "name": g.name,
            "label": g.label,
            "kind": g.kind,
            "cardinality": g.cardinality,
            "ops": sum(1 for c in g.children if c < n),
            "template": g.template,
            "inferred": g.inferred or False,
            "series": ({"kind": g.series_kind, "members": len(g.children)}
                       if isinstance(g, SeriesNode) else None),
            "children": [entry(h.groups[c - n]) for c in g.children if c >= n],
        }

    return entry(h.root)


def cost_summary(h: Hierarchy) -> dict[str, Any]:
    """The cost of the whole graph, of each top-level node and of each series (``hierarchy.cost``)."""
    from tb_graph_plugin.hierarchy.cost import node_cost
    from tb_graph_plugin.wire import to_plain

    return {
        "total": to_plain(node_cost(h, h.root.id)),
        "top_level": {h.name_of(c): to_plain(node_cost(h, c)) for c in h.root.children},
        "series": {g.name: to_plain(node_cost(h, g.id)) for g in h.walk_groups() if isinstance(g, SeriesNode)},
    }

