"""Long skip edges cut into labelled stubs.

Follows nGraph's visualisation notes ([NGRAPH-VIS]): an edge whose jump distance exceeds K (20) is not
drawn across the whole graph; its source gets a stub "to <target>" and its target a stub
"from <source>". The jump distance here is the edge's span in the longest-path layering of
the group's BridgeGraph (after DFS cycle breaking) - the same quantity the fast path's
layering uses, and a cheap stand-in for nGraph's "difference of heights to a common result".

Pre: a BridgeGraph (LayoutGraph + one FlowEdge per edge). Post: no edge spans more than
``min_span`` layers of that layering; every cut edge became two edges, source -> out-stub and
in-stub -> target, each stub naming the other end (``of``); all other edges are unchanged and
keep their order.
"""

from __future__ import annotations

import numpy as np

from tb_graph_plugin.layout.fast.acyclic import remove_cycles
from tb_graph_plugin.layout.fast.rank import longest_path_heights
from tb_graph_plugin.layout.fast.state import build
from tb_graph_plugin.layout.model import LayoutEdge, LayoutGraph, LayoutNode, LayoutOptions
from tb_graph_plugin.layout.scene.endpoint import BridgeGraph, Stub, StubNode, StubSizer

__all__ = ["cut_long_edges"]


def cut_long_edges(bg: BridgeGraph, min_span: int, stub_size: StubSizer) -> tuple[BridgeGraph, list[StubNode]]:
    """The BridgeGraph with its long edges cut (same bridges), and the stubs made, each as big as
    ``stub_size`` says for its label."""
    graph, meta = bg.graph, bg.edges
    if min_span <= 0 or len(graph.edges) == 0:
        return bg, []
    g = build(graph, LayoutOptions())
    remove_cycles(g)
    h = longest_path_heights(g.n_real, g.src, g.dst)
    span = np.zeros(len(graph.edges), dtype=np.int64)
    span[g.edge_index] = np.abs(h[g.src] - h[g.dst])
    if not (span > min_span).any():
        return bg, []
    nodes = list(graph.nodes)
    edges, new_meta, stubs = [], [], []
    for i, (e, m) in enumerate(zip(graph.edges, meta)):
        if span[i] <= min_span:
            edges.append(e)
            new_meta.append(m)
            continue
        k = len(stubs) // 2
        out_id, in_id = f"s{k}o", f"s{k}i"
        nodes += [LayoutNode(out_id, *stub_size("out", m.target)), LayoutNode(in_id, *stub_size("in", m.source))]
        out_key, in_key = Stub(k, "out"), Stub(k, "in")
        stubs += [StubNode(out_id, out_key, m.target), StubNode(in_id, in_key, m.source)]
        edges += [LayoutEdge(e.source, out_id, e.weight, e.kind), LayoutEdge(in_id, e.target, e.weight, e.kind)]
        new_meta += [m.with_ends(m.source, out_key), m.with_ends(in_key, m.target)]
    return BridgeGraph(LayoutGraph(nodes, edges), new_meta, bg.bridges), stubs
