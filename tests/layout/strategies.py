"""Hypothesis strategies: random DAGs and random cyclic multigraphs for the layout."""

from __future__ import annotations

from hypothesis import strategies as st

from tb_graph_plugin.layout import LayoutEdge, LayoutGraph, LayoutNode

sizes = st.sampled_from([(15.0, 6.0), (60.0, 15.0), (60.0, 60.0), (16.0, 13.0), (1.0, 1.0), (33.5, 7.25)])


@st.composite
def graphs(draw, max_nodes: int = 24, acyclic: bool = True):
    n = draw(st.integers(1, max_nodes))
    nodes = [LayoutNode(f"n{i}", *draw(sizes)) for i in range(n)]
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    edges = []
    for a, b in pairs:
        if acyclic:
            if a == b:
                continue
            a, b = min(a, b), max(a, b)
        edges.append(LayoutEdge(f"n{a}", f"n{b}", weight=draw(st.sampled_from([1.0, 1.0, 2.0, 0.5]))))
    return LayoutGraph(nodes, edges)
