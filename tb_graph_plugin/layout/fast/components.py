"""Connected components of the layered graph (weak connectivity).

Pre: ``src``/``dst`` over real nodes. Post: ``comp[v]`` in ``0..n_comp-1``; both ends of
every edge share a component; component ids follow the smallest node index in them, so
input order decides the packing order. Each component is laid out on its own and packed
by :mod:`~tb_graph_plugin.layout.fast.pack` (as dot's ``pack`` and dagre-less igraph do).
"""

from __future__ import annotations

import numpy as np

from tb_graph_plugin.layout.fast.state import LayeredGraph

__all__ = ["find_components"]


def find_components(g: LayeredGraph) -> None:
    # imported on first use (~0.15 s): a first view laid out by dot alone need not wait for it
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = g.n_real
    adj = coo_matrix((np.ones(len(g.src)), (g.src, g.dst)), shape=(n, n)).tocsr()
    n_comp, labels = connected_components(adj, directed=True, connection="weak")
    # renumber by first occurrence so comp ids follow node order
    first = np.full(n_comp, n, dtype=np.int64)
    np.minimum.at(first, labels, np.arange(n))
    remap = np.empty(n_comp, dtype=np.int64)
    remap[np.argsort(first, kind="stable")] = np.arange(n_comp)
    g.comp = remap[labels]
    g.n_comp = int(n_comp)
