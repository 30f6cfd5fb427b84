"""Long-edge dummy chains: every edge spanning k > 1 layers becomes k unit edges through k-1 dummies.

Follows dagre ``normalize.js`` and [HCG-LAYOUT] ("切割长边"): dummies reserve room for
long edges during ordering and become the edge's bend points. A dummy is ``edgesep`` wide
and 0 tall, and belongs to its edge's component. At most ``options.fast_max_dummies``
dummies are made, shortest edges first; longer edges stay single straight segments that
take no part in ordering (the fast path stays linear when a hub has thousands of long
edges; the hierarchy's stubs and extraction should have removed most of them anyway).

Pre: ``layer`` set, ``layer[dst] > layer[src]``. Post: ``usrc``/``udst`` hold only unit
edges (``layer[udst] == layer[usrc] + 1``), one chain per edge except the over-budget ones;
the dummies of kept edge i are ``first_dummy[i] .. first_dummy[i] + n_dummies[i] - 1``,
from ``src[i]`` upwards in layer order; node arrays are extended to the dummies.
"""

from __future__ import annotations

import numpy as np

from tb_graph_plugin.layout.fast.state import LayeredGraph

__all__ = ["insert_dummies"]


def insert_dummies(g: LayeredGraph) -> None:
    layer = g.layer
    span = layer[g.dst] - layer[g.src]
    n0 = g.n_real
    # vectorised: dummy ids of edge i are first[i] .. first[i] + span[i] - 2
    extra = np.maximum(span - 1, 0)
    if int(extra.sum()) > g.options.fast_max_dummies:
        by_len = np.argsort(extra, kind="stable")
        over = by_len[np.cumsum(extra[by_len]) > g.options.fast_max_dummies]
        long_edge = np.zeros(len(span), dtype=bool)
        long_edge[over] = True
        extra = np.where(long_edge, 0, extra)
    else:
        long_edge = np.zeros(len(span), dtype=bool)
    n_dummy = int(extra.sum())
    first = n0 + np.concatenate([[0], np.cumsum(extra)[:-1]]) if len(span) else np.zeros(0, np.int64)
    edge_of_dummy = np.repeat(np.arange(len(span)), extra)
    step = np.arange(n_dummy) - np.repeat(first - n0, extra) + 1  # 1..span-1
    d_layer = layer[g.src][edge_of_dummy] + step
    g.layer = np.concatenate([layer, d_layer]).astype(np.int64)
    g.comp = np.concatenate([g.comp, g.comp[g.src][edge_of_dummy]])
    g.across = np.concatenate([g.across, np.full(n_dummy, g.options.edgesep)])
    g.along = np.concatenate([g.along, np.zeros(n_dummy)])
    # flat node sequences [src, dummies..., dst] per edge; consecutive pairs are unit edges
    seg_len = extra + 2
    seg_start = (np.cumsum(seg_len) - seg_len).astype(np.int64)
    total = int(seg_len.sum())
    edge_of = np.repeat(np.arange(len(span)), seg_len)
    j = np.arange(total) - seg_start[edge_of]
    flat = np.where(j == 0, g.src[edge_of], np.where(j == seg_len[edge_of] - 1, g.dst[edge_of], first[edge_of] + j - 1))
    link = np.ones(total, dtype=bool)
    link[seg_start] = False  # no unit edge into the first node of a sequence
    link &= ~long_edge[edge_of]
    g.usrc = flat[np.flatnonzero(link) - 1]
    g.udst = flat[link]
    g.uweight = g.weight[edge_of[link]]
    g.first_dummy = first
    g.n_dummies = extra
    g.straight = long_edge
