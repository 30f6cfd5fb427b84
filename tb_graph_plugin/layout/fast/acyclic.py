"""Cycle removal by reversing the back edges of a depth-first search.

Follows dagre ``acyclic.js`` (DFS feedback arc set) as described in [HCG-LAYOUT]
(see docs/references.md): cycles are broken by reversing edges, never by merging nodes, and the reversed
edges are drawn in their true direction at the end (see ``route``).

Pre: ``src``/``dst`` without self-loops. Post: the graph with ``reversed`` edges flipped
(``src``/``dst`` swapped in place) is acyclic; ``reversed`` marks exactly the flipped
edges; the DFS visits nodes and edges in input order, so the result is deterministic.
"""

from __future__ import annotations

import numpy as np

from tb_graph_plugin.layout.fast.state import LayeredGraph

__all__ = ["remove_cycles"]


def remove_cycles(g: LayeredGraph) -> None:
    n, m = g.n_real, len(g.src)
    order = np.argsort(g.src, kind="stable")
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(g.src, minlength=n), out=starts[1:])
    eorder = order.tolist()
    dst = g.dst.tolist()
    start = starts.tolist()
    state = bytearray(n)  # 0 new, 1 on the DFS stack, 2 done
    back = []
    for root in range(n):
        if state[root]:
            continue
        state[root] = 1
        stack = [root]
        nxt = [start[root]]
        while stack:
            v = stack[-1]
            i = nxt[-1]
            if i < start[v + 1]:
                nxt[-1] = i + 1
                e = eorder[i]
                w = dst[e]
                sw = state[w]
                if sw == 0:
                    state[w] = 1
                    stack.append(w)
                    nxt.append(start[w])
                elif sw == 1:
                    back.append(e)
            else:
                state[v] = 2
                stack.pop()
                nxt.pop()
    if back:
        b = np.array(back, dtype=np.int64)
        g.reversed[b] = True
        g.src[b], g.dst[b] = g.dst[b].copy(), g.src[b].copy()
    del m
